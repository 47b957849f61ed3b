# ActiveRecord 6.1 (Debian ruby-activerecord, ruby-pg) doing a Rails app's first steps
# against the server at ARGV (host port user database), without Rails itself: migrations
# run by a MigrationContext (advisory lock, schema_migrations, ar_internal_metadata), one
# rolled back and run again, models, errors, a schema dump loaded back. Prints one JSON
# line that tests/tools/test_activerecord.py compares with what PostgreSQL 15 gives; a
# step that fails records its error class and SQLSTATE and the script goes on.
require "json"
require "stringio"
require "tmpdir"
require "bigdecimal"
require "active_record"
require "active_record/fixtures"

host, port, user, database = ARGV
OUT = {}

def step(name)
  OUT[name] = yield
rescue StandardError => e
  cause = e.respond_to?(:cause) && e.cause
  state = cause.respond_to?(:result) && cause.result ? cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE) : nil
  OUT[name] = ["error", e.class.name, state, e.message.lines.map(&:strip).reject(&:empty?).first(3).join(" ")[0, 400]]
end

ActiveRecord::Base.establish_connection(
  adapter: "postgresql", host: host, port: port.to_i, username: user, database: database,
)
ActiveRecord::Base.default_timezone = :utc
ActiveRecord::Migration.verbose = false
CONN = ActiveRecord::Base.connection
# A second run against the same database starts from nothing (DROP TABLE IF EXISTS CASCADE).
%w[labels old_labels books_publishers reviews books publishers authors schema_migrations ar_internal_metadata].each do |t|
  CONN.drop_table(t, if_exists: true, force: :cascade)
end

MIGRATIONS = {
  "20240101000001_create_authors_and_books.rb" => <<~RUBY,
    class CreateAuthorsAndBooks < ActiveRecord::Migration[6.1]
      def change
        create_table :authors do |t|
          t.string :name, limit: 100, null: false
          t.string :email
          t.timestamps
        end
        add_index :authors, :email, unique: true
        create_table :books do |t|
          t.references :author, null: false, foreign_key: true
          t.string :title, null: false
          t.decimal :price, precision: 8, scale: 2
          t.jsonb :metadata, default: {}
          t.string :tags, array: true, default: []
          t.integer :status, default: 0, null: false
          t.timestamps
        end
        add_index :books, [:author_id, :title], unique: true
      end
    end
  RUBY
  "20240101000002_reviews_and_changes.rb" => <<~RUBY,
    class ReviewsAndChanges < ActiveRecord::Migration[6.1]
      def change
        create_table :reviews do |t|
          t.bigint :book_id, null: false
          t.integer :stars, default: 3
          t.text :body
        end
        add_foreign_key :reviews, :books, on_delete: :cascade
        add_index :reviews, :book_id
        add_column :books, :isbn, :string, limit: 20
        rename_column :books, :title, :headline
        change_column_default :books, :status, from: 0, to: 1
        add_column :authors, :legacy, :integer, default: 7
        add_column :books, :reading_time, :interval
      end
    end
  RUBY
  "20240101000003_remove_legacy.rb" => <<~RUBY,
    class RemoveLegacy < ActiveRecord::Migration[6.1]
      def change
        remove_column :authors, :legacy, :integer, default: 7
        change_column_null :books, :price, false, 0
      end
    end
  RUBY
  "20240101000004_more_tables.rb" => <<~RUBY,
    class MoreTables < ActiveRecord::Migration[6.1]
      def change
        enable_extension "pgcrypto"
        create_table :publishers, id: :uuid do |t|
          t.string :name, null: false
          t.integer :lock_version, default: 0, null: false
          t.integer :books_count, default: 0, null: false
        end
        create_table :old_labels do |t|
          t.string :title
          t.references :labelable, polymorphic: true
        end
        create_table :books_publishers, id: false do |t|
          t.references :book, null: false, index: false
          t.references :publisher, type: :uuid, null: false, index: false
          t.index [:book_id, :publisher_id], unique: true
        end
        add_reference :books, :publisher, type: :uuid, foreign_key: true
        reversible do |dir|
          dir.up { change_column :books, :isbn, :string, limit: 40 }
          dir.down { change_column :books, :isbn, :string, limit: 20 }
        end
        add_check_constraint :reviews, "stars BETWEEN 1 AND 5", name: "stars_range"
        add_index :books, :isbn, where: "isbn IS NOT NULL", name: "index_books_on_isbn_partial"
      end
    end
  RUBY
}.freeze

