-- CASE, COALESCE, NULLIF, NULL semantics and boolean logic.
-- @setup
CREATE TABLE d_flags (id int PRIMARY KEY, a boolean, b boolean, n int);
INSERT INTO d_flags VALUES (1, true, true, 1), (2, true, false, NULL), (3, false, NULL, 0), (4, NULL, NULL, -1), (5, false, false, 5);
-- @query case_searched
SELECT id, CASE WHEN n > 0 THEN 'pos' WHEN n < 0 THEN 'neg' WHEN n = 0 THEN 'zero' ELSE 'null' END FROM d_flags
-- @query case_simple
SELECT id, CASE n WHEN 1 THEN 'one' WHEN 5 THEN 'five' END FROM d_flags
-- @query case_numeric_branches
SELECT CASE WHEN true THEN 1 ELSE 2.5 END
-- @query coalesce
SELECT id, coalesce(n, 42), coalesce(NULL, NULL, 'x') FROM d_flags
-- @query nullif
SELECT nullif(1, 1), nullif(1, 2), nullif('a', 'b')
-- @query null_comparisons
SELECT NULL = NULL, NULL <> 1, 1 = NULL
-- @query is_null
SELECT id FROM d_flags WHERE n IS NULL
-- @query is_distinct_from
SELECT id FROM d_flags WHERE a IS DISTINCT FROM b
-- @query is_not_distinct_from
SELECT id FROM d_flags WHERE a IS NOT DISTINCT FROM b
-- @query three_valued_and_or
SELECT id, a AND b, a OR b, NOT a FROM d_flags
-- @query is_true_unknown
SELECT id, b IS TRUE, b IS NOT FALSE, b IS UNKNOWN FROM d_flags
-- @query where_null_filters
SELECT id FROM d_flags WHERE n > 0 OR n <= 0
-- @query null_arith
SELECT 1 + NULL, NULL * 0, 'a' || NULL
-- @query count_nulls
SELECT count(*) - count(b) FROM d_flags
-- @query bool_literals
SELECT true AND NULL, false AND NULL, true OR NULL, false OR NULL
-- @query bool_compare
SELECT true > false, true = 't'
-- @query case_in_aggregate
SELECT sum(CASE WHEN a THEN 1 ELSE 0 END)::bigint, count(CASE WHEN b THEN 1 END) FROM d_flags
-- @query coalesce_type_mismatch error
SELECT coalesce(1, 'x'::text)
