"""The int8 copy of a model's graph: made once beside `model.onnx`, reused while it is current.

onnxruntime's dynamic quantization stores the MatMul weights as int8 (one scale per output
channel) and quantizes activations on the fly: about twice as fast per query on CPU, with
vectors at cosine ~0.99 to the fp32 ones (bench/embedding.py --compare-precision).

`model.int8.json` beside the int8 file records the sha256 of the `model.onnx` it was made
from (and of `model.onnx.data`, if the graph keeps its weights there); when that no longer
matches, the copy is made again. Both files appear by rename, so a crash leaves the old
pair, a stale pair (made again next time) or nothing, never half a file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import EmbeddingError
from .modelconfig import MODEL_FILE, sha256_file

INT8_FILE = "model.int8.onnx"
INT8_META = "model.int8.json"
# the graph, and the weights file a converted model over ~2 GB keeps beside it
SOURCE_FILES = (MODEL_FILE, MODEL_FILE + ".data")
# What quantize_dynamic is asked for; a copy made with other settings is made again.
QUANTIZATION = {"weight_type": "QInt8", "per_channel": True, "op_types": ["MatMul"]}
_STAGING_PREFIX = ".int8."
_STALE_STAGING_SECS = 3600  # older staging dirs are left-overs of a crashed start

log = logging.getLogger("hatiproxy.embedding")


def int8_model(model_dir: Path) -> tuple[Path, str]:
    """The int8 graph of `model_dir` and its sha256, quantizing `model.onnx` if needed."""
    meta = _read_meta(model_dir)
    if meta is not None and _current(model_dir, meta, _source_hashes(model_dir)):
        return model_dir / INT8_FILE, str(meta["int8_sha256"])
    log.info("quantizing %s to int8 (once per model file)", model_dir / MODEL_FILE)
    return model_dir / INT8_FILE, quantize(model_dir)


def _read_meta(model_dir: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((model_dir / INT8_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _source_hashes(model_dir: Path) -> dict[str, str]:
    return {f: sha256_file(model_dir / f) for f in SOURCE_FILES if (model_dir / f).is_file()}


def _current(model_dir: Path, meta: dict[str, Any], sources: dict[str, str]) -> bool:
    """Made from this model.onnx, with these settings, and the file is the one recorded."""
    try:
        size = (model_dir / INT8_FILE).stat().st_size
    except OSError:
        return False
    return (
        meta.get("source_sha256") == sources
        and meta.get("quantization") == QUANTIZATION
        and isinstance(meta.get("int8_sha256"), str)
        # the rename makes a half file impossible; the size catches a replaced one cheaply
        and meta.get("int8_size") == size
    )


def quantize(model_dir: Path) -> str:
    """Write `model.int8.onnx` + `model.int8.json` from `model.onnx`; the int8 sha256."""
    try:
        _remove_stale_staging(model_dir)
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=model_dir))
    except OSError as exc:
        raise EmbeddingError(
            f"cannot write the int8 model beside {model_dir / MODEL_FILE}: {exc}; "
            "make the model directory writable or use embedding_precision fp32"
        ) from exc
    try:
        # quantize_dynamic writes a shape-inferred copy beside its input: keep it in staging
        for f in SOURCE_FILES:
            if (model_dir / f).is_file():
                _link_or_copy(model_dir / f, staging / f)
        sources = _source_hashes(staging)  # exactly the bytes that get quantized
        out = staging / INT8_FILE
        _run_quantizer(staging / MODEL_FILE, out)
        int8_sha = sha256_file(out)
        meta = {
            "source_sha256": sources,
            "int8_sha256": int8_sha,
            "int8_size": out.stat().st_size,
            "quantization": QUANTIZATION,
            "onnxruntime": _ort_version(),
        }
        meta_tmp = staging / INT8_META
        meta_tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        _fsync(out)
        _fsync(meta_tmp)
        # model first, record second: a crash in between leaves a record that does not match
        os.replace(out, model_dir / INT8_FILE)
        os.replace(meta_tmp, model_dir / INT8_META)
        return int8_sha
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_quantizer(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    try:
        with _quiet_quantizer():
            quantize_dynamic(
                str(src),
                str(dst),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
    except Exception as exc:  # onnx / protobuf errors: say which model and what failed
        raise EmbeddingError(f"quantizing {src.name} to int8 failed: {exc}") from exc


class _QuantizerChatter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return False  # one INFO line per tensor it skips
        # advice about a pre-processing step meant for static quantization of image models
        return "pre-processing before quantization" not in record.getMessage()


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """quantize_dynamic logs on the root logger; in a server log that is only noise. The
    filter sees only records logged on the root logger itself, not the named loggers."""
    root = logging.getLogger()
    chatter = _QuantizerChatter()
    root.addFilter(chatter)
    try:
        yield
    finally:
        root.removeFilter(chatter)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)  # same directory, so same filesystem: no copy of ~90 MB
    except OSError:
        shutil.copyfile(src, dst)


def _fsync(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _remove_stale_staging(model_dir: Path) -> None:
    cutoff = time.time() - _STALE_STAGING_SECS
    for d in model_dir.glob(_STAGING_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if d.is_dir() and d.stat().st_mtime < cutoff:
                shutil.rmtree(d, ignore_errors=True)


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)