class Author < ActiveRecord::Base
  has_many :books, dependent: :destroy
end

class Book < ActiveRecord::Base
  belongs_to :author
  has_many :reviews
  enum status: { draft: 0, published: 1, archived: 2 }
end

class Review < ActiveRecord::Base
  belongs_to :book
end

class Publisher < ActiveRecord::Base
  has_many :books
  has_and_belongs_to_many :catalogue, class_name: "Book", join_table: "books_publishers"
end

class Label < ActiveRecord::Base
  self.table_name = "old_labels" # renamed at the end (rename_table)
  belongs_to :labelable, polymorphic: true
end

Book.belongs_to :publisher, optional: true, counter_cache: true
Book.has_many :labels, as: :labelable

def rows(relation)
  relation.map { |r| r.attributes.except("created_at", "updated_at") }
end

def dump
  io = StringIO.new
  ActiveRecord::SchemaDumper.dump(CONN, io)
  io.string
end

Dir.mktmpdir do |dir|
  MIGRATIONS.each { |file, text| File.write(File.join(dir, file), text) }
  context = ActiveRecord::MigrationContext.new(dir, ActiveRecord::SchemaMigration)
  step("server") { [CONN.adapter_name, CONN.database_version >= 100000, CONN.active?] }
  step("needs_migration") { context.needs_migration? }
  step("migrate") do
    context.migrate
    [context.current_version, ActiveRecord::SchemaMigration.all_versions]
  end
  step("internal_metadata") do
    [ActiveRecord::InternalMetadata[:environment], ActiveRecord::InternalMetadata.table_exists?]
  end
  step("rollback") do
    context.rollback(2)
    v = context.current_version
    cols = CONN.columns(:authors).map(&:name)
    [v, cols, CONN.column_exists?(:books, :title), CONN.foreign_keys(:reviews).size]
  end
  step("migrate_again") do
    context.migrate
    [context.current_version, context.needs_migration?, CONN.tables.sort]
  end
  step("columns") do
    %w[authors books reviews publishers old_labels].to_h do |t|
      [t, CONN.columns(t).map { |c| [c.name, c.sql_type, c.type.to_s, c.null, c.default, c.limit, c.precision, c.scale, c.array?] }]
    end
  end
  step("indexes") do
    %w[authors books reviews].to_h do |t|
      [t, CONN.indexes(t).map { |i| [i.name, i.columns, i.unique] }.sort]
    end
  end
  step("foreign_keys") do
    %w[books reviews].to_h do |t|
      [t, CONN.foreign_keys(t).map { |f| [f.to_table, f.column, f.primary_key, f.on_delete.to_s] }]
    end
  end
  step("primary_keys") { %w[authors books publishers old_labels books_publishers].map { |t| CONN.primary_key(t) } }
  step("extensions") { [CONN.extension_enabled?("pgcrypto"), CONN.extension_available?("uuid-ossp"), CONN.extensions] }
  step("more_tables") do
    [CONN.columns(:publishers).map { |c| [c.name, c.default_function] },
     CONN.columns(:books_publishers).map { |c| [c.name, c.sql_type, c.null] },
     CONN.indexes(:old_labels).map { |i| [i.name, i.columns] }.sort,
     CONN.columns(:books).find { |c| c.name == "isbn" }.limit,
     CONN.pk_and_sequence_for(:old_labels).map(&:to_s),
     CONN.data_source_exists?(:books), CONN.views, CONN.index_name_exists?(:books, "index_books_on_isbn_partial")]
  end
  step("partial_index") { CONN.indexes(:books).map { |i| [i.name, i.where] }.sort }
  step("check_constraints") { CONN.check_constraints(:reviews).map { |c| [c.name, c.expression] } }
