"""The startup packet's parameters as session settings (application_name,
client_encoding, custom names and the `options` string's `-c name=value` pairs)."""

from __future__ import annotations


def startup_settings(params: dict[str, str], user: str) -> dict[str, str]:
    """Startup packet -> session settings: application_name, client_encoding, -c options."""
    out = {"session_authorization": user}
    for key, value in params.items():
        if key in ("user", "database", "options", "replication"):
            continue
        if key == "client_encoding":
            value = value.strip("'\"")
        out[key] = value
    for key, value in parse_options(params.get("options", "")):
        out[key] = value
    return out


def parse_options(options: str) -> list[tuple[str, str]]:
    """`-c a=b -c x.y=z --name=value` (backslash escapes spaces, as libpq does)."""
    words, cur, escape = [], [], False
    for ch in options:
        if escape:
            cur.append(ch)
            escape = False
        elif ch == "\\":
            escape = True
        elif ch.isspace():
            if cur:
                words.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        words.append("".join(cur))
    out = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-c" and i + 1 < len(words):
            word, i = words[i + 1], i + 1
        elif word.startswith("-c") or word.startswith("--"):
            word = word[2:]
        key, sep, value = word.partition("=")
        if sep:
            out.append((key.replace("-", "_") if "." not in key else key, value))
        i += 1
    return out
