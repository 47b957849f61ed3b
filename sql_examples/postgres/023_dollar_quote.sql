SELECT $$it's a \ test$$ AS s, E'tab\there' AS e
-- transpiled:
SELECT 'it''s a \ test' AS s, e'tab\there' AS e
-- rows:
["it's a \\ test", "tab\there"]
