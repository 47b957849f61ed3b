"""SQL transpiler: Postgres / Snowflake SQL with semantic functions -> DuckDB SQL."""
