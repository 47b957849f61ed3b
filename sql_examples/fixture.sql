-- Fixture for the golden examples: small tables, 3-dimensional vectors.
-- Vector dims: dim 0 = billing, dim 1 = account/login, dim 2 = shipping (see README.md).
CREATE TABLE docs (id INTEGER PRIMARY KEY, title VARCHAR, content VARCHAR, category VARCHAR, embedding FLOAT[3]);
INSERT INTO docs VALUES
  (1, 'Billing FAQ', 'how to pay an invoice and get a refund', 'billing', [0.9, 0.1, 0.0]),
  (2, 'Login help', 'reset your password to access the account', 'account', [0.0, 1.0, 0.1]),
  (3, 'Shipping times', 'delivery of a package takes three days', 'shipping', [0.1, 0.0, 1.0]),
  (4, 'Refund policy', 'refund of a payment within thirty days', 'billing', [1.0, 0.0, 0.2]),
  (5, 'Account security', 'enable two factor auth for your account login', 'account', [0.1, 0.9, 0.0]);
CREATE TABLE tickets (id INTEGER, subject VARCHAR, customer VARCHAR, amount DECIMAL(10, 2), created DATE, payload VARCHAR);
INSERT INTO tickets VALUES
  (10, 'invoice payment failed', 'acme', 120.50, DATE '2024-01-05', '{"tags": ["billing", "urgent"], "meta": {"priority": 1}}'),
  (11, 'cannot login to account', 'globex', NULL, DATE '2024-02-10', '{"tags": ["account"], "meta": {"priority": 2}}'),
  (12, 'package delivery late', 'acme', 35.00, DATE '2024-03-15', '{"tags": [], "meta": {"priority": 3}}');
CREATE TABLE items (id INTEGER, name VARCHAR, embedding FLOAT[3]);
INSERT INTO items VALUES (1, 'x-axis', [1, 0, 0]), (2, 'y-axis', [0, 1, 0]), (3, 'diagonal', [1, 1, 0]), (4, 'z-axis', [0, 0, 1]);
CREATE TABLE kv (k VARCHAR PRIMARY KEY, v VARCHAR);
INSERT INTO kv VALUES ('a', 'old'), ('b', 'kept');
CREATE TABLE langchain_store (id TEXT PRIMARY KEY, content TEXT NOT NULL, metadata TEXT, embedding FLOAT[3]);
INSERT INTO langchain_store VALUES
  ('m1', 'customer prefers invoice by email', '{"source": "crm"}', [0.95, 0.05, 0.0]),
  ('m2', 'customer forgot password twice', '{"source": "support"}', [0.0, 1.0, 0.0]),
  ('m3', 'ships to berlin warehouse', '{"source": "ops"}', [0.0, 0.1, 0.99]);
PRAGMA create_fts_index('docs', 'id', 'title', 'content');
