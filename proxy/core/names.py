"""Names every layer agrees on."""

INTERNAL_SCHEMA = "hatidata_internal"  # the real tables; main holds identity-filtered views

# Where the pg_catalog / information_schema stand-ins live (proxy/db/catalog/install.py).
CATALOG_DB = "__hati_catalog"
PG_SCHEMA = f"{CATALOG_DB}.pg"
INFO_SCHEMA = f"{CATALOG_DB}.info"
