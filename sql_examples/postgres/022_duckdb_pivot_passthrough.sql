PIVOT tickets ON customer USING count(*) ORDER BY id
-- transpiled:
PIVOT tickets ON customer USING count(*) ORDER BY id
-- rows:
[10, "invoice payment failed", "120.50", "2024-01-05", "{\"tags\": [\"billing\", \"urgent\"], \"meta\": {\"priority\": 1}}", 1, 0]
[11, "cannot login to account", null, "2024-02-10", "{\"tags\": [\"account\"], \"meta\": {\"priority\": 2}}", 0, 1]
[12, "package delivery late", "35.00", "2024-03-15", "{\"tags\": [], \"meta\": {\"priority\": 3}}", 1, 0]
