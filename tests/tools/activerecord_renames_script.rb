# ActiveRecord 6.1 migrations that rename, change and remove on tables with rows and a view
# over them (rename_column, change_column of a string limit and a type, change_column_null,
# rename_table with its key, sequence and index, remove_column of an indexed column and of
# one before a unique one), migrated up, rolled back to the first and up again, against the
# server at ARGV (host port user database). Prints one JSON line: per step the rows, the
# columns, the indexes, the view's rows (tests/tools/test_activerecord_renames.py compares
# it with PostgreSQL 15's); a failed step records its error class, SQLSTATE and message.
require "json"
require "tmpdir"
require "active_record"

host, port, user, database = ARGV
OUT = { "steps" => [] }

ActiveRecord::Base.establish_connection(
  adapter: "postgresql", host: host, port: port.to_i, username: user, database: database,
)
ActiveRecord::Migration.verbose = false
CONN = ActiveRecord::Base.connection
CONN.execute("DROP VIEW IF EXISTS ar_rn_view")
%w[ar_rn_goods ar_rn_items schema_migrations ar_internal_metadata].each do |t|
  CONN.drop_table(t, if_exists: true, force: :cascade)
end

MIGRATIONS = {
  "20240201000001_items.rb" => <<~RUBY,
    class Items < ActiveRecord::Migration[6.1]
      def change
        create_table :ar_rn_items do |t|
          t.string :name, limit: 20, null: false
          t.integer :qty
          t.string :sku, limit: 10
          t.string :code, limit: 8
        end
        add_index :ar_rn_items, :sku
        add_index :ar_rn_items, :code, unique: true
        reversible do |dir|
          dir.up do
            execute "INSERT INTO ar_rn_items (name, qty, sku, code) VALUES " \\
                    "('apple', 3, 's1', 'a'), ('pear', NULL, 's2', 'p'), ('fig', 7, NULL, 'f')"
            execute "CREATE VIEW ar_rn_view AS SELECT id, name FROM ar_rn_items"
          end
          dir.down { execute "DROP VIEW IF EXISTS ar_rn_view" }
        end
      end
    end
  RUBY
  "20240201000002_rename_column.rb" => <<~RUBY,
    class RenameColumn < ActiveRecord::Migration[6.1]
      def change
        rename_column :ar_rn_items, :name, :title
      end
    end
  RUBY
  "20240201000003_change_columns.rb" => <<~RUBY,
    class ChangeColumns < ActiveRecord::Migration[6.1]
      def up
        change_column :ar_rn_items, :sku, :string, limit: 40
        change_column :ar_rn_items, :qty, :bigint
        change_column_null :ar_rn_items, :qty, false, 0
      end

      def down
        change_column_null :ar_rn_items, :qty, true
        change_column :ar_rn_items, :qty, :integer
        change_column :ar_rn_items, :sku, :string, limit: 10
      end
    end
  RUBY
  "20240201000004_rename_table.rb" => <<~RUBY,
    class RenameTable < ActiveRecord::Migration[6.1]
      def change
        rename_table :ar_rn_items, :ar_rn_goods
      end
    end
  RUBY
  "20240201000005_remove_columns.rb" => <<~RUBY,
    class RemoveColumns < ActiveRecord::Migration[6.1]
      def change
        remove_column :ar_rn_goods, :sku, :string, limit: 40
        remove_column :ar_rn_goods, :qty, :bigint, null: false, default: 0
      end
    end
  RUBY
}.freeze

def query(sql)
  CONN.select_rows(sql)
rescue StandardError => e
  cause = e.respond_to?(:cause) && e.cause
  state = cause.respond_to?(:result) && cause.result ? cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE) : nil
  ["error", state]
end

def state(label)
  tables = CONN.tables.grep(/\Aar_rn/).sort
  step = { "label" => label, "tables" => tables }
  tables.each do |t|
    step[t] = query("SELECT * FROM #{t} ORDER BY id")
    step["#{t}_columns"] = CONN.columns(t).map { |c| [c.name, c.sql_type, c.null, c.default] }
    step["#{t}_indexes"] = CONN.indexes(t).map { |i| [i.name, i.columns, i.unique] }.sort
    step["#{t}_pk"] = [CONN.primary_key(t), CONN.pk_and_sequence_for(t)&.last&.to_s]
  end
  step["view"] = query("SELECT * FROM ar_rn_view ORDER BY id")
  OUT["steps"] << step
end

Dir.mktmpdir do |dir|
  MIGRATIONS.each { |file, text| File.write(File.join(dir, file), text) }
  context = ActiveRecord::MigrationContext.new(dir, ActiveRecord::SchemaMigration)
  [[:up, 20240201000001], [:up, 20240201000002], [:up, 20240201000003], [:up, 20240201000004],
   [:up, 20240201000005], [:down, 20240201000001], [:up, nil]].each do |direction, version|
    label = "#{direction} #{version}"
    begin
      direction == :up ? context.migrate(version) : context.down(version)
      state(label)
    rescue StandardError => e
      OUT["steps"] << { "label" => label, "error" => e.message.lines.first(3).join(" ")[0, 400] }
      break
    end
  end
  begin # a row through the renamed table: its sequence still counts on
    CONN.execute("INSERT INTO ar_rn_goods (title, code) VALUES ('kiwi', 'k')")
    OUT["after"] = query("SELECT id, title, code FROM ar_rn_goods ORDER BY id")
  rescue StandardError => e
    OUT["after"] = e.message.lines.first
  end
end

puts JSON.generate(OUT)
