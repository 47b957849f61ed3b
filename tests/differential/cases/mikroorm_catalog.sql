-- MikroORM 7's schema diff reads the triggers of the tables it compares (none here: no
-- rows, PostgreSQL 15's columns).
-- @setup
CREATE TABLE d_mikro_author (id serial PRIMARY KEY, email varchar(120) NOT NULL UNIQUE);
-- @query triggers_of_tables
select t.trigger_name, t.event_object_schema as schema_name, t.event_object_table as table_name, t.event_manipulation as event, t.action_timing as timing, t.action_orientation as for_each, t.action_condition as when_clause, pg_get_functiondef(p.oid) as function_def, p.prosrc as function_body from information_schema.triggers t left join pg_namespace n on n.nspname = t.event_object_schema left join pg_proc p on p.proname = t.event_object_table || '_' || t.trigger_name || '_fn' and p.pronamespace = n.oid where ((t.event_object_schema = 'public' and t.event_object_table in ('d_mikro_author'))) order by t.trigger_name, t.event_manipulation
-- @query triggers_columns
SELECT trigger_catalog, trigger_schema, trigger_name, event_manipulation, event_object_catalog, event_object_schema, event_object_table, action_order, action_condition, action_statement, action_orientation, action_timing, action_reference_old_table, action_reference_new_table, action_reference_old_row, action_reference_new_row, created FROM information_schema.triggers