end

[Author, Book, Review, Publisher, Label].each(&:reset_column_information)

step("create") do
  ann = Author.create!(name: "Ann", email: "ann@example.com")
  bob = Author.create!(name: "Bob", email: "bob@example.com")
  b1 = ann.books.create!(headline: "One", price: BigDecimal("12.50"), metadata: { "n" => 1, "tags" => ["a"] }, tags: %w[x y],
                         reading_time: 1.day + 2.hours + 30.minutes + 1.5.seconds)
  b2 = ann.books.create!(headline: "Two", price: 0, status: :draft)
  b3 = bob.books.create!(headline: "Three", price: BigDecimal("0.99"), status: :archived)
  b1.reviews.create!(stars: 5, body: "great")
  b1.reviews.create!(body: "ok")
  b3.reviews.create!(stars: 1, body: "meh")
  [ann.id, bob.id, b1.id, b2.id, b3.id, b1.status, b2.status, Book.new.status, Book.new.tags, Book.new.metadata]
end
step("find") do
  b = Book.find_by!(headline: "One")
  [b.headline, b.price.to_s, b.metadata, b.tags, b.author.name, b.published?, b.created_at.class.name, Author.find(2).name]
end
step("interval") do  # the connection's IntervalStyle is iso_8601
  b = Book.find_by!(headline: "One")
  b.update!(reading_time: b.reading_time + 1.hour)
  [b.reload.reading_time.iso8601, Book.where(reading_time: nil).count,
   CONN.select_value("SELECT reading_time * 2 FROM books WHERE id = #{b.id}"),
   CONN.select_value("SHOW IntervalStyle")]
end
step("interval_text") do
  CONN.select_value("SELECT (reading_time * 2)::text FROM books WHERE headline = 'One'")
end
step("where") do
  [
    Book.where(status: :published).order(:id).pluck(:headline),
    Book.where("price > ?", 1).pluck(:headline),
    Book.where(price: 0..1).order(:headline).pluck(:headline),
    Book.where.not(status: :draft).count,
    Author.where(email: nil).exists?,
    Book.where("tags @> ARRAY[?]::varchar[]", "x").pluck(:headline),
    Book.where("metadata->>'n' = ?", "1").pluck(:headline),
  ]
end
step("joins") do
  Book.joins(:author).where(authors: { name: "Ann" }).order("books.id").pluck("books.headline", "authors.name")
end
step("includes") do
  Author.includes(:books).order(:id).map { |a| [a.name, a.books.map(&:headline).sort] }
end
step("eager_load") do
  Author.eager_load(books: :reviews).order("authors.id", "books.id", "reviews.id").map do |a|
    [a.name, a.books.map { |b| [b.headline, b.reviews.map(&:stars)] }]
  end
end
step("pluck") { [Author.order(:name).pluck(:name, :email), Book.distinct.order(:author_id).pluck(:author_id)] }
step("group_count") do
  [Book.group(:status).order(:status).count, Review.group(:book_id).order(:book_id).count,
   Book.joins(:author).group("authors.name").order("authors.name").sum(:price).transform_values(&:to_s)]
end
step("aggregates") { [Book.maximum(:price).to_s, Book.minimum(:id), Review.average(:stars).round(4).to_s, Book.sum(:price).to_s] }
step("enum") do
  b = Book.find_by!(headline: "Two")
  b.published!
  [b.reload.status, Book.published.order(:id).pluck(:id), Book.statuses, Book.archived.count]
end
step("update") do
  b = Book.find_by!(headline: "One")
  b.update!(price: BigDecimal("13.75"), tags: b.tags + ["z"], metadata: b.metadata.merge("m" => [1, 2]))
  n = Book.where(author_id: 1).update_all("price = price + 1")
  Author.find_by!(name: "Bob").touch
  b.reload
  [n, b.price.to_s, b.tags, b.metadata, b.updated_at >= b.created_at]
end
step("transaction_rollback") do
  Author.transaction do
    Author.create!(name: "Temp")
    Book.create!(author_id: 1, headline: "Temp book", price: 1)
    raise ActiveRecord::Rollback
  end
  [Author.count, Book.count]
