"""A minimal safetensors reader/writer with numpy only.

The format: an 8-byte little-endian header length, a JSON header mapping tensor names to
dtype/shape/data_offsets (relative to the end of the header), then raw little-endian,
row-major data. Written here rather than depending on the `safetensors` wheel: it is small
and the converter must work on an offline machine with only numpy and onnx.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .errors import ConversionError

_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # widened to float32 below
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_MAX_HEADER = 100 << 20


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a file; floats come back as float32 (BF16/F16 widened)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    if raw.size < 8:
        raise ConversionError(f"{path}: too short to be a safetensors file")
    (header_len,) = struct.unpack("<Q", bytes(raw[:8]))
    if header_len > min(_MAX_HEADER, raw.size - 8):
        raise ConversionError(f"{path}: bad safetensors header length {header_len}")
    header = json.loads(bytes(raw[8 : 8 + header_len]).decode("utf-8"))
    base = 8 + header_len
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ConversionError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        shape = tuple(int(d) for d in info["shape"])
        count = int(np.prod(shape)) if shape else 1
        if start < 0 or end > raw.size - base or end - start != count * dtype.itemsize:
            raise ConversionError(f"{path}: tensor {name} has inconsistent offsets")
        arr = raw[base + start : base + end].view(dtype).reshape(shape)
        if info["dtype"] == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        elif arr.dtype.kind == "f":
            arr = arr.astype(np.float32)
        else:
            arr = np.array(arr)
        out[name] = arr
    return out


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Write float32/int64 tensors (used by tests to make tiny checkpoints)."""
    names = {np.dtype("<f4"): "F32", np.dtype("<i8"): "I64"}
    header: dict[str, dict] = {"__metadata__": {"format": "np"}}
    blobs: list[bytes] = []
    offset = 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        dtype_name = names.get(arr.dtype.newbyteorder("<"))
        if dtype_name is None:
            raise ValueError(f"{name}: only float32 and int64 are written")
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": dtype_name,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode("utf-8")
    head += b" " * (-len(head) % 8)  # align the data section like the reference writer
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for blob in blobs:
            f.write(blob)
