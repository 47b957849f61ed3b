"""A portal's rows to the client: the rows fetched with the statement first, then batches
from the DuckDB cursor, up to Execute's row limit (PortalSuspended when it is reached)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from proxy.pgserver import arrow_results
from proxy.pgserver.prefetch import Prefetch
from proxy.pgserver.results import BATCH_ROWS, fetch_batch
from proxy.wire import messages as m
from proxy.wire.types import encode_data_rows

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def send_rows(
    runner: StatementRunner,
    portal: Portal,
    session: ClientSession,
    encoders: list[Callable[[object], bytes]],
    max_rows: int,
) -> bool:
    """Send up to `max_rows` rows (0: all); True when the portal is suspended, False when
    its rows are all sent."""
    sent_before = portal.rows_sent
    while max_rows == 0 or portal.rows_sent - sent_before < max_rows:
        want = (
            BATCH_ROWS
            if max_rows == 0
            else min(BATCH_ROWS, max_rows - (portal.rows_sent - sent_before))
        )
        if portal.buffered:
            chunk, portal.buffered = portal.buffered[:want], portal.buffered[want:]
            session.out(encode_data_rows(chunk, encoders))
            portal.rows_sent += len(chunk)
            await session.flush_if_large()
            continue
        if portal.drained:
            return False
        stream = portal.arrow  # a result read through Arrow (arrow_results.py)
        if stream is not None and max_rows == 0:
            await _send_rest(runner, portal, session, stream)
            return False
        if stream is not None:
            data, n = await runner.call(stream.encode_next, want)
        else:
            data, n = await runner.call(fetch_batch, runner.cursor, encoders, want)
        if n:
            session.out(data)
            portal.rows_sent += n
            await session.flush_if_large()
        if stream.exhausted if stream is not None else n < want:
            portal.drained = True
            return False
    session.out(m.portal_suspended())
    return True


async def _send_rest(
    runner: StatementRunner,
    portal: Portal,
    session: ClientSession,
    stream: arrow_results.ArrowResult,
) -> None:
    """Every remaining row of an Arrow result, the next batch encoded while one goes out
    (and the one after it read meanwhile)."""
    stream.read_ahead()
    steps = Prefetch(runner, lambda: stream.encode_next(arrow_results.BATCH_ROWS))
    try:
        while True:
            data, n = await steps.next()
            if not stream.exhausted:
                steps.ahead()
            if n:
                session.out(data)
                portal.rows_sent += n
                await session.flush_if_large()
            if stream.exhausted:
                portal.drained = True
                return
    finally:
        steps.close()  # before the read it may be waiting for
        stream.stop_reading_ahead()
