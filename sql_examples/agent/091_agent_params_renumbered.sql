SELECT key FROM list_agent_state(prefix := $1) WHERE version >= $2
-- transpiled:
SELECT key FROM __hati_agent_0 AS list_agent_state WHERE version >= $1
