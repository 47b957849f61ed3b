"""Semantic triggers: fire when stored text is close to a concept; importing the package registers its functions."""

# The import order is the order the README table and the MCP list show the functions.
# isort: off
from proxy.agent.triggers import api  # noqa: F401 (registers its agent functions)
from proxy.agent.triggers import observe  # noqa: F401 (registers its agent functions)
from proxy.agent.triggers import inbox  # noqa: F401 (registers its agent functions)
from proxy.agent.triggers import service  # noqa: F401
# isort: on
