"""The chain-of-thought ledger: hash-chained reasoning steps; importing the package registers its functions."""

from proxy.agent.ledger import (
    api,  # noqa: F401 (registers its agent functions)
    append,  # noqa: F401 (registers its agent functions)
    service,  # noqa: F401
)
