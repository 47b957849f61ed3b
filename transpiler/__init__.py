"""SQL transpiler: Postgres / Snowflake SQL with semantic functions -> DuckDB SQL.

Pure: no I/O, no DuckDB connection, no model. See `transpile` and `Statement`.
"""

from transpiler.agent_calls import (
    agent_functions,
    agent_relations,
    set_agent_functions,
    set_agent_relations,
)
from transpiler.column_hints import ColumnHints
from transpiler.core import cache_clear, transpile
from transpiler.errors import TranspileError
from transpiler.model import (
    Marker,
    ResetCommand,
    SetCommand,
    ShowCommand,
    Statement,
    TransactionCommand,
    UtilityCommand,
)
from transpiler.params import explicit_param_casts, infer_param_types

__all__ = [
    "ColumnHints",
    "Marker",
    "ResetCommand",
    "SetCommand",
    "ShowCommand",
    "Statement",
    "TransactionCommand",
    "TranspileError",
    "UtilityCommand",
    "agent_functions",
    "agent_relations",
    "cache_clear",
    "explicit_param_casts",
    "infer_param_types",
    "set_agent_functions",
    "set_agent_relations",
    "transpile",
]
