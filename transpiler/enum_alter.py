"""`ALTER TYPE <enum> ADD VALUE / RENAME VALUE / RENAME TO`, which DuckDB's grammar lacks
(its ENUM types are fixed once made): parsed here, carried out by the server
(proxy/pgserver/enum_alter.py). Migrations send these whenever an enum gains a member
(Alembic, Prisma, Rails, Sequelize). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_LABEL = r"'((?:[^']|'')*)'"
_HEAD = rf"^\s*ALTER\s+TYPE\s+(?P<type>{_NAME}(?:\s*\.\s*{_NAME})?)\s+"
_ADD = re.compile(
    _HEAD + rf"ADD\s+VALUE\s+(?P<ine>IF\s+NOT\s+EXISTS\s+)?{_LABEL}"
    rf"(?:\s+(?P<where>BEFORE|AFTER)\s+{_LABEL})?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_RENAME_VALUE = re.compile(
    _HEAD + rf"RENAME\s+VALUE\s+{_LABEL}\s+TO\s+{_LABEL}\s*;?\s*$", re.IGNORECASE | re.DOTALL
)
_RENAME = re.compile(_HEAD + rf"RENAME\s+TO\s+(?P<new>{_NAME})\s*;?\s*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class EnumAlter:
    type_name: str  # as written (maybe schema-qualified, quoted)
    action: str  # add, rename_value, rename
    label: str = ""  # add: the new label; rename_value: the old one
    new: str = ""  # rename_value: the new label; rename: the new type name (unquoted)
    neighbor: str | None = None  # add ... BEFORE / AFTER this label
    before: bool = False
    if_not_exists: bool = False


def parse(sql: str) -> EnumAlter | None:
    """The request of an ALTER TYPE statement the server carries out, or None."""
    if (m := _ADD.match(sql)) is not None:
        label, neighbor = m.group(3), m.group(5)
        return EnumAlter(
            m["type"],
            "add",
            _unquote_label(label),
            neighbor=None if neighbor is None else _unquote_label(neighbor),
            before=(m["where"] or "").upper() == "BEFORE",
            if_not_exists=m["ine"] is not None,
        )
    if (m := _RENAME_VALUE.match(sql)) is not None:
        return EnumAlter(
            m["type"], "rename_value", _unquote_label(m.group(2)), _unquote_label(m.group(3))
        )
    if (m := _RENAME.match(sql)) is not None:
        new = m["new"]
        new = new[1:-1].replace('""', '"') if new.startswith('"') else new.lower()
        return EnumAlter(m["type"], "rename", new=new)
    return None


def _unquote_label(text: str) -> str:
    return text.replace("''", "'")


def new_labels(labels: list[str], request: EnumAlter) -> list[str]:
    """The type's labels after the request (checked by the caller)."""
    if request.action == "rename_value":
        return [request.new if label == request.label else label for label in labels]
    if request.action != "add":
        return list(labels)
    if request.neighbor is None:
        return [*labels, request.label]
    at = labels.index(request.neighbor) + (0 if request.before else 1)
    return [*labels[:at], request.label, *labels[at:]]
