"""The sessions package's tables in the agent database (one declaration of each name)."""

from proxy.core.names import INTERNAL_SCHEMA

SESSIONS = f"{INTERNAL_SCHEMA}.sessions"
EVENTS = f"{INTERNAL_SCHEMA}.session_events"
SCOPED = f"{INTERNAL_SCHEMA}.session_scoped_state"
TEMP = f"{INTERNAL_SCHEMA}.session_temp_state"
INDEX = f"{INTERNAL_SCHEMA}.session_index"
ARTIFACTS = f"{INTERNAL_SCHEMA}.session_artifacts"
REBUILD = f"{INTERNAL_SCHEMA}.session_index_rebuild"
