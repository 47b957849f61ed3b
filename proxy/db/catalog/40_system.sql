-- Databases, roles, settings, access methods and the catalogs Postgres has but
-- DuckDB has no counterpart for (empty, with Postgres' columns, so joins bind).

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_database AS
SELECT d.oid, d.datname, 10::BIGINT AS datdba,
       6::INTEGER AS encoding, 'c' AS datlocprovider, FALSE AS datistemplate,
       TRUE AS datallowconn, -1::INTEGER AS datconnlimit, 0::BIGINT AS datfrozenxid,
       0::BIGINT AS datminmxid, 1663::BIGINT AS dattablespace, 'C.UTF-8' AS datcollate,
       'C.UTF-8' AS datctype, NULL::VARCHAR AS daticulocale, NULL::VARCHAR AS datcollversion,
       NULL::VARCHAR[] AS datacl
-- the server's databases (proxy/db/databases.py), read as the query runs
FROM (SELECT unnest(__hati_databases(), recursive := true)) d;

-- rolsuper: configured users are superusers; API-key logins (added by
-- proxy/access/ownership.py as they create objects: agent@org, org) are not.
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_roles
    (oid BIGINT, rolname VARCHAR, rolsuper BOOLEAN DEFAULT TRUE);
INSERT INTO __hati_catalog.pg.__hati_roles (oid, rolname) VALUES {{role_rows}};
-- PostgreSQL 15's predefined role owning public (psql's \dn; \du leaves pg_* roles out)
INSERT INTO __hati_catalog.pg.__hati_roles VALUES (6171, 'pg_database_owner', FALSE);

-- The bootstrap superuser (oid 10) also has REPLICATION and BYPASSRLS, as initdb's does.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_roles AS
SELECT rolname, rolsuper, TRUE AS rolinherit, rolsuper AS rolcreaterole,
       oid <> 6171 AS rolcreatedb, oid <> 6171 AS rolcanlogin, oid = 10 AS rolreplication,
       -1::INTEGER AS rolconnlimit, '********' AS rolpassword,
       NULL::TIMESTAMPTZ AS rolvaliduntil, oid = 10 AS rolbypassrls,
       NULL::VARCHAR[] AS rolconfig, oid
FROM __hati_catalog.pg.__hati_roles;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_authid AS
SELECT oid, rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,
       rolreplication, rolbypassrls, rolconnlimit, NULL::VARCHAR AS rolpassword, rolvaliduntil
FROM __hati_catalog.pg.pg_roles;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_user AS
SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb, rolsuper AS usesuper,
       rolreplication AS userepl, rolbypassrls AS usebypassrls, '********' AS passwd,
       rolvaliduntil AS valuntil, rolconfig AS useconfig
FROM __hati_catalog.pg.pg_roles;

CREATE OR REPLACE TABLE __hati_catalog.pg.pg_auth_members
    (oid BIGINT, roleid BIGINT, member BIGINT, grantor BIGINT, admin_option BOOLEAN);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_owner_name(cls, nsp, obj) AS (
    SELECT min(__h_r.rolname) FROM __hati_catalog.pg.__hati_owners __h_o
    JOIN __hati_catalog.pg.__hati_roles __h_r ON __h_r.oid = __h_o.owner_oid
    WHERE __h_o.class = cls AND __h_o.nspname = nsp AND __h_o.name = lower(obj));

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_userbyid(role_oid) AS coalesce(
    (SELECT __h_r.rolname FROM __hati_catalog.pg.__hati_roles __h_r WHERE __h_r.oid = role_oid),
    'unknown (OID=' || role_oid || ')');

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_encoding_to_char(enc) AS
    CASE enc WHEN 6 THEN 'UTF8' WHEN 0 THEN 'SQL_ASCII' WHEN 8 THEN 'LATIN1' ELSE '' END;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_char_to_encoding(name) AS
    CASE upper(name) WHEN 'UTF8' THEN 6 WHEN 'SQL_ASCII' THEN 0 WHEN 'LATIN1' THEN 8 ELSE -1 END;

-- hnsw: pgvector's access method, for DuckDB's HNSW indexes (30_relations.sql).
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_am AS SELECT * FROM (VALUES
    (2::BIGINT, 'heap', 'heap_tableam_handler', 't'),
    (403, 'btree', 'bthandler', 'i'),
    (405, 'hash', 'hashhandler', 'i'),
    (13581, 'hnsw', 'hnswhandler', 'i')  -- pgvector's (built in: pg_depend)
) v(oid, amname, amhandler, amtype);

