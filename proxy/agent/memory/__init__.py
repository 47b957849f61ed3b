"""Long-term agent memory: store, search (hybrid), admin; importing the package registers its functions."""

from proxy.agent.memory import (
    admin,  # noqa: F401 (registers its agent functions)
    functions,  # noqa: F401 (registers its agent functions)
    process,  # noqa: F401 (registers process_memories)
    service,  # noqa: F401
)
