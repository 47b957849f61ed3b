-- Session information functions: who is logged in, as Postgres reports it.
-- @query login_user_keywords
SELECT current_user, session_user, current_role, user
-- @query login_user_in_expressions
SELECT current_user = session_user, upper(current_user), length(user) > 0
-- @query login_user_in_where
SELECT 1 WHERE current_user = 'postgres'
-- @query current_user_function_form
SELECT pg_catalog.current_user()
