"""Conversation sessions, events, scoped state and working memory; importing the package
registers its functions."""

from proxy.agent.sessions import (
    artifacts,  # noqa: F401 (registers its agent functions)
    functions,  # noqa: F401 (registers its agent functions)
    service,  # noqa: F401
)
