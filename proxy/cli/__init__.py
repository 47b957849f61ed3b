"""Command line: `hatiproxy serve | model ... | mcp | keys ... | lake compact`."""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import gc
import logging
import signal
import sys
from collections.abc import Coroutine
from typing import Any

from proxy import __version__
from proxy.core import config


def _serve(args: argparse.Namespace) -> int:
    from proxy.core.native_memory import exec_with_tcache, tune_malloc

    exec_with_tcache()  # glibc's thread cache size is read at exec only: run again with it
    malloc_settings = tune_malloc()  # before DuckDB, ONNX and numpy start threads
    # The imports below make ~265,000 objects that live as long as the process: collecting
    # while they load only walks them again and again (~10% of a start's CPU).
    gc.disable()
    from proxy.app import App

    gc.freeze()  # kept out of every later collection too
    gc.enable()

    cfg = config.load(args)
    config.export_embedding_env(cfg)
    logging.basicConfig(
        level=cfg.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    log = logging.getLogger("hatiproxy")
    log.debug("glibc malloc settings: %s", malloc_settings or "unchanged")
    # `kill -USR1 <pid>` prints every thread's Python stack to the log (stderr): what a
    # busy or stuck server is doing, without a profiler.
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    from proxy.cli.signals import SignalWatch

    signals = SignalWatch()
    signals.start()

    async def main() -> None:
        server = App(cfg)
        signals.describe = server.abandoned
        log.info(
            "hatiproxy %s: database %s (extensions: %s; event loop: %s)",
            __version__,
            server.engine.description,
            ", ".join(server.engine.extensions) or "none",
            cfg.event_loop,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stop_soon() -> None:  # in the signal handler, on this (the main) thread
            server.stopping.set()  # long Python work (column fills) checks it between steps
            loop.call_soon_threadsafe(stop.set)

        signals.on_stop = stop_soon
        if signals.requested.is_set():  # a signal came while the server was being built
            stop_soon()
        try:
            await server.start()
            serve = asyncio.create_task(server.serve_forever())
            await stop.wait()
            log.info("shutting down")
            serve.cancel()
        finally:
            await server.close()
            # off the main thread: a second signal is handled while this checkpoints
            await asyncio.to_thread(server.engine.close)
        log.info("stopped")

    from proxy.db.engine import DatabaseInUse
    from proxy.db.lake import LakeUnavailable

    try:
        run_event_loop(main(), cfg.event_loop)
    except (
        DatabaseInUse,
        LakeUnavailable,
    ) as exc:  # a second server on the same files: one line, no traceback
        print(f"hatiproxy: {exc}", file=sys.stderr)
        return 1
    finally:
        signals.stop()
    # Everything is closed: spare the interpreter's exit a garbage collection of every
    # object the server made (most of the CPU of a stop; seconds on a busy machine,
    # inside the promised 10 s shutdown).
    gc.freeze()
    return 0


def run_event_loop(main: Coroutine[Any, Any, None], name: str) -> None:
    """Run the server coroutine on the configured loop (uvloop unless asked otherwise)."""
    if name == "uvloop":
        import uvloop

        uvloop.run(main)
    elif name == "asyncio":
        asyncio.run(main)
    else:
        main.close()
        raise ValueError(f"unknown event_loop {name!r}: expected uvloop or asyncio")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hatiproxy", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hatiproxy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the Postgres wire server")
    config.add_arguments(serve)
    serve.set_defaults(func=_serve)
    try:
        from proxy.cli import model as model_cli
    except ImportError:
        model_cli = None
    if model_cli is not None and hasattr(model_cli, "add_model_commands"):
        model_cli.add_model_commands(sub)
    from proxy.api.mcp.stdio import add_mcp_command

    add_mcp_command(sub)  # `hatiproxy mcp`: MCP over stdio against a running server
    from proxy.cli.keys import add_keys_command

    add_keys_command(sub)  # `hatiproxy keys ...`: API keys on the database file
    from proxy.cli.lake import add_lake_command

    add_lake_command(sub)  # `hatiproxy lake compact`: merge a DuckLake's small files
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["serve"]:
        from proxy.core.native_memory import exec_with_tcache

        # `serve` runs itself again (_serve): before the parser's imports, which the
        # exec would throw away (~0.2 s of every start).
        exec_with_tcache()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"hatiproxy: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
