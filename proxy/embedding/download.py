"""HTTP(S) download of one pinned file: resumable, checksummed, atomic.

Bytes go to `<dest>.part`; an interrupted transfer leaves the `.part` file and the next
attempt asks for the rest with a Range header. Only a file whose sha256 matches the pin is
renamed to `dest`; a mismatch deletes the partial file and raises ChecksumMismatch.
"""

from __future__ import annotations

import hashlib
import sys
import time
import urllib.error
import urllib.request
from http.client import HTTPException
from pathlib import Path
from typing import TextIO

from .errors import ChecksumMismatch, EmbeddingError

CHUNK = 1 << 16
USER_AGENT = "hatiproxy-model-pull/1"


class Progress:
    """A one-line progress bar on stderr (no tqdm dependency), throttled to ~10 updates/s."""

    def __init__(
        self,
        label: str,
        total: int | None,
        done: int = 0,
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.label, self.total, self.done = label, total, done
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._start = time.monotonic()
        self._start_done = done
        self._last = 0.0

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and now - self._last >= 0.1:
            self._last = now
            self._draw(now)

    def close(self) -> None:
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, now: float) -> None:
        mb = self.done / 1e6
        rate = (self.done - self._start_done) / 1e6 / max(now - self._start, 1e-6)
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(frac * 30)
            line = (
                f"\r{self.label:<20} [{bar:<30}] {frac:6.1%} "
                f"{mb:7.1f}/{self.total / 1e6:.1f} MB {rate:6.1f} MB/s"
            )
        else:
            line = f"\r{self.label:<20} {mb:7.1f} MB {rate:6.1f} MB/s"
        self.stream.write(line)
        self.stream.flush()


def _hash_existing(path: Path, h: hashlib._Hash) -> int:
    size = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            size += len(block)
    return size


def download_file(
    url: str, dest: Path, sha256: str, *, progress: bool = True, timeout: float = 60.0
) -> Path:
    """Fetch `url` into `dest` if its content has sha256 `sha256`; return `dest`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    h = hashlib.sha256()
    have = _hash_existing(part, h) if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # nothing left to fetch: the .part is already whole
            response = None
        else:
            raise EmbeddingError(f"download of {url} failed: HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, OSError) as e:
        raise EmbeddingError(f"cannot reach {url}: {e}") from e
    if response is not None:
        with response:
            if have and response.status != 206:  # server ignored Range: start over
                have, h = 0, hashlib.sha256()
            length = response.headers.get("Content-Length")
            total = have + int(length) if length is not None else None
            bar = Progress(dest.name, total, have, enabled=progress)
            try:
                with open(part, "ab" if have else "wb") as out:
                    while block := response.read(CHUNK):
                        out.write(block)
                        h.update(block)
                        bar.update(len(block))
            except (OSError, HTTPException) as e:
                raise EmbeddingError(
                    f"download of {url} interrupted after {bar.done} bytes ({e}); "
                    "run the same pull again to resume"
                ) from e
            finally:
                bar.close()
            if total is not None and bar.done < total:
                raise EmbeddingError(
                    f"download of {url} interrupted after {bar.done} of {total} bytes; "
                    "run the same pull again to resume"
                )
    digest = h.hexdigest()
    if digest != sha256:
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(
            f"{url}: sha256 {digest} does not match the pinned {sha256}; file discarded"
        )
    part.replace(dest)
    return dest
