"""Summaries of conversation text, with or without a language model.

With `summary_llm_url` set (an OpenAI-compatible API base, e.g.
`http://127.0.0.1:11434/v1`), the text goes to its `/chat/completions` in chunks of
at most CHUNK_CHARS and the chunk summaries are joined; the method is `llm:<model>`.
Without one, an extractive summary works offline: the sentences closest to the
centroid of all sentences' embeddings (the most central ones), at most MAX_SENTENCES,
in their original order; method `extractive`. Without a model either, the first
sentences (method `lead`).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.core import llm

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

CHUNK_CHARS = 80_000
MAX_SENTENCES = 8
TIMEOUT_S = 120
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
PROMPT = (
    "Summarise this conversation for the assistant's long-term memory: the facts, "
    "decisions, preferences and open questions, in a few sentences."
)


async def summarize(layer: AgentContext, text: str) -> tuple[str, str]:
    """(summary, method)."""
    config = layer.config
    if config.summary_llm_url:
        chunks = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]
        parts = [await asyncio.to_thread(_complete, config, chunk) for chunk in chunks]
        return "\n".join(parts), f"llm:{config.summary_llm_model}"
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) <= MAX_SENTENCES:
        return " ".join(sentences), "extractive"
    worker = layer.semantic.worker
    if worker is None:
        return " ".join(sentences[:MAX_SENTENCES]), "lead"
    vecs = np.asarray(await worker.submit(sentences, "passage"), dtype=np.float32)
    centroid = vecs.mean(axis=0)
    score = vecs @ centroid / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(centroid) + 1e-9)
    # Stable: equal scores keep the earlier sentence, so a summary is reproducible.
    best = sorted(np.argsort(-score, kind="stable")[:MAX_SENTENCES].tolist())
    return " ".join(sentences[i] for i in best), "extractive"


def _complete(config: Any, text: str) -> str:
    prompt = [{"role": "system", "content": PROMPT}, {"role": "user", "content": text}]
    return llm.complete(config, prompt, TIMEOUT_S)
