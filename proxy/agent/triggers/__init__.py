"""Semantic triggers: fire when stored text is close to a concept; importing the package registers its functions."""

from proxy.agent.triggers import (
    api,  # noqa: F401 (registers its agent functions)
    inbox,  # noqa: F401 (registers its agent functions)
    service,  # noqa: F401
)