CREATE OR REPLACE TABLE __hati_catalog.pg.pg_tablespace AS SELECT * FROM (VALUES
    (1663::BIGINT, 'pg_default', 10::BIGINT, NULL::VARCHAR[], NULL::VARCHAR[]),
    (1664, 'pg_global', 10, NULL, NULL)
) v(oid, spcname, spcowner, spcacl, spcoptions);

CREATE OR REPLACE TABLE __hati_catalog.pg.pg_collation AS SELECT * FROM (VALUES
    (100::BIGINT, 'default', 11::BIGINT, 10::BIGINT, 'd', TRUE, -1, NULL::VARCHAR, NULL::VARCHAR),
    (950, 'C', 11, 10, 'c', TRUE, -1, 'C', 'C'),
    (951, 'POSIX', 11, 10, 'c', TRUE, -1, 'POSIX', 'POSIX')
) v(oid, collname, collnamespace, collowner, collprovider, collisdeterministic,
    collencoding, collcollate, collctype),
LATERAL (SELECT NULL::VARCHAR AS colliculocale, NULL::VARCHAR AS collversion);

CREATE OR REPLACE TABLE __hati_catalog.pg.pg_language AS SELECT * FROM (VALUES
    (12::BIGINT, 'internal', FALSE), (13, 'c', FALSE), (14, 'sql', TRUE),
    (13576, 'plpgsql', TRUE)
) v(oid, lanname, lanpltrusted),
-- plpgsql's handler oid is not 0: psql's \dL lists the languages that have one; its
-- handler functions are in pg_proc (__hati_builtin_proc below), as psql's \dL+ shows them
LATERAL (SELECT 10::BIGINT AS lanowner, v.oid > 14 AS lanispl,
                CASE WHEN v.oid > 14 THEN 13573 ELSE 0 END::BIGINT AS lanplcallfoid,
                CASE WHEN v.oid > 14 THEN 13574 ELSE 0 END::BIGINT AS laninline,
                CASE WHEN v.oid > 14 THEN 13575 ELSE 0 END::BIGINT AS lanvalidator,
                NULL::VARCHAR[] AS lanacl);

-- The extensions built in (proxy/pgserver/commands.py BUILT_IN_EXTENSIONS): CREATE EXTENSION of
-- these succeeds, and tools that look them up here find them. Their OIDs are below 16384
-- (FirstNormalObjectId), as plpgsql's: objects made at initdb, which pg_dump leaves out,
-- with their members (pg_depend deptype 'e', 50_functions.sql).
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_extension AS SELECT * FROM (VALUES
    (13577::BIGINT, 'plpgsql', 10::BIGINT, 11::BIGINT, FALSE, '1.0',
     NULL::BIGINT[], NULL::VARCHAR[]),
    (13578::BIGINT, 'vector', 10::BIGINT, 2200::BIGINT, TRUE, '0.8.0', NULL, NULL),
    (13579::BIGINT, 'uuid-ossp', 10::BIGINT, 2200::BIGINT, TRUE, '1.1', NULL, NULL),
    (13580::BIGINT, 'hatiproxy', 10::BIGINT, 2200::BIGINT, FALSE, '0.1', NULL, NULL),
    (13582::BIGINT, 'pgcrypto', 10::BIGINT, 2200::BIGINT, TRUE, '1.3', NULL, NULL)
) v(oid, extname, extowner, extnamespace, extrelocatable, extversion, extconfig, extcondition);

-- What CREATE EXTENSION could install: the built-in ones, each installed (ActiveRecord's
-- extension_enabled? / enable_extension read installed_version here).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_available_extensions AS
SELECT e.extname AS name, e.extversion AS default_version, e.extversion AS installed_version,
       c.comment
FROM __hati_catalog.pg.pg_extension e
JOIN (VALUES ('plpgsql', 'PL/pgSQL procedural language'),
             ('vector', 'vector data type and ivfflat and hnsw access methods'),
             ('uuid-ossp', 'generate universally unique identifiers (UUIDs)'),
             ('hatiproxy', 'hatiproxy''s agent functions and semantic SQL'),
             ('pgcrypto', 'cryptographic functions')) c(name, comment)
  ON c.name = e.extname;

