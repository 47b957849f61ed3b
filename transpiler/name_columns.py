"""Catalog columns PostgreSQL types `name` (OID 19), as PostgreSQL 15 declares them:
pg_catalog's (relname, attname, typname, nspname...) and information_schema's
sql_identifier columns (a domain over name, which RowDescription reports as name).

Generated from PostgreSQL 15's own catalog (pg_attribute.atttypid = 'name' or a domain
over it). "pg" relations resolve unqualified (pg_catalog is always searched first);
"is" ones only as information_schema.<relation>. Used by name_types.py.
"""

from __future__ import annotations

_TABLE = """
pg pg_am amname
pg pg_attribute attname
pg pg_authid rolname
pg pg_available_extension_versions name schema
pg pg_available_extensions name
pg pg_class relname
pg pg_collation collname
pg pg_constraint conname
pg pg_conversion conname
pg pg_database datname
pg pg_enum enumlabel
pg pg_event_trigger evtname evtevent
pg pg_extension extname
pg pg_foreign_data_wrapper fdwname
pg pg_foreign_server srvname
pg pg_group groname
pg pg_indexes schemaname tablename indexname tablespace
pg pg_language lanname
pg pg_matviews schemaname matviewname matviewowner tablespace
pg pg_namespace nspname
pg pg_opclass opcname
pg pg_operator oprname
pg pg_opfamily opfname
pg pg_policies schemaname tablename policyname
pg pg_policy polname
pg pg_prepared_xacts owner database
pg pg_proc proname
pg pg_publication pubname
pg pg_publication_tables pubname schemaname tablename
pg pg_replication_slots slot_name plugin database
pg pg_rewrite rulename
pg pg_roles rolname
pg pg_rules schemaname tablename rulename
pg pg_sequences schemaname sequencename sequenceowner
pg pg_shadow usename
pg pg_stat_activity datname usename
pg pg_stat_all_indexes schemaname relname indexrelname
pg pg_stat_all_tables schemaname relname
pg pg_stat_database datname
pg pg_stat_database_conflicts datname
pg pg_stat_progress_analyze datname
pg pg_stat_progress_cluster datname
pg pg_stat_progress_copy datname
pg pg_stat_progress_create_index datname
pg pg_stat_progress_vacuum datname
pg pg_stat_replication usename
pg pg_stat_subscription subname
pg pg_stat_subscription_stats subname
pg pg_stat_sys_indexes schemaname relname indexrelname
pg pg_stat_sys_tables schemaname relname
pg pg_stat_user_functions schemaname funcname
pg pg_stat_user_indexes schemaname relname indexrelname
pg pg_stat_user_tables schemaname relname
pg pg_stat_xact_all_tables schemaname relname
pg pg_stat_xact_sys_tables schemaname relname
pg pg_stat_xact_user_functions schemaname funcname
pg pg_stat_xact_user_tables schemaname relname
pg pg_statio_all_indexes schemaname relname indexrelname
pg pg_statio_all_sequences schemaname relname
pg pg_statio_all_tables schemaname relname
pg pg_statio_sys_indexes schemaname relname indexrelname
pg pg_statio_sys_sequences schemaname relname
pg pg_statio_sys_tables schemaname relname
pg pg_statio_user_indexes schemaname relname indexrelname
pg pg_statio_user_sequences schemaname relname
pg pg_statio_user_tables schemaname relname
pg pg_statistic_ext stxname
pg pg_stats schemaname tablename attname
pg pg_stats_ext schemaname tablename statistics_schemaname statistics_name statistics_owner
pg pg_stats_ext_exprs schemaname tablename statistics_schemaname statistics_name
    statistics_owner
pg pg_subscription subname subslotname
pg pg_tables schemaname tablename tableowner tablespace
pg pg_tablespace spcname
pg pg_trigger tgname tgoldtable tgnewtable
pg pg_ts_config cfgname
pg pg_ts_dict dictname
pg pg_ts_parser prsname
pg pg_ts_template tmplname
pg pg_type typname
pg pg_user usename
pg pg_user_mappings srvname usename
pg pg_views schemaname viewname viewowner
is administrable_role_authorizations grantee role_name
is applicable_roles grantee role_name
is attributes udt_catalog udt_schema udt_name attribute_name character_set_catalog
    character_set_schema character_set_name collation_catalog collation_schema
    collation_name attribute_udt_catalog attribute_udt_schema attribute_udt_name
    scope_catalog scope_schema scope_name dtd_identifier
is character_sets character_set_catalog character_set_schema character_set_name
    character_repertoire form_of_use default_collate_catalog default_collate_schema
    default_collate_name
is check_constraint_routine_usage constraint_catalog constraint_schema constraint_name
    specific_catalog specific_schema specific_name
is check_constraints constraint_catalog constraint_schema constraint_name
is collation_character_set_applicability collation_catalog collation_schema collation_name
    character_set_catalog character_set_schema character_set_name
is collations collation_catalog collation_schema collation_name
is column_column_usage table_catalog table_schema table_name column_name dependent_column
is column_domain_usage domain_catalog domain_schema domain_name table_catalog table_schema
    table_name column_name
is column_options table_catalog table_schema table_name column_name option_name
is column_privileges grantor grantee table_catalog table_schema table_name column_name
is column_udt_usage udt_catalog udt_schema udt_name table_catalog table_schema table_name
    column_name
is columns table_catalog table_schema table_name column_name character_set_catalog
    character_set_schema character_set_name collation_catalog collation_schema
    collation_name domain_catalog domain_schema domain_name udt_catalog udt_schema udt_name
    scope_catalog scope_schema scope_name dtd_identifier
is constraint_column_usage table_catalog table_schema table_name column_name
    constraint_catalog constraint_schema constraint_name
is constraint_table_usage table_catalog table_schema table_name constraint_catalog
    constraint_schema constraint_name
is data_type_privileges object_catalog object_schema object_name dtd_identifier
is domain_constraints constraint_catalog constraint_schema constraint_name domain_catalog
    domain_schema domain_name
is domain_udt_usage udt_catalog udt_schema udt_name domain_catalog domain_schema domain_name
is domains domain_catalog domain_schema domain_name character_set_catalog
    character_set_schema character_set_name collation_catalog collation_schema
    collation_name udt_catalog udt_schema udt_name scope_catalog scope_schema scope_name
    dtd_identifier
is element_types object_catalog object_schema object_name collection_type_identifier
    character_set_catalog character_set_schema character_set_name collation_catalog
    collation_schema collation_name udt_catalog udt_schema udt_name scope_catalog
    scope_schema scope_name dtd_identifier
is enabled_roles role_name
is foreign_data_wrapper_options foreign_data_wrapper_catalog foreign_data_wrapper_name
    option_name
is foreign_data_wrappers foreign_data_wrapper_catalog foreign_data_wrapper_name
    authorization_identifier
is foreign_server_options foreign_server_catalog foreign_server_name option_name
is foreign_servers foreign_server_catalog foreign_server_name foreign_data_wrapper_catalog
    foreign_data_wrapper_name authorization_identifier
is foreign_table_options foreign_table_catalog foreign_table_schema foreign_table_name
    option_name
is foreign_tables foreign_table_catalog foreign_table_schema foreign_table_name
    foreign_server_catalog foreign_server_name
is information_schema_catalog_name catalog_name
is key_column_usage constraint_catalog constraint_schema constraint_name table_catalog
    table_schema table_name column_name
is parameters specific_catalog specific_schema specific_name parameter_name
    character_set_catalog character_set_schema character_set_name collation_catalog
    collation_schema collation_name udt_catalog udt_schema udt_name scope_catalog
    scope_schema scope_name dtd_identifier
is referential_constraints constraint_catalog constraint_schema constraint_name
    unique_constraint_catalog unique_constraint_schema unique_constraint_name
is role_column_grants grantor grantee table_catalog table_schema table_name column_name
is role_routine_grants grantor grantee specific_catalog specific_schema specific_name
    routine_catalog routine_schema routine_name
is role_table_grants grantor grantee table_catalog table_schema table_name
is role_udt_grants grantor grantee udt_catalog udt_schema udt_name
is role_usage_grants grantor grantee object_catalog object_schema object_name
is routine_column_usage specific_catalog specific_schema specific_name routine_catalog
    routine_schema routine_name table_catalog table_schema table_name column_name
is routine_privileges grantor grantee specific_catalog specific_schema specific_name
    routine_catalog routine_schema routine_name
is routine_routine_usage specific_catalog specific_schema specific_name routine_catalog
    routine_schema routine_name
is routine_sequence_usage specific_catalog specific_schema specific_name routine_catalog
    routine_schema routine_name sequence_catalog sequence_schema sequence_name
is routine_table_usage specific_catalog specific_schema specific_name routine_catalog
    routine_schema routine_name table_catalog table_schema table_name
is routines specific_catalog specific_schema specific_name routine_catalog routine_schema
    routine_name module_catalog module_schema module_name udt_catalog udt_schema udt_name
    character_set_catalog character_set_schema character_set_name collation_catalog
    collation_schema collation_name type_udt_catalog type_udt_schema type_udt_name
    scope_catalog scope_schema scope_name dtd_identifier to_sql_specific_catalog
    to_sql_specific_schema to_sql_specific_name result_cast_char_set_catalog
    result_cast_char_set_schema result_cast_char_set_name result_cast_collation_catalog
    result_cast_collation_schema result_cast_collation_name result_cast_type_udt_catalog
    result_cast_type_udt_schema result_cast_type_udt_name result_cast_scope_catalog
    result_cast_scope_schema result_cast_scope_name result_cast_dtd_identifier
is schemata catalog_name schema_name schema_owner default_character_set_catalog
    default_character_set_schema default_character_set_name
is sequences sequence_catalog sequence_schema sequence_name
is table_constraints constraint_catalog constraint_schema constraint_name table_catalog
    table_schema table_name
is table_privileges grantor grantee table_catalog table_schema table_name
is tables table_catalog table_schema table_name self_referencing_column_name
    user_defined_type_catalog user_defined_type_schema user_defined_type_name
is transforms udt_catalog udt_schema udt_name specific_catalog specific_schema specific_name
    group_name
is triggered_update_columns trigger_catalog trigger_schema trigger_name event_object_catalog
    event_object_schema event_object_table event_object_column
is triggers trigger_catalog trigger_schema trigger_name event_object_catalog
    event_object_schema event_object_table action_reference_old_table
    action_reference_new_table action_reference_old_row action_reference_new_row
is udt_privileges grantor grantee udt_catalog udt_schema udt_name
is usage_privileges grantor grantee object_catalog object_schema object_name
is user_defined_types user_defined_type_catalog user_defined_type_schema
    user_defined_type_name ordering_routine_catalog ordering_routine_schema
    ordering_routine_name character_set_catalog character_set_schema character_set_name
    collation_catalog collation_schema collation_name source_dtd_identifier
    ref_dtd_identifier
is user_mapping_options authorization_identifier foreign_server_catalog foreign_server_name
    option_name
is user_mappings authorization_identifier foreign_server_catalog foreign_server_name
is view_column_usage view_catalog view_schema view_name table_catalog table_schema
    table_name column_name
is view_routine_usage table_catalog table_schema table_name specific_catalog specific_schema
    specific_name
is view_table_usage view_catalog view_schema view_name table_catalog table_schema table_name
is views table_catalog table_schema table_name
"""


def _load() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    tables: dict[str, dict[str, list[str]]] = {"pg": {}, "is": {}}
    last: list[str] = []
    for line in _TABLE.strip("\n").split("\n"):
        if line.startswith(" "):
            last.extend(line.split())
            continue
        schema, relation, *columns = line.split()
        last = tables[schema][relation] = columns
    return tuple(  # type: ignore[return-value]
        {rel: frozenset(cols) for rel, cols in tables[s].items()} for s in ("pg", "is")
    )


# relation -> its name-typed columns
PG_CATALOG, INFORMATION_SCHEMA = _load()
