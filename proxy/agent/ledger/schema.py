"""The ledger's tables, scopes and export format: the names its modules share."""

from __future__ import annotations

from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA

TRACES = f"{INTERNAL_SCHEMA}.cot_traces"
SESSIONS = f"{INTERNAL_SCHEMA}.cot_sessions"
APPROVALS = f"{INTERNAL_SCHEMA}.cot_approvals"
ORG_CHAIN = f"{INTERNAL_SCHEMA}.cot_org_chain"  # one entry per step, per organisation
ORG_HEADS = f"{INTERNAL_SCHEMA}.cot_org_heads"  # the organisation chain's length and head
# With a DuckLake catalog these live in the agent lake (proxy/db/agent_lake_views.py), and
# every append first updates the one row of CLOCK (lake only): see service.py.
TABLES = [TRACES, SESSIONS, APPROVALS, ORG_CHAIN, ORG_HEADS]
CLOCK = f"{INTERNAL_SCHEMA}.cot_ledger_clock"
ADMIN_SCOPE = "cot:admin"
READ = "cot:read"
WRITE = "cot:write"
EXPORT_FORMAT = "hatiproxy.cot.export/v1"

STEP_COLUMNS = (
    "trace_id, org_id, agent_id, session_id, step_index, step_type, content, metadata, "
    "importance, timestamp, parent_trace_id, content_hash, prev_hash, chain_hash, created_at"
)


def is_admin(who: Identity) -> bool:
    return who.scopes is not None and ADMIN_SCOPE in who.scopes
