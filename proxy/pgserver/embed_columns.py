"""`SELECT hatiproxy_embed_column('table', 'column')` on the wire (the machinery is in
proxy/semantic/embedded_columns.py)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING

from proxy.semantic.embedded_columns import Report, embed_column, parse_call

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run_call(
    runner: StatementRunner, portal: Portal, session: ClientSession, describe: bool
) -> None:
    """A `SELECT hatiproxy_embed_column('table', 'column')` statement on the wire: fill
    the vectors on the session's cursor and answer with the count as one row."""
    from proxy.pgserver import savepoints
    from proxy.pgserver.results import Column, encoders_for, row_description
    from proxy.wire import messages as m
    from proxy.wire.types import encode_data_rows

    st = portal.statement
    assert st is not None
    table, column = parse_call(st.sql)
    semantic = runner.semantic
    if semantic.embedder is None:
        raise semantic.unavailable()
    await runner.take_cursor()
    if runner.txn_status == "I":
        runner.write.begin()
    else:
        savepoints.note_unrecorded(session.savepoints, "hatiproxy_embed_column()")
    count = await runner.call(
        embed_column,
        runner.cursor,
        table,
        column,
        semantic.dims,
        semantic.bulk,  # waits for query embeddings: a fill never starves queries
        _notices(session),
        runner.interrupted,  # cancel, statement_timeout, client gone, shutdown
    )
    runner.param_types.invalidate()
    cols = (Column("hatiproxy_embed_column", "BIGINT"),)
    if describe:
        session.out(row_description(cols, portal.result_formats))
    enc = encoders_for(cols, tuple(portal.result_formats))
    session.out(encode_data_rows([(count,)], enc))
    session.out(m.command_complete("SELECT 1"))


def _notices(session: ClientSession) -> Report:
    """Progress lines as NOTICEs the client sees while the statement still runs.

    The work runs inside `runner.call`: on a wire client's own thread that is this very
    thread, its event loop held until the call returns, so each NOTICE is queued and pushed
    to the socket at once. Were the work on another thread, the NOTICE goes to this
    connection's loop instead (the output buffer belongs to it).
    """
    loop = asyncio.get_running_loop()
    home = threading.get_ident()

    def send(message: str) -> None:
        session.send_notice(message)
        session.push()

    def report(message: str) -> None:
        if threading.get_ident() == home:
            send(message)
        else:
            with contextlib.suppress(RuntimeError):  # the connection's loop has closed
                loop.call_soon_threadsafe(send, message)

    return report
