"""Names every layer agrees on."""

# The agent layer's tables, in its own database (proxy/db/agent_db.py), never the users'.
INTERNAL_SCHEMA = "hatidata_internal"

# Where the pg_catalog / information_schema stand-ins live (proxy/db/catalog/install.py).
CATALOG_DB = "__hati_catalog"
PG_SCHEMA = f"{CATALOG_DB}.pg"
INFO_SCHEMA = f"{CATALOG_DB}.info"
