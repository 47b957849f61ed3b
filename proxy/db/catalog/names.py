"""Where the pg_catalog / information_schema stand-ins live (see install.py for why)."""

CATALOG_DB = "__hati_catalog"
PG_SCHEMA = f"{CATALOG_DB}.pg"
INFO_SCHEMA = f"{CATALOG_DB}.info"
