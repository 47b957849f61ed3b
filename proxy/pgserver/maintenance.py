"""VACUUM / ANALYZE of named relations over the wire: proxy/db/vacuum.py plans each
relation (why there); this runs the plan and sends its WARNINGs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy.db import vacuum

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner


async def run(
    runner: StatementRunner, session: ClientSession, verb: str, targets: vacuum.Targets
) -> str:
    """Carry out `verb` ("vacuum", "vacuum analyze", "analyze") on each target; the tag."""
    await runner.take_cursor()
    steps = await runner.call(vacuum.plan, runner.cursor, verb, targets, sql=verb)
    for kind, text in steps:
        if kind == "warning":
            session.send_notice(text, "01000", "WARNING")
        else:
            await runner.call(runner.cursor.execute, text, sql=text)
    return vacuum.tag(verb)
