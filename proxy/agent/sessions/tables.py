"""The sessions package's tables in the agent database (one declaration of each name)."""

from proxy.core.names import INTERNAL_SCHEMA

SESSIONS = f"{INTERNAL_SCHEMA}.sessions"
EVENTS = f"{INTERNAL_SCHEMA}.session_events"
SCOPED = f"{INTERNAL_SCHEMA}.session_scoped_state"
TEMP = f"{INTERNAL_SCHEMA}.session_temp_state"
INDEX = f"{INTERNAL_SCHEMA}.session_index"
ARTIFACTS = f"{INTERNAL_SCHEMA}.session_artifacts"
REBUILD = f"{INTERNAL_SCHEMA}.session_index_rebuild"
# With a DuckLake catalog these live in the agent lake (proxy/db/agent_lake_views.py),
# read through local views of the same names; the search index stays per proxy.
SHARED = [SESSIONS, EVENTS, SCOPED, TEMP, ARTIFACTS]
CLOCK = f"{INTERNAL_SCHEMA}.session_clock"  # agent lake only: serialises creates, user:/app:
FEED = f"{INTERNAL_SCHEMA}.session_index_lake_feed"  # local: the lake snapshot indexed
