"""LRU caches keyed by a statement's text, with a bound on memory, not only entries.

A client's statement texts are unbounded in length (a bulk INSERT can be megabytes), and
`functools.lru_cache` keeps every key it holds alive: 4,096 entries of long texts (and
of their results, e.g. a token list per text) would hold gigabytes. A text longer than
`MAX_CACHED_CHARS` is computed every time and never kept (bulk statements rarely
repeat), so such a cache holds at most `maxsize` x (16 KiB of key + its result).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, update_wrapper
from typing import Any, Generic, ParamSpec, TypeVar

MAX_CACHED_CHARS = 16_384

P = ParamSpec("P")
R = TypeVar("R")


class TextCached(Generic[P, R]):
    """`fn` cached by its first argument (a text) and the rest, up to `maxsize` entries;
    a text longer than MAX_CACHED_CHARS bypasses the cache."""

    def __init__(self, fn: Callable[P, R], maxsize: int) -> None:
        self.__wrapped__ = fn
        self._cached = lru_cache(maxsize=maxsize)(fn)
        update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        text = args[0]
        run = (
            self._cached
            if isinstance(text, str) and len(text) <= MAX_CACHED_CHARS
            else self.__wrapped__
        )
        return run(*args, **kwargs)

    def cache_info(self) -> Any:
        return self._cached.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def text_lru_cache(maxsize: int) -> Callable[[Callable[P, R]], TextCached[P, R]]:
    def wrap(fn: Callable[P, R]) -> TextCached[P, R]:
        return TextCached(fn, maxsize)

    return wrap
