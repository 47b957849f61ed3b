-- What pg_dump writes and pg_restore / psql replay (captured from pg_dump 15's output of a
-- hatiproxy schema), and what pg_dump asks while dumping; tests/clients/test_pg_dump.py runs
-- the tools themselves.
-- @setup
CREATE TABLE d_dump_items (id integer NOT NULL, name character varying(40));
ALTER TABLE d_dump_items OWNER TO CURRENT_USER;
CREATE SEQUENCE public.d_dump_items_id_seq AS integer START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1;
ALTER TABLE public.d_dump_items_id_seq OWNER TO CURRENT_USER;
ALTER SEQUENCE public.d_dump_items_id_seq OWNED BY public.d_dump_items.id;
ALTER TABLE ONLY public.d_dump_items ALTER COLUMN id SET DEFAULT nextval('public.d_dump_items_id_seq'::regclass);
INSERT INTO d_dump_items (name) VALUES ('a'), ('b');
SELECT pg_catalog.setval('public.d_dump_items_id_seq', 10, true);
INSERT INTO d_dump_items (name) VALUES ('c');
SELECT setval('d_dump_items_id_seq', 20, false);
INSERT INTO d_dump_items (name) VALUES ('d');
CREATE INDEX d_dump_items_idx ON public.d_dump_items USING btree (name, id);
CREATE FUNCTION public.d_dump_add(x integer) RETURNS integer LANGUAGE sql AS $$SELECT x + 1$$;
ALTER FUNCTION public.d_dump_add(x integer) OWNER TO CURRENT_USER;
-- @query sequence_read_as_a_relation
SELECT last_value, is_called FROM public.d_dump_items_id_seq
-- @query rows_drawn_after_setval
SELECT id, name FROM d_dump_items ORDER BY id
-- @query sql_function_from_a_dump
SELECT d_dump_add(41)
-- @query index_keys_int2vector
SELECT array_to_string(i.indkey, ','), array_length(i.indkey, 1), i.indnatts FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'd_dump_items_idx'
-- @query index_key_positions
SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE c.relname = 'd_dump_items_idx' ORDER BY a.attname
-- @query proargtypes_oidvector
SELECT array_length(proargtypes, 1), pronargs FROM pg_proc WHERE proname = 'd_dump_add'
-- @query sequence_owned_by_its_column
SELECT d.deptype, a.attname FROM pg_depend d JOIN pg_class s ON s.oid = d.objid JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid WHERE s.relname = 'd_dump_items_id_seq' AND d.refclassid = 'pg_class'::regclass
-- @query public_schema_acl_and_comment
SELECT array_length(nspacl, 1), obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 'public'
