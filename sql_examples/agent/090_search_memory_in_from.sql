SELECT m.content, m.score FROM search_memory('revenue growth', top_k := 5) AS m WHERE m.importance > $1 ORDER BY m.score DESC NULLS FIRST
-- transpiled:
SELECT m.content, m.score FROM __hati_agent_0 AS m WHERE m.importance > $1 ORDER BY m.score DESC NULLS FIRST
