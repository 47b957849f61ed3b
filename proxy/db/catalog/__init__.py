"""pg_catalog / information_schema compatibility layer (SQL views and macros).

``install(conn)`` once per database at start; ``prepare_cursor(cur)`` on each cursor.
See install.py for where the objects live and why.
"""

from proxy.core.names import CATALOG_DB, INFO_SCHEMA, PG_SCHEMA
from proxy.db.catalog.install import install, prepare_cursor

__all__ = ["CATALOG_DB", "INFO_SCHEMA", "PG_SCHEMA", "install", "prepare_cursor"]
