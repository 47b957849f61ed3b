"""One settings object: defaults < config file (TOML) < environment (HATIDATA_*) < CLI flags.

Every setting is declared once in SETTINGS; the CLI flags, the environment
variables and the README's configuration table all come from that list.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


def _bool(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {value!r}")


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env(self) -> str:
        return "HATIDATA_" + self.name.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


SETTINGS: tuple[Setting, ...] = (
    Setting("host", "127.0.0.1", "Address the Postgres wire server listens on."),
    Setting("port", 5439, "Postgres wire protocol port.", int),
    Setting(
        "data_dir",
        "~/.local/share/hatiproxy",
        "Directory for the database file, models and certificates ($XDG_DATA_HOME aware).",
    ),
    Setting(
        "database",
        "",
        "DuckDB database file; empty = <data_dir>/hatiproxy.duckdb; ':memory:' for no file.",
    ),
    Setting(
        "lake_catalog",
        "",
        "DuckLake catalog, e.g. 'postgres:dbname=lake host=db user=hati': the users' tables "
        "become a DuckLake shared by every proxy started with the same catalog (empty = the "
        "local DuckDB file). See docs/deployment.md.",
    ),
    Setting(
        "lake_data",
        "",
        "DuckLake data path (a directory every proxy of the lake reaches); needed when the "
        "catalog is created, optional after (the catalog remembers it).",
    ),
    Setting(
        "users",
        "",
        "Users and passwords as 'user:password,user2:password2'. Empty = no passwords.",
    ),
    Setting(
        "auth_method",
        "",
        "trust, password (cleartext), md5 or scram-sha-256; empty = scram-sha-256 when "
        "users are configured, else trust.",
    ),
    Setting(
        "allow_remote_trust",
        False,
        "Allow passwordless (trust) logins from non-loopback clients.",
        _bool,
    ),
    Setting("tls_cert", "", "PEM certificate file for TLS (SSLRequest answered 'S')."),
    Setting("tls_key", "", "PEM private key file for TLS."),
    Setting(
        "tls_self_signed",
        False,
        "Generate (once) and use a self-signed development certificate in <data_dir>/tls.",
        _bool,
    ),
    Setting(
        "max_connections",
        100,
        "Concurrent client connections; more get SQLSTATE 53300 (`sorry, too many clients"
        " already`), also when logins race.",
        int,
    ),
    Setting(
        "running_connections",
        0,
        "Client connections that run at once (0 = four per CPU core, at least 8); the"
        " others wait their turn in arrival order, and one running over 50 ms stops"
        " keeping them out (fair service under load, no GIL scramble).",
        int,
    ),
    Setting(
        "statement_timeout_ms",
        0,
        "Default statement_timeout in milliseconds (0 = none); sessions may SET their own."
        " As in PostgreSQL it counts from the statement's arrival, the wait for a turn"
        " (`--running-connections`) included: a statement whose time ran out while it"
        " waited fails with 57014 without running. It also bounds a statement's agent function calls (`store_memory`,"
        " `search_memory`, ...) while they wait on the server's queues: 57014 `canceling"
        " statement due to statement timeout` (a write already queued may still commit;"
        " `store_memory` deduplicates a retry).",
        int,
    ),
    Setting(
        "event_loop",
        "uvloop",
        "asyncio event loop: uvloop (libuv, lower per-query latency) or asyncio (stdlib).",
    ),
    Setting(
        "duckdb_threads",
        0,
        "DuckDB threads of the users' database (0 = DuckDB's default).",
        int,
    ),
    Setting(
        "agent_duckdb_threads",
        1,
        "DuckDB threads of the agent layer's own database (0 = DuckDB's default): its"
        " statements are short, and a worker thread only adds a hand-off to each.",
        int,
    ),
    Setting("duckdb_memory_limit", "", "DuckDB memory_limit, e.g. '4GB' (empty = default)."),
    Setting("log_level", "INFO", "Logging level: DEBUG, INFO, WARNING, ERROR."),
    Setting(
        "log_statement",
        "none",
        "Statements logged as they run, as PostgreSQL's log_statement: none, ddl, mod "
        "(ddl and data changes) or all; superusers may SET it per session.",
    ),
    Setting(
        "log_min_duration_statement",
        -1,
        "Log each statement that runs at least this many milliseconds, with its duration "
        "(-1 = off, 0 = all), as PostgreSQL's log_min_duration_statement.",
        int,
    ),
    Setting(
        "embedding_provider",
        "onnx",
        "onnx (a local model) or hash (deterministic test vectors; never a silent fallback).",
    ),
    Setting(
        "embedding_model",
        "",
        "Installed model to use; empty = bge-small-en-v1.5 if installed, else all-minilm-l6-v2.",
    ),
    Setting("embedding_threads", 1, "onnxruntime intra-op threads.", int),
    Setting(
        "embedding_precision",
        "fp32",
        "fp32 (the model as installed) or int8 (a quantized copy made once beside it: "
        "~2x faster, vectors at cosine ~0.99 to fp32; switching re-embeds stored memories).",
    ),
    Setting("embedding_batch_size", 32, "Texts per background embedding batch.", int),
    Setting(
        "embedding_flush_interval_ms",
        1000,
        "Longest wait before a partial background batch is embedded.",
        int,
    ),
    Setting("model_dir", "", "Model cache directory; empty = <data_dir>/models."),
    Setting(
        "embedding_cache_entries",
        4_096,
        "Embeddings kept in RAM (LRU, ~1.9 KB each at 384 dims).",
        int,
    ),
    Setting(
        "embedding_cache_table_rows",
        20_000,
        "Rows the embedding cache table keeps (the oldest-written half dropped beyond it;"
        " 0 = all).",
        int,
    ),
    Setting("org_id", "local", "Organisation id of connections that carry no API key."),
    Setting(
        "default_agent",
        "default",
        "Agent of callers that carry no agent key and name no agent (the same on SQL, MCP "
        "and REST; see 'Who is the agent?').",
    ),
    Setting("memory_enabled", True, "Enable the agent memory subsystem.", _bool),
    Setting("memory_max_results", 100, "Largest top_k a memory search may return.", int),
    Setting(
        "memory_score_weights",
        "0.5,0.25,0.1,0.1,0.05",
        "Hybrid memory score weights: semantic, keyword, recency, importance, confidence.",
    ),
    Setting(
        "access_tracker_flush_interval_secs",
        60,
        "How often memory access counts and API-key usage are flushed to DuckDB (and at shutdown).",
        int,
    ),
    Setting("mcp_port", 5440, "MCP over HTTP port (POST /mcp); 0 = off.", int),
    Setting(
        "rest_port", 8080, "REST control plane port (/v1/..., /health, /metrics); 0 = off.", int
    ),
    Setting(
        "max_request_body_bytes",
        16 * 1024 * 1024,
        "Largest REST / MCP-over-HTTP request body; larger ones get 413.",
        int,
    ),
    Setting(
        "rate_limit_per_minute",
        1200,
        "REST / MCP-over-HTTP requests per API key per minute (0 = unlimited; callers "
        "without a valid key: per source address); more get 429.",
        int,
    ),
    Setting(
        "auth_failure_limit",
        5,
        "Failed logins per source address before further attempts are slowed down.",
        int,
    ),
    Setting(
        "auth_ban_seconds",
        300,
        "How long a source address is refused after 4x auth_failure_limit failed logins.",
        int,
    ),
    Setting(
        "trigger_webhook_url",
        "",
        "Default destination of trigger webhook actions that name no URL (stored on the "
        "trigger when it is created; the webhook_allowed_hosts rules apply to it too).",
    ),
    Setting(
        "maintenance_enabled", True, "Run memory consolidation and eviction on schedule.", _bool
    ),
    Setting(
        "consolidation_cron",
        "0 */6 * * *",
        "When (cron, UTC) memories not accessed for 7 days lose confidence.",
    ),
    Setting("eviction_cron", "0 3 * * *", "When (cron, UTC) memories are evicted."),
    Setting(
        "agent_compaction_min_deleted",
        2_000,
        "Deleted rows an agent table (memories, their vectors) may hold in storage before it"
        " is rewritten without them (DuckDB keeps them until their whole row group goes);"
        " 0 = never rewrite.",
        int,
    ),
    Setting(
        "agent_compaction_deleted_fraction",
        0.25,
        "A table is rewritten only once its deleted rows also reach this share of its live"
        " rows (so a rewrite's cost per deleted row stays bounded).",
        float,
    ),
    Setting(
        "agent_compaction_interval_secs",
        30.0,
        "How often the agent journal's applier counts the agent tables' deleted rows.",
        float,
    ),
    Setting(
        "eviction_max_per_agent",
        0,
        "Scheduled eviction keeps at most this many memories per agent (0 = no cap).",
        int,
    ),
    Setting(
        "summary_llm_url",
        "",
        "OpenAI-compatible API base (e.g. http://127.0.0.1:11434/v1) that summarises "
        "sessions; empty = a local extractive summary by the embedding model.",
    ),
    Setting("summary_llm_model", "", "The model summary_llm_url is asked for."),
    Setting("summary_llm_api_key", "", "Bearer token for summary_llm_url (if it wants one)."),
    Setting(
        "webhook_allowed_hosts",
        "",
        "Comma-separated hosts/addresses webhooks may reach even though they are link-local, "
        "metadata or this server's own ports (refused by default).",
    ),
)

# Values of embedding_precision (proxy/embedding/onnx_embedder.py PRECISIONS; not imported
# here: the embedding package pulls in onnxruntime).
EMBEDDING_PRECISIONS = ("fp32", "int8")

# PostgreSQL's log_statement values, each logging more than the one before.
LOG_STATEMENT_LEVELS = ("none", "ddl", "mod", "all")

# Settings the embedding package reads from the environment itself.
EMBEDDING_ENV = (
    "embedding_provider",
    "embedding_model",
    "embedding_threads",
    "embedding_precision",
    "embedding_batch_size",
    "embedding_flush_interval_ms",
    "model_dir",
)


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 5439
    data_dir: str = "~/.local/share/hatiproxy"
    database: str = ""
    lake_catalog: str = ""
    lake_data: str = ""
    users: str = ""
    auth_method: str = ""
    allow_remote_trust: bool = False
    tls_cert: str = ""
    tls_key: str = ""
    tls_self_signed: bool = False
    max_connections: int = 100
    running_connections: int = 0
    statement_timeout_ms: int = 0
    event_loop: str = "uvloop"
    duckdb_threads: int = 0
    agent_duckdb_threads: int = 1
    duckdb_memory_limit: str = ""
    log_level: str = "INFO"
    log_statement: str = "none"
    log_min_duration_statement: int = -1
    embedding_provider: str = "onnx"
    embedding_model: str = ""
    embedding_threads: int = 1
    embedding_precision: str = "fp32"
    embedding_batch_size: int = 32
    embedding_flush_interval_ms: int = 1000
    model_dir: str = ""
    embedding_cache_entries: int = 4_096
    embedding_cache_table_rows: int = 20_000
    org_id: str = "local"
    default_agent: str = "default"
    memory_enabled: bool = True
    memory_max_results: int = 100
    memory_score_weights: str = "0.5,0.25,0.1,0.1,0.05"
    access_tracker_flush_interval_secs: int = 60
    mcp_port: int = 5440
    rest_port: int = 8080
    max_request_body_bytes: int = 16 * 1024 * 1024
    rate_limit_per_minute: int = 1200
    auth_failure_limit: int = 5
    auth_ban_seconds: int = 300
    trigger_webhook_url: str = ""
    maintenance_enabled: bool = True
    consolidation_cron: str = "0 */6 * * *"
    eviction_cron: str = "0 3 * * *"
    agent_compaction_min_deleted: int = 2_000
    agent_compaction_deleted_fraction: float = 0.25
    agent_compaction_interval_secs: float = 30.0
    eviction_max_per_agent: int = 0
    summary_llm_url: str = ""
    summary_llm_model: str = ""
    summary_llm_api_key: str = ""
    webhook_allowed_hosts: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # checked here, so a bad value from the file, the environment or a flag stops the
        # start (cli: "hatiproxy: ...", exit 2) instead of quietly disabling semantic SQL
        precision = str(self.embedding_precision).strip().lower()
        if precision not in EMBEDDING_PRECISIONS:
            raise ValueError(
                f"embedding_precision must be fp32 or int8, not {self.embedding_precision!r} "
                "(--embedding-precision / HATIDATA_EMBEDDING_PRECISION)"
            )
        object.__setattr__(self, "embedding_precision", precision)
        level = str(self.log_statement).strip().lower()
        if level not in LOG_STATEMENT_LEVELS:
            raise ValueError(
                f"log_statement must be none, ddl, mod or all, not {self.log_statement!r} "
                "(--log-statement / HATIDATA_LOG_STATEMENT)"
            )
        object.__setattr__(self, "log_statement", level)
        if int(self.log_min_duration_statement) < -1:
            raise ValueError(
                "log_min_duration_statement must be -1 (off) or a number of milliseconds "
                "(--log-min-duration-statement / HATIDATA_LOG_MIN_DURATION_STATEMENT)"
            )

    @property
    def database_path(self) -> str:
        if self.database:
            return self.database
        return str(Path(self.data_dir) / "hatiproxy.duckdb")

    @property
    def agent_database_path(self) -> str:
        """The agent layer's own database file, beside the users' (`x.duckdb` ->
        `x.agent.duckdb`); `:memory:` with an in-memory users' database."""
        users = self.database_path
        if users == ":memory:":
            return users
        path = Path(users)
        return str(path.with_name(path.stem + ".agent.duckdb"))

    @property
    def user_passwords(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in self.users.split(","))):
            user, sep, password = item.partition(":")
            if not sep or not user:
                raise ValueError(f"bad users entry {item!r}: expected user:password")
            out[user] = password
        return out

    @property
    def effective_auth_method(self) -> str:
        method = self.auth_method or ("scram-sha-256" if self.user_passwords else "trust")
        if method not in ("trust", "password", "md5", "scram-sha-256"):
            raise ValueError(f"unknown auth_method {method!r}")
        return method


