"""The Postgres v3 protocol messages: one import for the decoder and the encoders.

Frontend messages and `FrontendDecoder` live in frontend.py, backend encoders in
backend.py; callers use `from proxy.wire import messages as m`.
"""

from proxy.wire.backend import *  # noqa: F403
from proxy.wire.backend import FieldDescription
from proxy.wire.frontend import *  # noqa: F403
from proxy.wire.frontend import (
    CANCEL_REQUEST_CODE,
    DEFAULT_MAX_MESSAGE,
    GSSENC_REQUEST_CODE,
    MAX_STARTUP_PACKET,
    PROTOCOL_V3,
    SSL_REQUEST_CODE,
    FrontendDecoder,
    FrontendMessage,
)

__all__ = [
    "CANCEL_REQUEST_CODE",
    "DEFAULT_MAX_MESSAGE",
    "GSSENC_REQUEST_CODE",
    "MAX_STARTUP_PACKET",
    "PROTOCOL_V3",
    "SSL_REQUEST_CODE",
    "FieldDescription",
    "FrontendDecoder",
    "FrontendMessage",
]