end
step("nested_transaction") do
  Author.transaction do
    Author.create!(name: "Outer")
    begin
      Author.transaction(requires_new: true) do
        Author.create!(name: "Inner")
        Author.create!(name: "Dup", email: "ann@example.com")
      end
    rescue ActiveRecord::RecordNotUnique
      nil
    end
  end
  Author.order(:id).pluck(:name)
end
step("not_unique") do
  Author.create!(name: "Again", email: "ann@example.com")
  "created"
rescue ActiveRecord::RecordNotUnique => e
  [e.class.name, e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)]
end
step("not_unique_composite") do
  Book.create!(author_id: 1, headline: "One", price: 1)
  "created"
rescue ActiveRecord::RecordNotUnique => e
  [e.class.name, e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)]
end
step("invalid_foreign_key") do
  Book.create!(author_id: 999, headline: "Orphan", price: 1)
  "created"
rescue ActiveRecord::InvalidForeignKey => e
  [e.class.name, e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)]
end
step("not_null") do
  Book.create!(author_id: 1, headline: nil, price: 1)
  "created"
rescue ActiveRecord::NotNullViolation => e
  [e.class.name, e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)]
end
step("usable_after_errors") { Author.count }
step("check_violation") do
  Review.create!(book_id: Book.first.id, stars: 9)
  "created"
rescue ActiveRecord::StatementInvalid => e
  [e.class.name, e.cause.class.name, e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)]
end
step("uuid_habtm_polymorphic") do
  pub = Publisher.create!(name: "Acme")
  b = Book.find_by!(headline: "One")
  b.update!(publisher: pub)
  pub.catalogue << b
  pub.catalogue << Book.find_by!(headline: "Three")
  b.labels.create!(title: "hot")
  Label.create!(title: "author label", labelable: b.author)
  [pub.id.match?(/\A\h{8}-\h{4}-\h{4}-\h{4}-\h{12}\z/), pub.reload.books_count,
   pub.catalogue.order(:id).pluck(:headline), Publisher.joins(:catalogue).distinct.count,
   Label.order(:id).map { |l| [l.title, l.labelable_type, l.labelable.class.name] },
   Label.where(labelable: b).count]
end
step("optimistic_lock") do
  a = Publisher.first
  b = Publisher.first
  a.update!(name: "Acme 2")
  begin
    b.update!(name: "Acme 3")
    "saved"
  rescue ActiveRecord::StaleObjectError => e
    [e.class.name, Publisher.first.name, Publisher.first.lock_version]
  end
end
step("lock") do
  Review.transaction do
    r = Review.lock.find_by!(body: "ok")
    r.with_lock { r.increment!(:stars) }
    [r.reload.stars, Review.lock("FOR UPDATE SKIP LOCKED").where(id: r.id).pluck(:stars)]
  end
end
step("counters") do
  r = Review.order(:id).first
  Review.update_counters(r.id, stars: -2)
  Review.increment_counter(:stars, r.id)
  r.increment!(:stars)
  [r.reload.stars, Review.where(id: r.id).pick(:stars)]
end
step("find_each") do
  seen = []
  Book.find_each(batch_size: 2) { |b| seen << b.id }
  batches = []
  Review.in_batches(of: 2) { |rel| batches << rel.pluck(:id) }
  [seen, batches]
end
step("insert_all") do
  r = Author.insert_all(
    [{ name: "Cy", email: "cy@example.com", created_at: Time.utc(2024, 1, 1), updated_at: Time.utc(2024, 1, 1) },
     { name: "Di", email: "ann@example.com", created_at: Time.utc(2024, 1, 1), updated_at: Time.utc(2024, 1, 1) }],
    returning: %w[id name],
  )
  [r.rows, Author.count]