def export_embedding_env(config: Config) -> None:
    """Hand the embedding settings to proxy.embedding, which reads HATIDATA_* variables."""
    by_name = {s.name: s for s in SETTINGS}
    for name in EMBEDDING_ENV:
        value = getattr(config, name)
        if value not in ("", None):
            os.environ[by_name[name].env] = str(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML config file (keys as in the settings table).")
    for s in SETTINGS:
        if s.parse is _bool:
            parser.add_argument(
                s.flag,
                dest=s.name,
                default=None,
                action=argparse.BooleanOptionalAction,
                help=s.help,
            )
        else:
            parser.add_argument(s.flag, dest=s.name, default=None, type=s.parse, help=s.help)


def load(
    args: argparse.Namespace | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {s.name: s.default for s in SETTINGS}
    config_file = getattr(args, "config", None) or env.get("HATIDATA_CONFIG")
    if config_file:
        with open(config_file, "rb") as f:
            data = tomllib.load(f)
        known = {s.name for s in SETTINGS}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown settings in {config_file}: {', '.join(unknown)}")
        values.update(data)
    for s in SETTINGS:
        if s.env in env:
            try:
                values[s.name] = s.parse(env[s.env])
            except ValueError as exc:
                raise ValueError(f"{s.env}: {exc}") from exc
        arg = getattr(args, s.name, None) if args is not None else None
        if arg is not None:
            values[s.name] = arg
    if values["data_dir"] == "~/.local/share/hatiproxy" and env.get("XDG_DATA_HOME"):
        values["data_dir"] = str(Path(env["XDG_DATA_HOME"]) / "hatiproxy")
    values["data_dir"] = str(Path(values["data_dir"]).expanduser())
    names = {f.name for f in fields(Config)}
    return Config(**{k: v for k, v in values.items() if k in names})


def markdown_table() -> str:
    """The README's configuration table, generated from SETTINGS."""
    rows = ["| flag | environment variable | default | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = s.default if s.default not in ("", None) else "(empty)"
        rows.append(f"| `{s.flag}` | `{s.env}` | `{default}` | {s.help} |")
    return "\n".join(rows)
