<?php
// PHP's PDO pgsql and Doctrine DBAL 3.6 (Debian php-pgsql, php-doctrine-dbal) doing what a
// Laravel / Symfony application does, against the server at $argv (host port user
// database): PDO directly (server-side and emulated prepares, fetch modes, column
// metadata, lastInsertId, transactions, errors, bytea / boolean / NULL / large text, COPY),
// then DBAL (schema manager introspection, a Schema created with toSql(), a compared and
// migrated schema, QueryBuilder, transactional, typed parameters). Prints one JSON line
// that tests/tools/test_doctrine.py compares with what PostgreSQL 15 gives; a step that
// fails records its exception class, SQLSTATE and first message line, and the script goes on.
declare(strict_types=1);

require '/usr/share/php/Doctrine/DBAL/autoload.php';

use Doctrine\DBAL\ArrayParameterType;
use Doctrine\DBAL\Connection;
use Doctrine\DBAL\DriverManager;
use Doctrine\DBAL\ParameterType;
use Doctrine\DBAL\Schema\Column;
use Doctrine\DBAL\Schema\Schema;
use Doctrine\DBAL\Schema\Table;
use Doctrine\DBAL\Types\Type;
use Doctrine\DBAL\Types\Types;

[, $host, $port, $user, $database] = $argv;
$OUT = [];

function step(string $name, callable $fn): void
{
    global $OUT;
    try {
        $OUT[$name] = $fn();
    } catch (Throwable $e) {
        $state = null;
        if ($e instanceof PDOException) {
            $state = $e->errorInfo[0] ?? $e->getCode();
        } elseif ($e instanceof Doctrine\DBAL\Exception\DriverException) {
            $state = $e->getSQLState();
        }
        $OUT[$name] = ['error', get_class($e), $state, substr(strtok($e->getMessage(), "\n"), 0, 400)];
    }
}

// the first line of a server error as PDO reports it ("SQLSTATE[23505]: ...: 7 ERROR:  ...")
function error_of(PDOException $e): array
{
    return [$e->errorInfo[0], strtok($e->errorInfo[2] ?? '', "\n")];
}

$pdo = new PDO("pgsql:host=$host;port=$port;dbname=$database", $user, '');
$pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
foreach (['pdo_items', 'pdo_files', 'pdo_copy', 'dc_tags', 'dc_posts', 'dc_users', 'dc_ident', 'dc_posts_view'] as $t) {
    $kind = $t === 'dc_posts_view' ? 'VIEW' : 'TABLE';
    $pdo->exec("DROP $kind IF EXISTS $t CASCADE");
}
$pdo->exec('DROP SEQUENCE IF EXISTS dc_counter');

