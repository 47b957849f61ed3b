SELECT * FROM get_agent_state(upper('k'))
-- error: 0A000
