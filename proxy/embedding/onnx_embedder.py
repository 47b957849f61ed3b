"""OnnxEmbedder: tokenizers + onnxruntime + numpy pooling over a model directory.

Thread-safe: onnxruntime's `run` and the Rust tokenizer may be called from several
threads; the tokenizer is configured once in the constructor and never mutated after.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, cast

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from .errors import EmbeddingError, ModelNotAvailable
from .modelconfig import MODEL_FILE, TOKENIZER_FILE, ModelConfig, load_model_config
from .provider import Mode, check_mode, l2_normalize

# fp32: model.onnx as installed; int8: its dynamically quantized copy (quantize.py)
Precision = Literal["fp32", "int8"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "int8")
DEFAULT_MAX_BATCH = 32
# padded tokens per forward pass: ~32 short texts, ~9 of 100 tokens, 4 of 256
DEFAULT_MAX_BATCH_TOKENS = 1024


_RUN = threading.local()  # .options: the RunOptions this thread's model passes run with

# After each pass the CPU arena gives back the regions it grew by for that pass; its
# first region (the small passes) stays. Without it the arena keeps every region it
# ever grew by, in power-of-two steps, and passes of ever new (batch, width) shapes
# grew it for as long as the server ran: 225 random shapes within DEFAULT_MAX_BATCH_TOKENS
# took the process RSS 222 -> 284 MiB, still rising; with it 229 MiB (docs/memory.md).
ARENA_SHRINKAGE = ("memory.enable_memory_arena_shrinkage", "cpu:0")


def new_run_options() -> ort.RunOptions:
    """RunOptions for model passes: the arena shrinks after each (ARENA_SHRINKAGE)."""
    options = ort.RunOptions()
    options.add_run_config_entry(*ARENA_SHRINKAGE)
    return options


def _this_threads_options() -> ort.RunOptions:
    options = getattr(_RUN, "options", None)
    if options is None:
        options = _RUN.options = new_run_options()
    return options


@contextmanager
def run_options(options: ort.RunOptions | None) -> Iterator[None]:
    """Model passes on this thread run with `options` (its `terminate` flag, set from
    another thread, ends a pass in progress with an error: worker.py's bulk passes);
    None: the thread's own (new_run_options)."""
    before = getattr(_RUN, "options", None)
    _RUN.options = options
    try:
        yield
    finally:
        _RUN.options = before


def session_options(threads: int) -> ort.SessionOptions:
    """ORT options for a process that shares its cores with DuckDB and asyncio."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.intra_op_num_threads = max(1, threads)
    opts.inter_op_num_threads = 1
    # spinning threads burn a core while idle, stealing it from DuckDB
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.log_severity_level = 3
    return opts


class OnnxEmbedder:
    def __init__(
        self,
        model_dir: str | Path,
        *,
        threads: int = 1,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
        config: ModelConfig | None = None,
        precision: Precision = "fp32",
    ) -> None:
        self.model_dir = Path(model_dir)
        onnx_path = self.model_dir / MODEL_FILE
        tok_path = self.model_dir / TOKENIZER_FILE
        if not onnx_path.exists() or not tok_path.exists():
            raise ModelNotAvailable(f"no {MODEL_FILE} + {TOKENIZER_FILE} in {self.model_dir}")
        self.config = config or load_model_config(self.model_dir)
        self.precision = check_precision(precision)
        self._int8_sha = ""
        if self.precision == "int8":
            from .quantize import int8_model

            onnx_path, self._int8_sha = int8_model(self.model_dir)
        self.threads = threads
        self.max_batch = max(1, max_batch)
        self.max_batch_tokens = max(1, max_batch_tokens)
        self.session = ort.InferenceSession(
            str(onnx_path),
            sess_options=session_options(threads),
            providers=["CPUExecutionProvider"],
        )
        self._input_names = [i.name for i in self.session.get_inputs()]
        missing = {"input_ids", "attention_mask"} - set(self._input_names)
        unknown = set(self._input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if missing or unknown:
            raise EmbeddingError(
                f"{onnx_path}: expected inputs input_ids, attention_mask[, token_type_ids]; "
                f"graph declares {self._input_names}"
            )
        self._has_token_types = "token_type_ids" in self._input_names
        outputs = [o.name for o in self.session.get_outputs()]
        # prefer the token-level output; pooling happens here
        self._output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        # our own padding (per sorted batch) below; the file's fixed padding must not apply
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.config.max_length)
        self._pad_id = self._find_pad_id()
        self._dims = self.config.dims or int(self._run([[self._pad_id]], 1).shape[1])

    def _find_pad_id(self) -> int:
        for token in ("[PAD]", "<pad>"):
            tid = self.tokenizer.token_to_id(token)
            if tid is not None:
                return tid
        return 0

    @property
    def model_name(self) -> str:
        # int8 vectors are another model's as far as stored vectors go: the agent layer
        # re-embeds memories and trigger concepts whose embedding_model differs from this
        return self.config.name + ("+int8" if self.precision == "int8" else "")

    @property
    def model_id(self) -> str:
        """Names the exact weights: the embedding cache keys vectors by it."""
        if self.precision == "int8":
            return f"{self.model_name}@{self._int8_sha[:12]}"
        digest = self.config.files.get(MODEL_FILE, "")
        return f"{self.config.name}@{digest[:12]}" if digest else self.config.name

    @property
    def dimensions(self) -> int:
        return self._dims

    @property
    def query_prefix(self) -> str:
        return self.config.query_prefix

    def describe(self) -> str:
        """One line for the server's start-up log: which model, from where."""
        c = self.config
        prefix = "query prefix" if c.query_prefix else "no query prefix"
        weights = "int8 weights (model.int8.onnx)" if self.precision == "int8" else "fp32"
        return (
            f"{self.model_name} ({self.dimensions} dims, {c.pooling} pooling, "
            f"max {c.max_length} tokens, {prefix}, {weights}, {self.threads} thread(s)) "
            f"from {self.model_dir} [{c.source}]"
        )

    def embed(self, text: str, *, mode: Mode = "passage") -> np.ndarray:
        return self.embed_batch([text], mode=mode)[0]

    def embed_batch(self, texts: Sequence[str], *, mode: Mode = "passage") -> np.ndarray:
        check_mode(mode)
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if mode == "query" and self.config.query_prefix:
            texts = [self.config.query_prefix + t for t in texts]
        # single-segment inputs: token type ids are all 0, so only ids are needed
        ids_list = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        if n == 1:  # the common query case: no sorting needed
            return self._run(ids_list, len(ids_list[0]))
        lengths = np.fromiter(map(len, ids_list), dtype=np.int64, count=n)
        # sort by length so each sub-batch pads to similar lengths; restore order at the end
        order = np.argsort(lengths, kind="stable")
        result = np.empty((n, self.dimensions), dtype=np.float32)
        for idx in self._sub_batches(order, lengths):
            result[idx] = self._run([ids_list[i] for i in idx], int(lengths[idx[-1]]))
        return result

    def _sub_batches(self, order: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
        """Cut the length-sorted rows into batches of at most `max_batch` rows and
        `max_batch_tokens` padded tokens: on CPU, big padded batches of long texts run
        slower per text than small ones (measured in bench/embedding.py)."""
        # int8: one text per pass. Dynamic quantization scales activations per tensor, so
        # in a batch a text's vector would depend on its neighbours and padding (cosine
        # down to ~0.985 to the same text alone); per text it is a function of the text.
        rows = 1 if self.precision == "int8" else self.max_batch
        batches, start, n = [], 0, len(order)
        while start < n:
            end = start + 1
            while (
                end < n
                and end - start < rows
                and (end - start + 1) * int(lengths[order[end]]) <= self.max_batch_tokens
            ):
                end += 1
            batches.append(order[start:end])
            start = end
        return batches

    def _run(self, ids_list: list[list[int]], width: int) -> np.ndarray:
        """One padded forward pass and pooling for token id lists of at most `width`."""
        b = len(ids_list)
        ids = np.full((b, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((b, width), dtype=np.int64)
        for row, row_ids in enumerate(ids_list):
            ids[row, : len(row_ids)] = row_ids
            mask[row, : len(row_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if self._has_token_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run([self._output], feeds, _this_threads_options())[0]
        if hidden.ndim == 2:  # graph already pooled
            pooled = hidden
        elif self.config.pooling == "cls":
            pooled = hidden[:, 0]
        else:  # masked mean as one matmul: no (batch, seq, hidden) temporary
            m = mask.astype(np.float32)
            pooled = np.matmul(m[:, None, :], hidden)[:, 0] / np.maximum(
                m.sum(axis=1, keepdims=True), 1e-9
            )
        pooled = pooled.astype(np.float32, copy=False)
        return l2_normalize(pooled) if self.config.normalize else pooled


def check_precision(value: str) -> Precision:
    """`fp32` or `int8` (any case), else EmbeddingError naming the setting."""
    v = str(value).strip().lower()
    if v not in PRECISIONS:
        raise EmbeddingError(
            f"embedding precision must be 'fp32' or 'int8', not {value!r} "
            "(HATIDATA_EMBEDDING_PRECISION / --embedding-precision)"
        )
    return cast(Precision, v)
