"""search_memory's keyword score: the share of the query's keywords found in a memory, a
keyword of 3+ characters also counting as the start of a word (invoice ~ invoices), never
as the middle or end of one."""

from __future__ import annotations

import pytest

from proxy.agent.memory.search_score import keyword_score, keywords


@pytest.mark.parametrize(
    ("query", "content", "score"),
    [
        ("invoice refund", "The invoice was refunded.", 1.0),  # word, and word start
        ("invoices", "one invoice", 0.0),  # longer than every word
        ("voice", "an invoice", 0.0),  # inside a word: no
        ("ice", "an invoice", 0.0),  # end of a word: no
        ("ab", "abc", 0.0),  # under 3 characters: whole words only
        ("ab", "x ab, y", 1.0),
        ("über naïve", "Übersee, NAÏVETY", 1.0),  # lower-cased, unicode words
        ("pricing churn supply", "churn-pricing", 2 / 3),
        ("", "anything", 0.0),
        ("revenue", "", 0.0),
    ],
)
def test_keyword_score(query: str, content: str, score: float) -> None:
    assert keyword_score(keywords(query), content) == pytest.approx(score)
