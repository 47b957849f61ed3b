-- Captured client queries that still FAIL when run through transpile() alone, each with
-- the reason (test_corpus.py asserts they still fail, and that they pass with the
-- rewrites in missing_rewrites.py). `-- from:` names the client file the entry belongs
-- to; tests/catalog/triage.py moves entries back once they pass.