-- Settings clients read in catalog queries: every PostgreSQL 15 setting, with the session
-- layer's defaults (proxy.db.settings.DEFAULTS) and server constants as their values and
-- PostgreSQL's as boot_val (settings_rows() in install.py).
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_settings AS
SELECT name, setting, NULL::VARCHAR AS unit, category, name AS short_desc,
       NULL::VARCHAR AS extra_desc, context,
       CASE WHEN setting IN ('on', 'off') THEN 'bool'
            WHEN regexp_full_match(setting, '-?\d+') THEN 'integer' ELSE 'string' END AS vartype,
       CASE WHEN setting = boot_val THEN 'default' ELSE 'configuration file' END AS source,
       NULL::VARCHAR AS min_val, NULL::VARCHAR AS max_val,
       NULL::VARCHAR[] AS enumvals, boot_val, setting AS reset_val,
       NULL::VARCHAR AS sourcefile, NULL::INTEGER AS sourceline, FALSE AS pending_restart
FROM (VALUES {{settings_rows}}) v(name, setting, context, category, boot_val);
-- The session's values (SET, the startup packet's application_name) where the server mirrors
-- them as DuckDB variables pg:<name> (proxy/pgserver/setting_mirror.py; a statement naming
-- pg_settings gets them): source 'session' when one differs from the server's.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_settings AS
SELECT s.name, coalesce(v.value, s.setting) AS setting, s.unit, s.category, s.short_desc,
       s.extra_desc, s.context, s.vartype,
       CASE WHEN v.value IS NOT NULL AND v.value <> s.setting AND s.category <> 'Hatiproxy'
            THEN 'session' ELSE s.source END AS source,
       s.min_val, s.max_val, s.enumvals, s.boot_val, s.reset_val, s.sourcefile,
       s.sourceline, s.pending_restart
