"""The REST control plane: a FastAPI app on rest_port, in the server's event loop.

app.py assembles it; auth.py says who is calling; errors.py gives every failure one
JSON shape; one module per resource (memory, triggers, cot, keys, transpile, ops).
"""
