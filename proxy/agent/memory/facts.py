"""Facts in a conversation turn, and the local rule that compares two of them (pure text).

Used by `process_memories` when no LLM endpoint is configured (or its answer is
unusable); docs/memory.md ("Corrections") states the rule and its thresholds.

- Facts: the user's messages (assistant and system ones are skipped), split into
  sentences and at ", and I/my/we/our ..." clauses; questions and texts of fewer than
  MIN_WORDS words are no facts. A leading cue ("Actually,", "No,", "Yes,", "Correction:") and a
  trailing ", not X" are dropped from the stored text.
- Subject and value: a fact splits at its first copula (is/are/was/were) after a
  content word, else at its first preposition after the first word: "My preferred IDE
  is | VS Code", "I live in | Paris", "I moved to | Berlin". The subject key is its
  words stemmed (crudely: -ing/-ed/-es/-s/-e), without fillers (now, actually, still,
  ...) and auxiliaries (am, do, have, ...); phrases of one PREDICATE_CLASSES class
  ("live in", "moved to", "relocated to" ...) become that class, so "I live in" and
  "I moved to" have the same key. A fact with no split has no subject (never UPDATE).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from proxy.core.errors import AgentError

MIN_WORDS = 3
CUES = (
    "actually",
    "correction",
    "update",
    "no",
    "yes",
    "yeah",
    "right",
    "indeed",
    "oh",
    "well",
    "sorry",
    "wait",
    "in fact",
    "scratch that",
    "i mean",
    "ok",
    "okay",
    "btw",
    "by the way",
)
_CUE = re.compile(r"^\s*(?:(?:" + "|".join(re.escape(c) for c in CUES) + r")\b[\s,:;!.\-]*)+", re.I)
_NOT_TAIL = re.compile(r",\s*(?:and\s+)?not\s+[^,.;!?]+(?=[.!]?\s*$)", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r",?\s+and\s+(?=(?:i|my|we|our|i'm|i've)\b)", re.I)
_WORD = re.compile(r"[^\s,;:!?()\"]+")

FILLERS = frozenset(
    [
        "now",
        "currently",
        "actually",
        "really",
        "still",
        "also",
        "just",
        "anymore",
        "nowadays",
        "recently",
        "finally",
        "today",
        "again",
        "already",
    ]
)
AUX = frozenset(
    [
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "will",
        "would",
    ]
)
COPULAS = frozenset(["is", "are", "was", "were"])
PREPOSITIONS = frozenset(
    [
        "in",
        "to",
        "at",
        "for",
        "from",
        "with",
        "on",
        "as",
        "near",
        "named",
        "called",
        "by",
        "above",
        "below",
        "under",
        "over",
        "into",
    ]
)
PRONOUNS = frozenset(
    [
        "i",
        "my",
        "me",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "his",
        "she",
        "her",
        "they",
        "their",
        "it",
        "its",
    ]
)

# Predicates that say the same thing about a subject, as stemmed phrases.
PREDICATE_CLASSES: dict[str, tuple[tuple[str, ...], ...]] = {
    "<residence>": (
        ("liv", "in"),
        ("mov", "to"),
        ("relocat", "to"),
        ("bas", "in"),
        ("resid", "in"),
        ("stay", "in"),
        ("home", "in"),
    ),
    "<employer>": (("work", "at"), ("work", "for"), ("employ", "by"), ("job", "at")),
    "<name>": (("nam",), ("call",)),
}


def stem(word: str) -> str:
    w = word.lower().strip(".'")
    return re.sub(r"(ing|ed|es|s|e)$", "", w) if len(w) > 3 else w


def clean(sentence: str) -> str:
    """The sentence as stored: no leading cue, no trailing ', not X'."""
    text = _CUE.sub("", sentence.strip()).strip()
    text = _NOT_TAIL.sub("", text).strip()
    return text[:1].upper() + text[1:] if text else text


def extract(messages: list[dict[str, str]]) -> list[str]:
    """The facts of the user's messages, cleaned, in order, without repeats."""
    out: list[str] = []
    for m in messages:
        if m["role"] != "user":
            continue
        for sentence in _SENTENCE.split(m["content"]):
            for clause in _CLAUSE.split(sentence.strip()):
                if not clause or clause.rstrip().endswith("?"):
                    continue
                fact = clean(clause)
                if len(_WORD.findall(fact)) >= MIN_WORDS and fact not in out:
                    out.append(fact)
    return out


def parse_messages(value: Any) -> list[dict[str, str]]:
    """messages: text (one user message), an array of texts or {role, content} objects."""
    import json

    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        value = parsed if isinstance(parsed, list) else value
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise AgentError.invalid("messages must be text or a non-empty array of messages")
    out = []
    for n, m in enumerate(value, start=1):
        if isinstance(m, str):
            m = {"role": "user", "content": m}
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise AgentError.invalid(f"message {n} needs a text content", hint="{role, content}")
        out.append({"role": str(m.get("role") or "user").lower(), "content": m["content"]})
    return out


@dataclass(frozen=True)
class Split:
    """A fact as subject and value (both None when it does not split)."""

    words: tuple[str, ...]  # every word, stemmed, fillers and auxiliaries dropped
    subject: str | None  # the subject phrase as said (for embedding)
    key: tuple[str, ...] | None  # the subject, stemmed, fillers/auxiliaries out, classes in
    value: tuple[str, ...] | None  # the value's words, stemmed, articles out


def _canon(stems: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(stems):
        for cls, phrases in PREDICATE_CLASSES.items():
            hit = next((p for p in phrases if tuple(stems[i : i + len(p)]) == p), None)
            if hit is not None:
                out.append(cls)
                i += len(hit)
                break
        else:
            out.append(stems[i])
            i += 1
    return tuple(out)


def split(fact: str) -> Split:
    raw = [w.rstrip(".") for w in _WORD.findall(fact.lower().replace("'m ", " am "))]
    raw = [w for w in raw if w and w not in FILLERS]
    words = tuple(stem(w) for w in raw if w not in AUX)
    cut = None
    for i, w in enumerate(raw):
        if w in COPULAS and any(x not in PRONOUNS and x not in AUX for x in raw[:i]):
            cut = i
            break
    if cut is None:
        cut = next((i for i, w in enumerate(raw) if i >= 1 and w in PREPOSITIONS), None)
    if cut is None or cut + 1 >= len(raw):
        return Split(words, None, None, None)
    subject = raw[: cut + 1]
    key = _canon([stem(w) for w in subject if w not in AUX])
    value = tuple(stem(w) for w in raw[cut + 1 :] if w not in ("a", "an", "the"))
    return Split(words, " ".join(subject), key, value)


def same_subject(a: Split, b: Split) -> bool:
    """Equal subject keys (classes count as equal predicates)."""
    return a.key is not None and a.key == b.key


def same_holder(a: Split, b: Split) -> bool:
    """The subjects start with the same word (I, my, the customer ...)."""
    return bool(a.key and b.key and a.key[0] == b.key[0])


def restates(new: Split, old: Split) -> bool:
    """The new fact adds no word to the old one (a repeat, maybe with fillers)."""
    return set(new.words) <= set(old.words)