// ---------------------------------------------------------------- PDO
step('pdo_attributes', fn () => [
    $pdo->getAttribute(PDO::ATTR_DRIVER_NAME),
    version_compare($pdo->getAttribute(PDO::ATTR_SERVER_VERSION), '10', '>='),
    $pdo->getAttribute(PDO::ATTR_EMULATE_PREPARES),
]);
step('pdo_create', function () use ($pdo) {
    $pdo->exec('CREATE TABLE pdo_items (id serial PRIMARY KEY, name varchar(40) NOT NULL UNIQUE,
        price numeric(8,2), qty integer DEFAULT 0, ok boolean, note text, born date,
        seen timestamp, big bigint, ratio double precision, meta jsonb)');
    return $pdo->exec("INSERT INTO pdo_items (name, price, qty, ok) VALUES ('seed', 1.50, 3, true)");
});
step('pdo_positional', function () use ($pdo) {
    $st = $pdo->prepare('INSERT INTO pdo_items (name, price, qty, ok, note, born) VALUES (?, ?, ?, ?, ?, ?)');
    $st->execute(['apple', '2.25', 5, 'true', null, '2024-02-29']);
    $st->bindValue(1, 'pear');
    $st->bindValue(2, '3.10');
    $st->bindValue(3, 7, PDO::PARAM_INT);
    $st->bindValue(4, false, PDO::PARAM_BOOL);
    $st->bindValue(5, 'ripe', PDO::PARAM_STR);
    $st->bindValue(6, null, PDO::PARAM_NULL);
    $st->execute();
    return [$st->rowCount(), $pdo->lastInsertId('pdo_items_id_seq'), $pdo->lastInsertId()];
});
step('pdo_named', function () use ($pdo) {
    $st = $pdo->prepare('SELECT id, name, price, qty, ok, note, born FROM pdo_items WHERE qty >= :min AND name <> :skip ORDER BY id');
    $st->execute([':min' => 3, ':skip' => 'nothing']);
    $rows = $st->fetchAll(PDO::FETCH_ASSOC);
    $st->bindValue(':min', 6, PDO::PARAM_INT);
    $st->bindValue(':skip', 'apple');
    $st->execute();
    return [$rows, $st->fetchAll(PDO::FETCH_NUM)];
});
step('pdo_emulated', function () use ($pdo) {
    $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
    try {
        $st = $pdo->prepare("SELECT name, qty * :k AS scaled, :s::text AS s FROM pdo_items WHERE id = :id");
        $st->execute([':k' => 10, ':s' => "it's", ':id' => 1]);
        $a = $st->fetch(PDO::FETCH_ASSOC);
        $st = $pdo->prepare('SELECT count(*) FROM pdo_items WHERE name IN (?, ?)');
        $st->execute(['apple', 'pear']);
        return [$a, $st->fetchColumn()];
    } finally {
        $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
    }
});
step('pdo_reuse', function () use ($pdo) {  // one server-side statement executed many times
    $st = $pdo->prepare('SELECT name FROM pdo_items WHERE id = ?');
    $names = [];
    foreach ([1, 2, 3, 99] as $id) {
        $st->execute([$id]);
        $names[] = $st->fetchColumn();
    }
    return $names;
});
step('pdo_fetch_modes', function () use ($pdo) {
    $q = 'SELECT id, name FROM pdo_items ORDER BY id';
    $obj = $pdo->query($q)->fetch(PDO::FETCH_OBJ);
    return [
        $pdo->query($q)->fetchAll(PDO::FETCH_KEY_PAIR),
        $pdo->query($q)->fetchAll(PDO::FETCH_COLUMN, 1),
        $pdo->query($q)->fetch(PDO::FETCH_BOTH),
        [$obj->id, $obj->name],
        $pdo->query('SELECT qty, name FROM pdo_items ORDER BY id')->fetchAll(PDO::FETCH_GROUP | PDO::FETCH_COLUMN),
        $pdo->query($q)->columnCount(),
    ];
});
step('pdo_types', function () use ($pdo) {
    $pdo->exec("UPDATE pdo_items SET seen = '2024-01-02 03:04:05.5', big = 9007199254740993,
        ratio = 0.25, meta = '{\"a\": [1, 2]}' WHERE id = 1");
    $row = $pdo->query('SELECT id, name, price, qty, ok, note, born, seen, big, ratio, meta,
        1::smallint AS s, 2.5::real AS r, NULL AS n, ARRAY[1,2] AS arr FROM pdo_items WHERE id = 1')->fetch(PDO::FETCH_ASSOC);
    return array_map(fn ($v) => [gettype($v), $v], $row);
});
step('pdo_column_meta', function () use ($pdo) {
    $st = $pdo->query('SELECT id, name, price, qty, ok, note, born, seen, big, ratio, meta,
        1::smallint AS s, NULL::bytea AS b FROM pdo_items LIMIT 1');
    $out = [];
    for ($i = 0; $i < $st->columnCount(); $i++) {
        $m = $st->getColumnMeta($i);
        $out[] = [$m['name'], $m['native_type'], $m['pgsql:oid'], $m['len'], $m['precision'],
            $m['pdo_type'], $m['table'] ?? null, isset($m['pgsql:table_oid'])];
    }
    return $out;
});
step('pdo_transactions', function () use ($pdo) {
    $out = [$pdo->inTransaction()];
    $pdo->beginTransaction();
    $out[] = $pdo->inTransaction();
    $pdo->exec("INSERT INTO pdo_items (name) VALUES ('rolled back')");
    $pdo->rollBack();
    $out[] = $pdo->inTransaction();
    $pdo->beginTransaction();
    $pdo->exec("INSERT INTO pdo_items (name) VALUES ('kept')");
    $pdo->commit();
    $out[] = $pdo->query('SELECT name FROM pdo_items WHERE id > 3 ORDER BY id')->fetchAll(PDO::FETCH_COLUMN);
    try {  // a failed statement aborts the transaction until rollBack
        $pdo->beginTransaction();
        $pdo->exec("INSERT INTO pdo_items (name) VALUES ('kept')");
    } catch (PDOException $e) {
        $out[] = error_of($e);
        try {
            $pdo->query('SELECT 1');
        } catch (PDOException $e2) {
            $out[] = error_of($e2);
        }
        $pdo->rollBack();
    }
    $out[] = $pdo->inTransaction();
    return $out;
});
step('pdo_errors', function () use ($pdo) {
    $out = [];
    foreach ([
        "INSERT INTO pdo_items (name) VALUES ('apple')",
        'SELEC 1',
        'SELECT nope FROM pdo_items',
        'SELECT * FROM pdo_missing',
        'INSERT INTO pdo_items (name) VALUES (NULL)',
        "SELECT 'x'::int",
        'SELECT 1/0',
    ] as $sql) {
        try {
            $pdo->exec($sql);
            $out[] = 'no error';
        } catch (PDOException $e) {
            $out[] = [error_of($e), $e->getCode(), $pdo->errorInfo()[0]];
        }
    }
    try {  // an error of a prepared statement's execute
        $st = $pdo->prepare('INSERT INTO pdo_items (name, qty) VALUES (?, ?)');
        $st->execute(['pear', 1]);
    } catch (PDOException $e) {
        $out[] = [error_of($e), $st->errorInfo()[0]];
    }
    $pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_SILENT);
    $out[] = [$pdo->exec('SELEC 1'), $pdo->errorInfo()[0], $pdo->errorCode()];
    $pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
    return $out;
});
step('pdo_bytea_bool_null', function () use ($pdo) {
    $pdo->exec('CREATE TABLE pdo_files (id serial PRIMARY KEY, data bytea, flag boolean, body text)');
    $bytes = implode('', array_map('chr', range(0, 255)));
    $big = str_repeat("large text \u{00e9}\u{4e2d} ", 20000);
    $st = $pdo->prepare('INSERT INTO pdo_files (data, flag, body) VALUES (:d, :f, :b)');
    $st->bindValue(':d', $bytes, PDO::PARAM_LOB);
    $st->bindValue(':f', true, PDO::PARAM_BOOL);
    $st->bindValue(':b', $big);
    $st->execute();
    $st->bindValue(':d', null, PDO::PARAM_NULL);
    $st->bindValue(':f', false, PDO::PARAM_BOOL);
    $st->bindValue(':b', null, PDO::PARAM_NULL);
    $st->execute();
    $rows = $pdo->query('SELECT id, data, flag, body, length(data) AS n, octet_length(body) AS ob FROM pdo_files ORDER BY id')->fetchAll(PDO::FETCH_ASSOC);
    $out = [];
    foreach ($rows as $r) {
        $data = is_resource($r['data']) ? stream_get_contents($r['data']) : $r['data'];
        $out[] = [$r['id'], $data === null ? null : md5($data), $data === $bytes, $r['flag'],
            $r['body'] === null ? null : [strlen($r['body']), $r['body'] === $big], $r['n'], $r['ob']];
    }
    $st = $pdo->prepare('SELECT count(*) FROM pdo_files WHERE flag = ? AND data = ?');
    $st->bindValue(1, true, PDO::PARAM_BOOL);
    $st->bindValue(2, $bytes, PDO::PARAM_LOB);
    $st->execute();
    $out[] = $st->fetchColumn();
    return $out;
});
step('pdo_copy', function () use ($pdo) {
    $pdo->exec('CREATE TABLE pdo_copy (id int, name text, price numeric)');
    $ok = $pdo->pgsqlCopyFromArray('pdo_copy', ["1\tone\t1.5", "2\t\\N\t2", "3\tthr\\tee\t\\N"]);
    $ok2 = $pdo->pgsqlCopyFromArray('pdo_copy', ['4;four;4'], ';', '\\\\N', 'id,name,price');
    return [$ok, $ok2, $pdo->pgsqlCopyToArray('pdo_copy'), $pdo->pgsqlCopyToArray('pdo_copy', ',', 'NULL', 'id,name')];
});
step('pdo_quote', fn () => [$pdo->quote("it's"), $pdo->query('SELECT ' . $pdo->quote("a'b\\c"))->fetchColumn()]);

// ---------------------------------------------------------------- Doctrine DBAL
$conn = DriverManager::getConnection([
    'driver' => 'pdo_pgsql', 'host' => $host, 'port' => (int) $port, 'user' => $user,
    'password' => '', 'dbname' => $database,
]);
$platform = $conn->getDatabasePlatform();
$sm = $conn->createSchemaManager();

function columns_of(array $columns): array
{
    $out = [];
    foreach ($columns as $c) {
        /** @var Column $c */
        $out[] = [$c->getName(), Type::getTypeRegistry()->lookupName($c->getType()), $c->getLength(), $c->getPrecision(),
            $c->getScale(), $c->getFixed(), $c->getNotnull(), $c->getDefault(), $c->getAutoincrement(),
            $c->getComment()];
    }
    return $out;
}

function table_of(Table $t): array
{
    $indexes = [];
    foreach ($t->getIndexes() as $i) {
        $indexes[] = [$i->getName(), $i->getColumns(), $i->isUnique(), $i->isPrimary()];
    }
    sort($indexes);
    $fks = [];
    foreach ($t->getForeignKeys() as $fk) {
        $fks[] = [$fk->getName(), $fk->getLocalColumns(), $fk->getForeignTableName(),
            $fk->getForeignColumns(), $fk->onDelete(), $fk->onUpdate()];
    }
    return ['columns' => columns_of($t->getColumns()), 'indexes' => $indexes, 'fks' => $fks,
        'comment' => $t->getComment(), 'pk' => $t->getPrimaryKey()?->getColumns()];
}

function app_schema(): Schema
{
    $schema = new Schema();
    $users = $schema->createTable('dc_users');
    $users->addColumn('id', Types::INTEGER, ['autoincrement' => true]);
    $users->addColumn('email', Types::STRING, ['length' => 120]);
    $users->addColumn('balance', Types::DECIMAL, ['precision' => 10, 'scale' => 2, 'default' => '0.00']);
    $users->addColumn('active', Types::BOOLEAN, ['default' => true]);
    $users->addColumn('created_at', Types::DATETIME_MUTABLE);
    $users->addColumn('profile', Types::JSON, ['notnull' => false]);
    $users->addColumn('nickname', Types::STRING, ['length' => 50, 'notnull' => false, 'comment' => 'shown name']);
    $users->setPrimaryKey(['id']);
    $users->addUniqueIndex(['email'], 'dc_users_email_uniq');
    $posts = $schema->createTable('dc_posts');
    $posts->addColumn('id', Types::BIGINT, ['autoincrement' => true]);
    $posts->addColumn('user_id', Types::INTEGER);
    $posts->addColumn('title', Types::STRING, ['length' => 200]);
    $posts->addColumn('body', Types::TEXT, ['notnull' => false]);
    $posts->addColumn('published_on', Types::DATE_MUTABLE, ['notnull' => false]);
    $posts->addColumn('obsolete', Types::SMALLINT, ['notnull' => false]);
    $posts->setPrimaryKey(['id']);
    $posts->addIndex(['user_id'], 'dc_posts_user_idx');
    $posts->addForeignKeyConstraint('dc_users', ['user_id'], ['id'], ['onDelete' => 'CASCADE'], 'dc_posts_user_fk');
    $posts->setComment('blog posts');
    $schema->createSequence('dc_counter', 5, 100);
    return $schema;
}

step('dbal_platform', fn () => [get_class($platform) !== '', $conn->fetchOne('SELECT 1 + 1'),
    $platform->supportsSequences(), $platform->supportsIdentityColumns(), $platform->supportsSchemas()]);
step('dbal_create_sql', function () use ($platform) {
    return app_schema()->toSql($platform);
});
step('dbal_create', function () use ($conn, $platform) {
    foreach (app_schema()->toSql($platform) as $sql) {
        $conn->executeStatement($sql);
    }
    $conn->executeStatement('CREATE TABLE dc_ident (id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        code char(3) NOT NULL DEFAULT \'abc\', n numeric, at timestamptz DEFAULT now(), u uuid)');
    $conn->executeStatement('CREATE VIEW dc_posts_view AS SELECT id, user_id FROM dc_posts');
    return true;
});
step('list_databases', fn () => in_array($conn->getDatabase(), $sm->listDatabases(), true));
step('list_schemas', fn () => array_values(array_filter($sm->listSchemaNames(), fn ($s) => $s === 'public')));
step('list_tables', fn () => array_values(array_filter($sm->listTableNames(), fn ($t) => str_starts_with($t, 'dc_'))));
step('table_exists', fn () => [$sm->tablesExist(['dc_users', 'dc_posts']), $sm->tablesExist(['dc_nope'])]);
step('columns_users', fn () => columns_of($sm->listTableColumns('dc_users')));
step('columns_posts', fn () => columns_of($sm->listTableColumns('dc_posts')));
step('columns_ident', fn () => columns_of($sm->listTableColumns('dc_ident')));
step('indexes', function () use ($sm) {
    $out = [];
    foreach (['dc_users', 'dc_posts', 'dc_ident'] as $t) {
        foreach ($sm->listTableIndexes($t) as $i) {
            $out[] = [$t, $i->getName(), $i->getColumns(), $i->isUnique(), $i->isPrimary()];
        }
    }
    sort($out);
    return $out;
});
step('foreign_keys', function () use ($sm) {
    return array_map(fn ($fk) => [$fk->getName(), $fk->getLocalColumns(), $fk->getForeignTableName(),
        $fk->getForeignColumns(), $fk->onDelete(), $fk->onUpdate()], $sm->listTableForeignKeys('dc_posts'));
});
step('introspect_table', fn () => [table_of($sm->introspectTable('dc_users')), table_of($sm->introspectTable('dc_posts'))]);
step('list_views', function () use ($sm) {
    $out = [];
    foreach ($sm->listViews() as $v) {
        if (str_contains($v->getName(), 'dc_')) {
            $out[] = [$v->getName(), (bool) preg_match('/dc_posts/', $v->getSql())];
        }
    }
    return $out;
});
step('list_sequences', function () use ($sm) {
    $out = [];
    foreach ($sm->listSequences() as $s) {
        if (str_contains($s->getName(), 'dc_')) {
            $out[] = [$s->getName(), $s->getAllocationSize(), $s->getInitialValue()];
        }
    }
    sort($out);
    return $out;
});
step('migrate_sql', function () use ($sm, $platform) {
    $from = $sm->introspectSchema();
    $to = clone $from;
    $posts = $to->getTable('dc_posts');
    $posts->addColumn('views', Types::INTEGER, ['default' => 0]);
    $posts->changeColumn('title', ['length' => 255]);
    $posts->addIndex(['title'], 'dc_posts_title_idx');
    $posts->dropColumn('obsolete');
    $to->getTable('dc_users')->addColumn('bio', Types::TEXT, ['notnull' => false, 'comment' => 'about me']);
    $diff = $sm->createComparator()->compareSchemas($from, $to);
    return $platform->getAlterSchemaSQL($diff);
});
step('migrate', function () use ($conn, $sm, $platform) {
    $from = $sm->introspectSchema();
    $to = clone $from;
    $posts = $to->getTable('dc_posts');
    $posts->addColumn('views', Types::INTEGER, ['default' => 0]);
    $posts->changeColumn('title', ['length' => 255]);
    $posts->addIndex(['title'], 'dc_posts_title_idx');
    $posts->dropColumn('obsolete');
    $to->getTable('dc_users')->addColumn('bio', Types::TEXT, ['notnull' => false, 'comment' => 'about me']);
    foreach ($platform->getAlterSchemaSQL($sm->createComparator()->compareSchemas($from, $to)) as $sql) {
        $conn->executeStatement($sql);
    }
    // a second comparison of the migrated database with the target finds nothing to do
    $again = $sm->createComparator()->compareSchemas($sm->introspectSchema(), $to);
    return $platform->getAlterSchemaSQL($again);
});
step('after_migrate', fn () => [table_of($sm->introspectTable('dc_users')), table_of($sm->introspectTable('dc_posts'))]);
step('unchanged_app_schema', function () use ($sm, $platform) {  // the created schema compared with itself
    $comparator = $sm->createComparator();
    $diff = $comparator->compareSchemas($sm->introspectSchema(), $sm->introspectSchema());
    return $platform->getAlterSchemaSQL($diff);
});
step('query_builder', function () use ($conn) {
    $ids = [];
    foreach (['ann@x.org' => '10.50', 'bob@x.org' => '3.25', 'cy@x.org' => '0.00'] as $email => $balance) {
        $conn->createQueryBuilder()->insert('dc_users')
            ->values(['email' => '?', 'balance' => '?', 'created_at' => '?', 'profile' => '?'])
            ->setParameters([$email, $balance, '2024-03-01 12:00:00', json_encode(['e' => $email])])
            ->executeStatement();
        $ids[] = (int) $conn->lastInsertId();
    }
    $rows = $conn->createQueryBuilder()->select('u.id', 'u.email', 'u.balance', 'u.active')
        ->from('dc_users', 'u')->where('u.balance > :min')->orderBy('u.email', 'DESC')
        ->setParameter('min', 1)->setMaxResults(5)->setFirstResult(0)->fetchAllAssociative();
    $updated = $conn->createQueryBuilder()->update('dc_users')->set('active', ':a')
        ->where('email = :e')->setParameter('a', false, ParameterType::BOOLEAN)
        ->setParameter('e', 'cy@x.org')->executeStatement();
    $deleted = $conn->createQueryBuilder()->delete('dc_users')->where('email = ?')
        ->setParameter(0, 'bob@x.org')->executeStatement();
    return [$ids, $rows, $updated, $deleted,
        $conn->fetchAllKeyValue('SELECT email, active FROM dc_users ORDER BY id')];
});
step('transactional', function () use ($conn) {
    $id = $conn->fetchOne('SELECT id FROM dc_users ORDER BY id LIMIT 1');
    $conn->transactional(function (Connection $c) use ($id): void {
        $c->insert('dc_posts', ['user_id' => $id, 'title' => 'first', 'body' => str_repeat('b', 5000)]);
        $c->insert('dc_posts', ['user_id' => $id, 'title' => 'second', 'published_on' => '2024-05-06']);
    });
    try {
        $conn->transactional(function (Connection $c) use ($id): void {
            $c->insert('dc_posts', ['user_id' => $id, 'title' => 'lost']);
            throw new RuntimeException('abort');
        });
    } catch (RuntimeException $e) {
    }
    $conn->setNestTransactionsWithSavepoints(true);
    $conn->beginTransaction();
    $conn->beginTransaction();
    $conn->insert('dc_posts', ['user_id' => $id, 'title' => 'nested']);
    $conn->rollBack();
    $nested = $conn->getTransactionNestingLevel();
    $conn->commit();
    return [$conn->fetchFirstColumn('SELECT title FROM dc_posts ORDER BY id'), $nested, $conn->isTransactionActive()];
});
step('typed_params', function () use ($conn) {
    $n = $conn->executeStatement(
        'UPDATE dc_posts SET published_on = ?, views = ? WHERE title IN (?)',
        [new DateTime('2024-07-08 09:10:11'), 42, ['first', 'second']],
        [Types::DATE_MUTABLE, ParameterType::INTEGER, ArrayParameterType::STRING],
    );
    $rows = $conn->fetchAllAssociative(
        'SELECT id, title, published_on, views FROM dc_posts WHERE id IN (:ids) AND views >= :v ORDER BY id',
        ['ids' => [1, 2, 3], 'v' => 1],
        ['ids' => ArrayParameterType::INTEGER, 'v' => ParameterType::INTEGER],
    );
    $user = $conn->fetchAssociative('SELECT * FROM dc_users WHERE email = ?', ['ann@x.org']);
    $converted = [
        $conn->convertToPHPValue($user['profile'], Types::JSON),
        $conn->convertToPHPValue($user['created_at'], Types::DATETIME_MUTABLE)->format('c'),
        $conn->convertToPHPValue($user['active'], Types::BOOLEAN),
    ];
    return [$n, $rows, $converted, $conn->fetchNumeric('SELECT count(*), sum(views) FROM dc_posts')];
});
step('cascade_and_errors', function () use ($conn) {
    $out = [];
    try {
        $conn->insert('dc_users', ['email' => 'ann@x.org', 'created_at' => '2024-01-01']);
    } catch (Doctrine\DBAL\Exception $e) {
        $out[] = [get_class($e), $e->getSQLState()];
    }
    try {
        $conn->insert('dc_posts', ['user_id' => 999, 'title' => 'orphan']);
    } catch (Doctrine\DBAL\Exception $e) {
        $out[] = [get_class($e), $e->getSQLState()];
    }
    try {
        $conn->executeQuery('SELEC 1');
    } catch (Doctrine\DBAL\Exception $e) {
        $out[] = [get_class($e), $e->getSQLState()];
    }
    try {
        $conn->executeQuery('SELECT * FROM dc_nope');
    } catch (Doctrine\DBAL\Exception $e) {
        $out[] = [get_class($e), $e->getSQLState()];
    }
    $out[] = $conn->delete('dc_users', ['email' => 'ann@x.org']);
    $out[] = $conn->fetchOne('SELECT count(*) FROM dc_posts');
    return $out;
});
step('sequences', function () use ($conn, $platform) {
    return [$conn->fetchOne($platform->getSequenceNextValSQL('dc_counter')),
        $conn->fetchOne($platform->getSequenceNextValSQL('dc_counter')), $conn->lastInsertId()];
});
step('drop_schema', function () use ($conn, $sm, $platform) {
    $conn->executeStatement('DROP VIEW dc_posts_view');
    foreach (app_schema()->toDropSql($platform) as $sql) {
        $conn->executeStatement($sql);
    }
    $sm->dropTable('dc_ident');
    return array_values(array_filter($sm->listTableNames(), fn ($t) => str_starts_with($t, 'dc_')));
});

echo json_encode($OUT, JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
