"""Names every layer agrees on."""

INTERNAL_SCHEMA = "hatidata_internal"  # the real tables; main holds identity-filtered views