end
step("upsert_all") do
  r = Author.upsert_all(
    [{ name: "Cy2", email: "cy@example.com", created_at: Time.utc(2024, 1, 1), updated_at: Time.utc(2024, 1, 2) },
     { name: "Ed", email: "ed@example.com", created_at: Time.utc(2024, 1, 1), updated_at: Time.utc(2024, 1, 2) }],
    unique_by: :email, returning: %w[name email],
  )
  [r.rows, Author.where(email: "cy@example.com").pluck(:name), Author.count]
end
step("destroy_dependent") do
  ann = Author.find_by!(name: "Ann")
  ann.destroy
  [ann.destroyed?, Book.count, Review.count, Book.pluck(:headline), Author.exists?(ann.id)]
end
step("delete_all") { [Review.where(stars: 1).delete_all, Review.count] }
step("fixtures") do # what `rails test` does first: DISABLE TRIGGER ALL, DELETE, INSERT, setval
  Dir.mktmpdir do |dir|
    File.write(File.join(dir, "authors.yml"), <<~YAML)
      zed:
        name: Zed
        email: zed@example.com
      yan:
        name: Yan
    YAML
    File.write(File.join(dir, "books.yml"), <<~YAML)
      zbook:
        id: 200
        author: zed
        headline: Zed's book
        price: 1.25
        status: archived
        tags: [a, b]
        metadata: {"k": "v"}
    YAML
    ActiveRecord::FixtureSet.reset_cache
    ActiveRecord::FixtureSet.create_fixtures(dir, %w[authors books], { "authors" => Author, "books" => Book })
  end
  a = Author.create!(name: "After fixtures")
  [Author.order(:name).pluck(:name), Book.pluck(:id, :headline, :status, :tags, :metadata),
   Book.find(200).author.name, a.id > 100, Author.where(name: "Yan").pick(:id) == ActiveRecord::FixtureSet.identify(:yan),
   Book.create!(author: a, headline: "After fixtures", price: 1).id]
end
step("raw") do
  [CONN.select_value("SELECT current_setting('server_version_num')::int >= 100000"),
   CONN.select_rows("SELECT 1 + 1, 'a' || 'b', NULL"),
   CONN.exec_query("SELECT $1::int * 2 AS x", "SQL", [ActiveRecord::Relation::QueryAttribute.new("x", 21, ActiveRecord::Type::Integer.new)]).rows]
end
step("schema_dump") { dump }
step("schema_load") do  # what `rails db:schema:load` does with db/schema.rb
  text = dump
  eval(text, binding, "schema.rb") # rubocop:disable Security/Eval
  [dump == text, Author.count, ActiveRecord::SchemaMigration.all_versions]
end

step("rename_table") do # ALTER TABLE, then ALTER INDEX of its primary key, its sequence, its indexes
  CONN.rename_table(:old_labels, :labels)
  [CONN.table_exists?(:labels), CONN.table_exists?(:old_labels), CONN.indexes(:labels).map(&:name),
   CONN.pk_and_sequence_for(:labels).map(&:to_s)]
end

# Last: PostgreSQLDatabaseTasks (rails db:create / db:drop) reconnects the models' connection
# to the `postgres` database.
step("database_tasks") do
  config = ActiveRecord::DatabaseConfigurations::HashConfig.new(
    "test", "primary",
    { "adapter" => "postgresql", "host" => host, "port" => port.to_i, "username" => user,
      "database" => "ar_tasks_db", "encoding" => "utf8" },
  )
  tasks = ActiveRecord::Tasks::PostgreSQLDatabaseTasks.new(config)
  out = []
  tasks.create
  begin
    tasks.create
  rescue ActiveRecord::DatabaseAlreadyExists => e
    out << e.class.name
  end
  fresh = PG.connect(host: host, port: port.to_i, user: user, dbname: "ar_tasks_db")
  out << fresh.exec("SELECT current_database(), count(*) FROM information_schema.tables " \
                    "WHERE table_schema = 'public'").values
  fresh.close
  tasks.drop
  out << ActiveRecord::Base.connection.select_values(
    "SELECT datname FROM pg_database WHERE datname LIKE 'ar_tasks%'",
  )
  tasks.drop # DROP DATABASE IF EXISTS: nothing to drop
  out
end

puts JSON.generate(OUT)
