"""Immediate embeddings that arrive together share one model pass.

Why: every search_memory and every semantic statement embeds its own query text at once
(`EmbeddingWorker.embed_now`). Run one by one on the worker's query thread, the searches
of many connections queued one model pass each behind each other: at 50 connections
(bench/load.py) a dozen searches wait at once, and a pass of one short text costs most
of what a pass of a dozen does (the model's fixed cost per call dominates short texts).
Here the first request starts at once, with no wait for company; the requests that
arrive while a pass runs are taken together by the next one (oldest first, one mode per
pass, up to MAX_TEXTS texts; a pass's texts also agree on `persist`, whether the
embedding cache writes them to its table). An idle server embeds exactly as before.

Thread-safe: requests come from the main loop and from client connections' own threads
and loops (proxy/db/connection_threads.py); results go back through concurrent futures.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

import numpy as np

from .provider import Mode

log = logging.getLogger("hatiproxy.embedding")

MAX_TEXTS = 64  # texts in one coalesced pass (a long pass would hold up the next ones)

Embed = Callable[[list[str], Mode, bool], np.ndarray]  # (texts, mode, persist)


@dataclass
class _Ask:
    texts: list[str]
    mode: Mode
    persist: bool
    future: Future[np.ndarray]


class NowBatches:
    """Runs `embed(texts, mode)` on at most `slots` threads of an executor; the requests
    waiting when a thread is free go in one call."""

    def __init__(self, embed: Embed, slots: int = 1, max_texts: int = MAX_TEXTS) -> None:
        self._embed = embed
        self._slots = max(1, slots)
        self._max_texts = max_texts
        self._lock = threading.Lock()
        self._waiting: deque[_Ask] = deque()
        self._active = 0  # threads draining the queue now
        self.passes = 0  # model calls made (for tests and benchmarks)

    def submit(
        self, executor: Executor, texts: list[str], mode: Mode, persist: bool = True
    ) -> Future[np.ndarray]:
        """Queue `texts`; their vectors come in the returned future."""
        ask = _Ask(texts, mode, persist, Future())
        with self._lock:
            self._waiting.append(ask)
            start = self._active < self._slots
            if start:
                self._active += 1
        if start:
            try:
                executor.submit(self._drain)
            except RuntimeError as exc:  # the executor shut down: nothing will run these
                self._fail_all(exc)
        return ask.future

    def _take(self) -> list[_Ask]:
        """Under the lock: the oldest request and the later ones of its kind (mode and
        persist) that fit."""
        taken: list[_Ask] = []
        kept: deque[_Ask] = deque()
        count = 0
        kind: tuple[Mode, bool] | None = None
        while self._waiting:
            ask = self._waiting.popleft()
            if ask.future.cancelled():
                continue  # its caller gave up
            if kind is not None and (
                (ask.mode, ask.persist) != kind or count + len(ask.texts) > self._max_texts
            ):
                kept.append(ask)  # a later pass
                continue
            if not ask.future.set_running_or_notify_cancel():
                continue  # cancelled just now
            kind = (ask.mode, ask.persist)
            taken.append(ask)
            count += len(ask.texts)
        self._waiting = kept
        return taken

    def _drain(self) -> None:
        """On an executor thread: run passes until nothing waits."""
        while True:
            with self._lock:
                taken = self._take()
                if not taken:
                    self._active -= 1
                    return
            self._run(taken)

    def _run(self, taken: list[_Ask]) -> None:
        texts = [t for ask in taken for t in ask.texts]
        try:
            self.passes += 1
            vecs = self._embed(texts, taken[0].mode, taken[0].persist)
        except Exception as exc:
            if len(taken) == 1:
                taken[0].future.set_exception(exc)
                return
            # One request's text may be what failed: each again alone, so only it fails.
            log.warning("a coalesced embedding pass failed (%s); embedding one by one", exc)
            for ask in taken:
                try:
                    ask.future.set_result(self._embed(ask.texts, ask.mode, ask.persist))
                except Exception as one:
                    ask.future.set_exception(one)
            return
        if len(taken) == 1:
            taken[0].future.set_result(vecs)
            return
        start = 0
        for ask in taken:
            ask.future.set_result(vecs[start : start + len(ask.texts)])
            start += len(ask.texts)

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, deque()
            self._active -= 1
        for ask in waiting:
            if ask.future.set_running_or_notify_cancel():
                ask.future.set_exception(exc)
