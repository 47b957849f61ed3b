/* {"app": "dbt", "node_id": "model.x"} */
-- and a line comment
SELECT count(*) AS n FROM docs
-- transpiled:
SELECT COUNT(*) AS n FROM docs
-- rows:
[5]
