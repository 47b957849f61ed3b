"""The one OpenAI-compatible chat client: session summaries and memory corrections use it.

Configured by `summary_llm_url` (an API base such as `http://127.0.0.1:11434/v1`),
`summary_llm_model` and `summary_llm_api_key`; it POSTs to `{url}/chat/completions`
with temperature 0 and returns the first choice's message text. Blocking (urllib):
callers run it in a thread.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from proxy.core.errors import AgentError

TIMEOUT_S = 120


def configured(config: Any) -> bool:
    return bool(getattr(config, "summary_llm_url", ""))


def model_name(config: Any) -> str:
    return str(getattr(config, "summary_llm_model", "") or "")


def complete(config: Any, messages: list[dict[str, str]], timeout: float = TIMEOUT_S) -> str:
    """The endpoint's answer text, or AgentError.unavailable saying what failed."""
    body = {"model": config.summary_llm_model, "messages": messages, "temperature": 0}
    headers = {"Content-Type": "application/json"}
    if config.summary_llm_api_key:
        headers["Authorization"] = f"Bearer {config.summary_llm_api_key}"
    url = config.summary_llm_url.rstrip("/") + "/chat/completions"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            answer = json.loads(resp.read())
        return str(answer["choices"][0]["message"]["content"]).strip()
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise AgentError.unavailable(f"the LLM endpoint {url} failed: {exc}") from None
