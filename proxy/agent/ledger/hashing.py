"""The chain-of-thought ledger's canonical JSON form and hashes (pure functions, no I/O).

Canonical JSON (`canonical_json`) is RFC 8785 (JSON Canonicalization Scheme), so a
client in any language can recompute a hash:

- objects: members sorted by key, compared as UTF-16 code units (RFC 8785 §3.2.3);
  keys must be strings;
- no whitespace anywhere: `{"a":1,"b":[true,null]}`;
- strings: UTF-8, non-ASCII characters written as themselves (no `\\uXXXX`), only `"`,
  `\\` and control characters escaped (`\\b \\f \\n \\r \\t`, others `\\u00xx`);
- numbers in ECMAScript `Number.prototype.toString` form: `1.0` -> `1`, `4.50` -> `4.5`,
  `1e21` -> `1e+21`, `1e-7` -> `1e-7`, `-0.0` -> `0`; NaN and infinities are refused.
  One deviation: Python integers are written exactly (RFC 8785 would round those above
  2**53 through a double);
- `true`, `false`, `null`; the whole text encoded as UTF-8 bytes.

Hashes (lower-case hex SHA-256):

- `content_hash = sha256(canonical_json(content))`, where content is the step's JSON
  value (for `log_reasoning_step` the JSON string of the text, e.g. `"saw a spike"`).
- `chain_hash = sha256(canonical_json(link))` with `link` the object
  `{"agent_id", "content_hash", "importance", "metadata", "org_id", "parent_trace_id",
  "prev_hash", "session_id", "step_index", "step_type", "timestamp", "trace_id"}`:
  `prev_hash` is the previous step's chain_hash (`GENESIS_HASH`, 64 zeros, for step 0),
  `timestamp` is UTC as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, `trace_id` / `parent_trace_id`
  are lower-case hyphenated UUIDs (parent null when absent), `metadata` the step's JSON
  object (null when absent), `importance` a number or null.

Any edit of a stored step changes its content_hash or chain_hash; deleting a step
breaks the next step's `prev_hash` link and the step_index sequence.

- `org_hash = sha256(canonical_json(entry))`, the organisation chain (`orgchain.py`):
  one entry per appended step, in commit order, `entry` the object `{"agent_id",
  "org_id", "prev_org_hash", "seq", "session_id", "step_hash", "step_index",
  "trace_id"}`, `seq` numbering the organisation's steps from 0, `step_hash` the step's
  chain_hash, `prev_org_hash` the entry before's org_hash (`GENESIS_HASH` at seq 0).
  Deleting a whole session, or a session's last steps, leaves entries naming steps that
  are gone.

Why not the `rfc8785` package (0.1.4): its `dumps` gives these same bytes for strings,
keys, floats and nesting, but refuses integers beyond ±(2**53 - 1) that clients log and
stored hashes cover: `canonical_bytes(2**60)` is `b"1152921504606846976"` (the test
vector's), `rfc8785.dumps(2**60)` raises IntegerDomainError.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from decimal import Decimal
from typing import Any

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """RFC 8785 text of value (see module docstring). ValueError for non-JSON values."""
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts)


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(content: Any) -> str:
    return sha256_hex(canonical_bytes(content))


def accepted_content_hashes(content: Any) -> set[str]:
    """Hashes of content a client may reasonably have sent: canonical first, then the
    usual serialisations (Python json.dumps with sorted keys, compact or default
    separators, ASCII-escaped or not; a string's raw UTF-8 text)."""
    out = {content_hash(content)}
    for ensure_ascii in (False, True):
        for seps in ((",", ":"), (", ", ": ")):
            try:
                text = json.dumps(
                    content, sort_keys=True, separators=seps, ensure_ascii=ensure_ascii
                )
            except (TypeError, ValueError):
                continue
            out.add(sha256_hex(text.encode("utf-8")))
    if isinstance(content, str):
        out.add(sha256_hex(content.encode("utf-8")))
    return out


def utc_text(ts: dt.datetime) -> str:
    """The chain's timestamp form: UTC, microseconds, `Z`."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=dt.UTC)
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def chain_hash(
    *,
    prev_hash: str,
    content_hash: str,
    org_id: str,
    agent_id: str,
    session_id: str,
    step_index: int,
    step_type: str,
    timestamp: dt.datetime,
    trace_id: str,
    parent_trace_id: str | None,
    metadata: Any,
    importance: float | None,
) -> str:
    link = {
        "agent_id": agent_id,
        "content_hash": content_hash,
        "importance": importance,
        "metadata": metadata,
        "org_id": org_id,
        "parent_trace_id": parent_trace_id,
        "prev_hash": prev_hash,
        "session_id": session_id,
        "step_index": step_index,
        "step_type": step_type,
        "timestamp": utc_text(timestamp),
        "trace_id": trace_id,
    }
    return sha256_hex(canonical_bytes(link))


def org_hash(
    *,
    org_id: str,
    seq: int,
    agent_id: str,
    session_id: str,
    step_index: int,
    trace_id: str,
    step_hash: str,
    prev_org_hash: str,
) -> str:
    entry = {
        "agent_id": agent_id,
        "org_id": org_id,
        "prev_org_hash": prev_org_hash,
        "seq": seq,
        "session_id": session_id,
        "step_hash": step_hash,
        "step_index": step_index,
        "trace_id": trace_id,
    }
    return sha256_hex(canonical_bytes(entry))


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(es_number(value))
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise ValueError(f"JSON object keys must be strings, got {key!r:.40}")
        out.append("{")
        for i, key in enumerate(sorted(value, key=_utf16_key)):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise ValueError(f"not a JSON value: {type(value).__name__}")


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def es_number(x: float) -> str:
    """ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3)."""
    if not math.isfinite(x):
        raise ValueError("NaN and infinite numbers are not JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript requires.
    _, digit_tuple, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exp, int)
    exp += len("".join(map(str, digit_tuple))) - len(digits)  # dropped trailing zeros
    k = len(digits)
    n = k + exp  # the decimal point sits after n digits
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body
