"""Sans-I/O PostgreSQL v3 protocol: message codec and type codecs."""