FROM __hati_catalog.pg.__hati_settings s
LEFT JOIN duckdb_variables() v ON v.name = 'pg:' || lower(s.name);
-- No GRANT SET / ALTER SYSTEM on parameters (psql's \dconfig+ reads their ACLs here).
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_parameter_acl
    (oid BIGINT, parname VARCHAR, paracl VARCHAR[]);

-- Empty catalogs (columns as in Postgres 15) so client joins bind and return nothing.
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_inherits
    (inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, inhdetachpending BOOLEAN);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_policy
    (oid BIGINT, polname VARCHAR, polrelid BIGINT, polcmd VARCHAR, polpermissive BOOLEAN,
     polroles BIGINT[], polqual VARCHAR, polwithcheck VARCHAR);
-- pg_policies: no row-level security policies (drizzle-kit reads it on push / pull).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_policies AS
SELECT NULL::VARCHAR AS schemaname, NULL::VARCHAR AS tablename, polname AS policyname,
       CASE WHEN polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END AS permissive,
       NULL::VARCHAR[] AS roles, polcmd AS cmd, polqual AS qual, polwithcheck AS with_check
FROM __hati_catalog.pg.pg_policy;
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_statistic_ext
    (oid BIGINT, stxrelid BIGINT, stxname VARCHAR, stxnamespace BIGINT, stxowner BIGINT,
     stxstattarget INTEGER, stxkeys SMALLINT[], stxkind VARCHAR[], stxexprs VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_publication
    (oid BIGINT, pubname VARCHAR, pubowner BIGINT, puballtables BOOLEAN, pubinsert BOOLEAN,
     pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_publication_namespace
    (oid BIGINT, pnpubid BIGINT, pnnspid BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_publication_rel
    (oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, prattrs SMALLINT[]);
-- One default btree operator class per type, `<type>_ops` as PostgreSQL names most of
-- them; pg_index.indclass points at its column's (drizzle-kit joins them on push).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_opclass AS
SELECT (268435456 + t.oid)::BIGINT AS oid, 403::BIGINT AS opcmethod,
       t.typname || '_ops' AS opcname, 11::BIGINT AS opcnamespace, 10::BIGINT AS opcowner,
       (268435456 + t.oid)::BIGINT AS opcfamily, t.oid::BIGINT AS opcintype,
       TRUE AS opcdefault, 0::BIGINT AS opckeytype
FROM __hati_catalog.pg.pg_type t
WHERE t.typcategory <> 'A';
-- COMMENT ON DATABASE: the server's registry (proxy/pgserver/object_comments.py); one
-- database, oid 16384 (pg_database above).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_shdescription AS
SELECT 16384::BIGINT AS objoid, 1262::BIGINT AS classoid, description
FROM {{duck_db_ident}}.main.__hati_comments WHERE kind = 'd' AND description IS NOT NULL;
-- The labels of user ENUM types (pg_type rows with typtype 'e', 10_types.sql), in order.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_enum AS
SELECT (type_oid * 65536 + i)::BIGINT AS oid, type_oid::BIGINT AS enumtypid,
       i::REAL AS enumsortorder, labels[i] AS enumlabel
FROM (SELECT type_oid, labels, generate_subscripts(labels, 1) AS i
      FROM duckdb_types()
      WHERE logical_type = 'ENUM' AND NOT internal AND database_name = {{duck_db}});
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_partitioned_table
    (partrelid BIGINT, partstrat VARCHAR, partnatts SMALLINT, partdefid BIGINT,
     partattrs SMALLINT[], partclass BIGINT[], partcollation BIGINT[], partexprs VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_foreign_table
    (ftrelid BIGINT, ftserver BIGINT, ftoptions VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_foreign_server
    (oid BIGINT, srvname VARCHAR, srvowner BIGINT, srvfdw BIGINT, srvtype VARCHAR,
     srvversion VARCHAR, srvacl VARCHAR[], srvoptions VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_foreign_data_wrapper
    (oid BIGINT, fdwname VARCHAR, fdwowner BIGINT, fdwhandler BIGINT, fdwvalidator BIGINT,
     fdwacl VARCHAR[], fdwoptions VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_event_trigger
    (oid BIGINT, evtname VARCHAR, evtevent VARCHAR, evtowner BIGINT, evtfoid BIGINT,
     evtenabled VARCHAR, evttags VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_cast
    (oid BIGINT, castsource BIGINT, casttarget BIGINT, castfunc BIGINT,
     castcontext VARCHAR, castmethod VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_conversion
    (oid BIGINT, conname VARCHAR, connamespace BIGINT, conowner BIGINT,
     conforencoding INTEGER, contoencoding INTEGER, conproc BIGINT, condefault BOOLEAN);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_operator
    (oid BIGINT, oprname VARCHAR, oprnamespace BIGINT, oprowner BIGINT, oprkind VARCHAR,
     oprcanmerge BOOLEAN, oprcanhash BOOLEAN, oprleft BIGINT, oprright BIGINT,
     oprresult BIGINT, oprcom BIGINT, oprnegate BIGINT, oprcode BIGINT,
     oprrest BIGINT, oprjoin BIGINT);  -- regproc as oids: pg_dump reads oprcode::oid
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_locks
    (locktype VARCHAR, database BIGINT, relation BIGINT, pid INTEGER, mode VARCHAR,
     granted BOOLEAN);
-- One row per live client connection, from the server's registry (the Python function
-- is proxy/db/backend_functions.py; the variable identifies the calling session).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_activity AS
SELECT unnest(__hati_backend_activity(getvariable('__hati_backend')), recursive := true);
-- More empty catalogs pg_dump reads (columns as in PostgreSQL 15).
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_init_privs
    (objoid BIGINT, classoid BIGINT, objsubid INTEGER, privtype VARCHAR, initprivs VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_transform
    (oid BIGINT, trftype BIGINT, trflang BIGINT, trffromsql BIGINT, trftosql BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_default_acl
    (oid BIGINT, defaclrole BIGINT, defaclnamespace BIGINT, defaclobjtype VARCHAR,
     defaclacl VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_aggregate
    (aggfnoid BIGINT, aggkind VARCHAR, aggnumdirectargs SMALLINT, aggtransfn BIGINT,
     aggfinalfn BIGINT, aggcombinefn BIGINT, aggserialfn BIGINT, aggdeserialfn BIGINT,
     aggmtransfn BIGINT, aggminvtransfn BIGINT, aggmfinalfn BIGINT, aggfinalextra BOOLEAN,
     aggmfinalextra BOOLEAN, aggfinalmodify VARCHAR, aggmfinalmodify VARCHAR,
     aggsortop BIGINT, aggtranstype BIGINT, aggtransspace INTEGER, aggmtranstype BIGINT,
     aggmtransspace INTEGER, agginitval VARCHAR, aggminitval VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_opfamily
    (oid BIGINT, opfmethod BIGINT, opfname VARCHAR, opfnamespace BIGINT, opfowner BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_amop
    (oid BIGINT, amopfamily BIGINT, amoplefttype BIGINT, amoprighttype BIGINT,
     amopstrategy SMALLINT, amoppurpose VARCHAR, amopopr BIGINT, amopmethod BIGINT,
     amopsortfamily BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_amproc
    (oid BIGINT, amprocfamily BIGINT, amproclefttype BIGINT, amprocrighttype BIGINT,
     amprocnum SMALLINT, amproc BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_ts_config
    (oid BIGINT, cfgname VARCHAR, cfgnamespace BIGINT, cfgowner BIGINT, cfgparser BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_ts_config_map
    (mapcfg BIGINT, maptokentype INTEGER, mapseqno INTEGER, mapdict BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_ts_dict
    (oid BIGINT, dictname VARCHAR, dictnamespace BIGINT, dictowner BIGINT,
     dicttemplate BIGINT, dictinitoption VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_ts_parser
    (oid BIGINT, prsname VARCHAR, prsnamespace BIGINT, prsstart BIGINT, prstoken BIGINT,
     prsend BIGINT, prsheadline BIGINT, prslextype BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_ts_template
    (oid BIGINT, tmplname VARCHAR, tmplnamespace BIGINT, tmplinit BIGINT, tmpllexize BIGINT);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_subscription
    (oid BIGINT, subdbid BIGINT, subskiplsn VARCHAR, subname VARCHAR, subowner BIGINT,
     subenabled BOOLEAN, subbinary BOOLEAN, substream BOOLEAN, subtwophasestate VARCHAR,
     subdisableonerr BOOLEAN, subconninfo VARCHAR, subslotname VARCHAR,
     subsynccommit VARCHAR, subpublications VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_seclabel
    (objoid BIGINT, classoid BIGINT, objsubid INTEGER, provider VARCHAR, label VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_shseclabel
    (objoid BIGINT, classoid BIGINT, provider VARCHAR, label VARCHAR);
-- pg_dump reads security labels from this view (none: no label providers here)
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_seclabels AS
SELECT objoid, classoid, objsubid, NULL::VARCHAR AS objtype, NULL::BIGINT AS objnamespace,
       NULL::VARCHAR AS objname, provider, label
FROM __hati_catalog.pg.pg_seclabel;
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_shdepend
    (dbid BIGINT, classid BIGINT, objid BIGINT, objsubid INTEGER, refclassid BIGINT,
     refobjid BIGINT, deptype VARCHAR);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_largeobject_metadata
    (oid BIGINT, lomowner BIGINT, lomacl VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_db_role_setting
    (setdatabase BIGINT, setrole BIGINT, setconfig VARCHAR[]);
CREATE OR REPLACE TABLE __hati_catalog.pg.pg_user_mapping
    (oid BIGINT, umuser BIGINT, umserver BIGINT, umoptions VARCHAR[]);
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_user_mappings AS
SELECT um.oid AS umid, s.oid AS srvid, s.srvname, um.umuser, NULL::VARCHAR AS usename,
       um.umoptions
FROM __hati_catalog.pg.pg_user_mapping um
JOIN __hati_catalog.pg.pg_foreign_server s ON s.oid = um.umserver;
-- PostgreSQL's built-in functions that its casts and aggregates name (42_pg_builtins.sql),
-- listed in pg_proc in pg_catalog (\dC's Function, \da), as PostgreSQL prints them.
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_builtin_proc
    (oid BIGINT, proname VARCHAR, prokind VARCHAR, prorettype BIGINT, proargtypes BIGINT[],
     pronargs INTEGER, proretset BOOLEAN, provolatile VARCHAR, proisstrict BOOLEAN,
     proparallel VARCHAR, prolang BIGINT, prosrc VARCHAR, result_text VARCHAR,
     arguments_text VARCHAR, identity_text VARCHAR);
-- plpgsql's handler functions (members of the extension plpgsql: pg_depend, 50_functions.sql)
INSERT INTO __hati_catalog.pg.__hati_builtin_proc VALUES
    (13573, 'plpgsql_call_handler', 'f', 2280, [], 0, FALSE, 'v', FALSE, 'u', 13,
     'plpgsql_call_handler', 'language_handler', '', ''),
    (13574, 'plpgsql_inline_handler', 'f', 2278, [2281], 1, FALSE, 'v', TRUE, 'u', 13,
     'plpgsql_inline_handler', 'void', 'internal', 'internal'),
    (13575, 'plpgsql_validator', 'f', 2278, [26], 1, FALSE, 'v', TRUE, 'u', 13,
     'plpgsql_validator', 'void', 'oid', 'oid');
-- PostgreSQL's descriptions of its built-in objects (pg_description, 42_pg_builtins.sql).
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_builtin_description
    (objoid BIGINT, classoid BIGINT, objsubid INTEGER, description VARCHAR);
