INSERT INTO kv (k, v) VALUES ('a', 'new') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING k, v
-- transpiled:
INSERT INTO kv (k, v) VALUES ('a', 'new') ON CONFLICT(k) DO UPDATE SET v = EXCLUDED.v RETURNING k, v
-- rows:
["a", "new"]
