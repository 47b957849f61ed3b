"""Memory maintenance on a schedule (seed 004): consolidation and eviction.

- consolidation (`consolidation_cron`, default `0 */6 * * *`): every agent's memories not
  accessed for 7 days lose confidence (`decay_memories`, floor 0.1);
- eviction (`eviction_cron`, default `0 3 * * *`): every agent's old unimportant,
  low-confidence and over-cap memories go (`evict_memories`, cap `eviction_max_per_agent`).

Cron expressions are read in UTC (cronsim: five fields, as crontab). `maintenance_enabled`
false switches both off; `run_maintenance(task)` runs one now. Every run is recorded in
`hatidata_internal.maintenance_runs` (task, how it started, times, counts, error) and
readable as `maintenance_runs()`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

import duckdb
from cronsim import CronSim, CronSimError

from proxy.agent.memory.schema import T_MEM
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import Param, agent_function

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

log = logging.getLogger("hatiproxy.agent.maintenance")

RUNS = f"{INTERNAL_SCHEMA}.maintenance_runs"
TASKS = ("consolidation", "eviction")


def schedule(expr: str, setting: str) -> str:
    """A cron expression, checked (a bad one stops the start with the setting's name)."""
    try:
        CronSim(expr, dt.datetime.now(dt.UTC))
    except (CronSimError, ValueError) as exc:
        raise ValueError(f"{setting}: not a cron expression: {expr!r} ({exc})") from None
    return expr


def next_run(expr: str, after: dt.datetime) -> dt.datetime:
    return next(CronSim(expr, after))


class Maintenance:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        config = layer.config
        self.enabled = config.maintenance_enabled
        self.crons = {
            "consolidation": schedule(config.consolidation_cron, "consolidation_cron"),
            "eviction": schedule(config.eviction_cron, "eviction_cron"),
        }
        self._task: asyncio.Task | None = None

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {RUNS} (
                run_id VARCHAR PRIMARY KEY, task VARCHAR NOT NULL, started_by VARCHAR NOT NULL,
                started_at TIMESTAMPTZ NOT NULL, finished_at TIMESTAMPTZ,
                agents BIGINT, counts JSON, error VARCHAR)"""
        )

    async def start(self) -> None:
        if not self.enabled:
            log.info("memory maintenance is off (maintenance_enabled = false)")
            return
        now = dt.datetime.now(dt.UTC)
        for task, expr in self.crons.items():
            log.info("memory %s on %r (UTC), next at %s", task, expr, next_run(expr, now))
        self._task = asyncio.create_task(self._loop(), name="hatiproxy-maintenance")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        after = dt.datetime.now(dt.UTC)
        while True:
            due = {task: next_run(expr, after) for task, expr in self.crons.items()}
            when = min(due.values())
            await asyncio.sleep(max((when - dt.datetime.now(dt.UTC)).total_seconds(), 0))
            after = when
            for task in TASKS:
                if due[task] == when:
                    try:
                        await self.run(task, "schedule")
                    except Exception:
                        log.exception("memory %s failed", task)

    async def run(self, task: str, started_by: str) -> dict[str, Any]:
        if task not in TASKS:
            raise AgentError.invalid(f"task must be one of {', '.join(TASKS)}")
        run_id, started = str(uuid.uuid4()), dt.datetime.now(dt.UTC)
        agents = await self.layer.db.run(
            lambda cur: cur.execute(
                f"SELECT DISTINCT org_id, agent_id FROM {T_MEM} ORDER BY 1, 2"
            ).fetchall()
        )
        counts: dict[str, int] = {}
        error = None
        try:
            for org, agent in agents:
                who = Identity(org, agent, "maintenance")
                if task == "consolidation":
                    rows = await self.layer.call("decay_memories", who)
                    parts = {"decayed": rows[0]["decayed"]}
                else:
                    cap = self.layer.config.eviction_max_per_agent or None
                    rows = await self.layer.call("evict_memories", who, max_per_agent=cap)
                    parts = {k: rows[0][k] for k in ("evicted", "by_age", "by_confidence")}
                    parts["by_cap"] = rows[0]["by_cap"]
                for k, v in parts.items():
                    counts[k] = counts.get(k, 0) + int(v or 0)
        except Exception as exc:  # recorded, and the next run tries again
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            row = [run_id, task, started_by, started, dt.datetime.now(dt.UTC), len(agents)]
            row += [json.dumps(counts), error]
            await self.layer.db.run(
                lambda cur: cur.execute(f"INSERT INTO {RUNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
            )
            log.info("memory %s (%s): %d agents, %s", task, started_by, len(agents), counts)
        return {"run_id": run_id, "task": task, "agents": len(agents), "counts": counts}


_RUN_COLUMNS = (
    ("run_id", "VARCHAR"),
    ("task", "VARCHAR"),
    ("started_by", "VARCHAR"),
    ("started_at", "TIMESTAMPTZ"),
    ("finished_at", "TIMESTAMPTZ"),
    ("agents", "BIGINT"),
    ("counts", "JSON"),
    ("error", "VARCHAR"),
)


def _superuser(who: Identity) -> None:
    # The runs span every organisation: only a server superuser may start or read them.
    if not who.superuser:
        raise AgentError.forbidden("memory maintenance is for the server superuser")


@agent_function(
    "run_maintenance",
    params=[Param("task", "VARCHAR", description="consolidation or eviction", enum=TASKS)],
    columns=[("run_id", "VARCHAR"), ("task", "VARCHAR"), ("agents", "BIGINT"), ("counts", "JSON")],
    scope="memory:write",
    writes=True,
)
async def run_maintenance(layer: AgentContext, who: Identity, *, task: str) -> list[dict]:
    """Run a memory maintenance task now, for every agent (server superuser only)."""
    _superuser(who)
    return [await layer.maintenance.run(task, "manual")]


@agent_function(
    "maintenance_runs",
    params=[Param("limit", "BIGINT", 100, "Most runs, newest first", minimum=1)],
    columns=_RUN_COLUMNS,
    scope="memory:read",
)
async def maintenance_runs(layer: AgentContext, who: Identity, *, limit: int) -> list[dict]:
    """The recorded maintenance runs, newest first (server superuser only)."""
    _superuser(who)
    rows = await layer.db.run(
        lambda cur: cur.execute(
            f"SELECT * FROM {RUNS} ORDER BY started_at DESC LIMIT ?", [limit]
        ).fetchall()
    )
    out = [dict(zip([c for c, _ in _RUN_COLUMNS], r, strict=True)) for r in rows]
    for r in out:
        r["counts"] = json.loads(r["counts"]) if r["counts"] else {}
    return out
