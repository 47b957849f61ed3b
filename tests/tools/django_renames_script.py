"""Django 5.2 migrations that rename, alter and remove on a table with rows and a view over
it, run by `migrate` forwards, backwards to 0001 and forwards again: prints as JSON, per
step, the rows, the columns, the indexes and the view's rows, and the SQL Django sent.
Run with the django tool's python: `django_renames_script.py HOST PORT USER DBNAME`."""

import json
import sys
import tempfile
from pathlib import Path

MIGRATIONS = {
    "0001_initial": """
from django.db import migrations, models

class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.CreateModel("Item", [
            ("id", models.BigAutoField(primary_key=True)),
            ("name", models.CharField(max_length=20, db_index=True)),
            ("qty", models.IntegerField()),
            ("note", models.CharField(max_length=30, null=True)),
            ("code", models.CharField(max_length=10, unique=True)),
        ]),
        migrations.CreateModel("Entry", [
            ("id", models.BigAutoField(primary_key=True)),
            ("item", models.ForeignKey("ren.Item", models.CASCADE)),
            ("n", models.IntegerField()),
        ]),
    ]
""",
    "0002_rows_and_view": """
from django.db import migrations

class Migration(migrations.Migration):
    dependencies = [("ren", "0001_initial")]
    operations = [
        migrations.RunSQL(
            [
                "INSERT INTO ren_item (name, qty, note, code) VALUES "
                "('apple', 3, 'red', 'a1'), ('pear', 5, NULL, 'p1'), ('fig', 7, 'old', 'f1')",
                "INSERT INTO ren_entry (item_id, n) SELECT id, qty * 10 FROM ren_item",
                "CREATE VIEW ren_names AS SELECT id, name, note FROM ren_item",
            ],
            [
                "DROP VIEW IF EXISTS ren_names",
                "DELETE FROM ren_entry",
                "DELETE FROM ren_item",
            ],
        ),
    ]
""",
    "0003_rename_field": """
from django.db import migrations

class Migration(migrations.Migration):
    dependencies = [("ren", "0002_rows_and_view")]
    operations = [migrations.RenameField("Item", "name", "title")]
""",
    "0004_alter_fields": """
from django.db import migrations, models

class Migration(migrations.Migration):
    dependencies = [("ren", "0003_rename_field")]
    operations = [
        migrations.AlterField("Item", "note", models.CharField(max_length=30, default="none")),
        migrations.AlterField("Item", "qty", models.BigIntegerField(default=0)),
        migrations.AlterField("Item", "code", models.CharField(max_length=12, unique=True)),
    ]
""",
    "0005_rename_model": """
from django.db import migrations

class Migration(migrations.Migration):
    dependencies = [("ren", "0004_alter_fields")]
    operations = [migrations.RenameModel("Item", "Product")]
""",
    "0006_remove_fields": """
from django.db import migrations

class Migration(migrations.Migration):
    dependencies = [("ren", "0005_rename_model")]
    operations = [
        migrations.RemoveField("Product", "qty"),
        migrations.RemoveField("Product", "note"),
    ]
""",
}

COLUMNS = (
    "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable "
    "FROM information_schema.columns WHERE table_schema = 'public' AND table_name LIKE 'ren%%' "
    "ORDER BY table_name, column_name"
)
INDEXES = (
    "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = 'public' "
    "AND tablename LIKE 'ren%%' ORDER BY 1, 2"
)
KEYS = (
    "SELECT tc.table_name, tc.constraint_type, kcu.column_name "
    "FROM information_schema.table_constraints tc "
    "JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
    "AND kcu.table_name = tc.table_name "
    "WHERE tc.table_schema = 'public' AND tc.table_name LIKE 'ren%%' ORDER BY 1, 2, 3"
)


def main() -> None:
    host, port, user, dbname = sys.argv[1:5]
    root = Path(tempfile.mkdtemp())
    (root / "ren" / "migrations").mkdir(parents=True)
    (root / "ren" / "__init__.py").write_text("")
    (root / "ren" / "models.py").write_text("")
    (root / "ren" / "migrations" / "__init__.py").write_text("")
    for name, text in MIGRATIONS.items():
        (root / "ren" / "migrations" / f"{name}.py").write_text(text)
    sys.path.insert(0, str(root))
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["ren"],
        USE_TZ=True,
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "HOST": host,
                "PORT": port,
                "USER": user,
                "NAME": dbname,
                "PASSWORD": "",
            }
        },
    )
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    out: dict = {"steps": [], "sql": []}

    def record(run, sql, params, many, context):  # noqa: ANN001
        out["sql"].append(sql)
        return run(sql, params, many, context)

    def query(sql: str) -> list:
        with connection.cursor() as cur:
            try:
                cur.execute(sql)
                return [list(r) for r in cur.fetchall()]
            except Exception as exc:  # noqa: BLE001
                return [type(exc).__name__, str(exc).splitlines()[0]]

    def state(label: str) -> None:
        tables = [
            t
            for (t,) in query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                "AND table_name LIKE 'ren%%' AND table_type = 'BASE TABLE' ORDER BY 1"
            )
        ]
        step = {"label": label, "tables": tables, "columns": query(COLUMNS)}
        step["indexes"] = query(INDEXES)
        step["keys"] = query(KEYS)
        for table in tables:
            step[table] = query(f'SELECT * FROM "{table}" ORDER BY 1')
        step["view"] = query("SELECT * FROM ren_names ORDER BY 1")
        out["steps"].append(step)

    with connection.execute_wrapper(record):
        for target in ["0002", "0003", "0004", "0005", "0006", "0001", "0006"]:
            try:
                call_command("migrate", "ren", target, verbosity=0)
                state(f"migrate {target}")
            except Exception as exc:  # noqa: BLE001
                out["steps"].append({"label": f"migrate {target}", "error": str(exc)})
                break
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
