CREATE OR REPLACE VIEW billing AS SELECT id FROM docs WHERE category = 'billing'
-- transpiled:
CREATE OR REPLACE VIEW billing AS SELECT id FROM docs WHERE category = 'billing'
