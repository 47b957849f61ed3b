"""pg_catalog / information_schema compatibility layer (SQL views and macros).

``install(conn)`` once per database at start; ``prepare_cursor(cur)`` on each cursor.
See install.py for where the objects live and why.
"""

from proxy.db.catalog.install import install, prepare_cursor
from proxy.db.catalog.names import CATALOG_DB, INFO_SCHEMA, PG_SCHEMA

__all__ = ["CATALOG_DB", "INFO_SCHEMA", "PG_SCHEMA", "install", "prepare_cursor"]
