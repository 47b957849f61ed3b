"""Branches: copy-on-write schemas an agent can query, merge or discard; importing the package registers its functions."""

from proxy.agent.branches import (
    api,  # noqa: F401 (registers its agent functions)
    service,  # noqa: F401
)
