"""The agent journal's files (journal.py holds the logic): preallocated segments
overwritten in place, and a watermark of what was applied.

Why overwrite in place: appending to a file changes its size, so each fdatasync also
writes the file's metadata through the filesystem's journal (~2-4 ms on this disk);
overwriting blocks that are already allocated and written costs ~0.15 ms. So a segment
is created at full size with zeros written (not fallocate: unwritten extents need a
metadata change on first write) before it is used, and a segment whose records are all
applied is recycled as the next spare by a rename.

Record: header `<IIQ` (payload length, CRC-32, LSN) then the payload. The CRC covers
the segment's number, the length, the LSN and the payload, so a stale record of a
recycled file (another number), zeros, or a record torn by a crash ends the segment's
valid records. Rotation writes an end marker (length END) into the full segment;
recovery reads segments in number order and stops after the first one without it (a
later segment can only hold writes never acknowledged). LSNs grow across restarts.

Watermark (`<path>.applied`): the highest LSN known applied, in two CRC-checked slots
written alternately (a torn write leaves the other). Written before a delete, so a replay
after a crash cannot bring back a row deleted since its record was applied.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import struct
import zlib
from dataclasses import dataclass

log = logging.getLogger("hatiproxy.agent.journal")

HEADER = struct.Struct("<IIQ")  # payload length, crc32, lsn
END = 0xFFFFFFFF  # the length of a segment's end marker
SEGMENT_BYTES = 64 << 20  # a spare segment, zero-filled ahead of use
FIRST_SEGMENT_BYTES = 1 << 20  # a fresh data directory's first segment, made at start
MAX_RECORD = 16 << 20  # a longer record takes the transaction path
_SLOT = struct.Struct("<QI")  # watermark: lsn, crc32
_SLOT_AT = (0, 512)
_ZEROS = bytes(1 << 20)


def _crc(seg: int, length: int, lsn: int, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(struct.pack("<QIQ", seg, length, lsn)))


def record(seg: int, lsn: int, payload: bytes) -> bytes:
    return HEADER.pack(len(payload), _crc(seg, len(payload), lsn, payload), lsn) + payload


def _sync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _zero_fill(fd: int, size: int) -> None:
    at = 0
    while at < size:
        at += os.pwrite(fd, _ZEROS[: min(len(_ZEROS), size - at)], at)
    os.fsync(fd)


@dataclass
class Segment:
    number: int
    path: str
    fd: int
    size: int
    used: int = 0
    last_lsn: int = 0  # the LSN of its last record (0: none)


def read_segment(seg: int, data: bytes) -> tuple[list[tuple[int, bytes]], bool]:
    """The valid records (lsn, payload) of a segment's bytes, and whether it ended with
    the end marker."""
    out: list[tuple[int, bytes]] = []
    at, last = 0, 0
    while at + HEADER.size <= len(data):
        length, crc, lsn = HEADER.unpack_from(data, at)
        if length == END:
            return out, crc == _crc(seg, END, lsn, b"")
        payload = data[at + HEADER.size : at + HEADER.size + length]
        if len(payload) != length or lsn <= last or crc != _crc(seg, length, lsn, payload):
            break  # zeros, a stale record of a recycled file, or torn by a crash
        out.append((lsn, payload))
        at += HEADER.size + length
        last = lsn
    return out, False


class Files:
    """The segments and the watermark of one journal. Not thread-safe: journal.py calls
    `append`/`rotate` under its state lock, the rest from one thread at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.current: Segment | None = None
        self.spare: Segment | None = None  # the next segment, zero-filled, name durable
        self.retiring: list[Segment] = []  # full, records maybe not yet synced
        self.full: list[Segment] = []  # full and synced: removed once applied
        self.recyclable: Segment | None = None  # applied, to become the next spare
        self.watermark = 0
        self._slot = 0
        self._wm_fd: int | None = None
        self._pattern = re.compile(re.escape(os.path.basename(path)) + r"\.(\d{8})$")

    def _segment_path(self, number: int) -> str:
        return f"{self.path}.{number:08d}"

    def _existing(self) -> list[int]:
        folder = os.path.dirname(self.path) or "."
        found = (self._pattern.match(n) for n in os.listdir(folder))
        return sorted(int(m.group(1)) for m in found if m)

    # ---- start ------------------------------------------------------------------------

    def recover(self) -> tuple[list[tuple[int, bytes]], int]:
        """The records above the watermark, in order, and the highest LSN seen."""
        self.watermark = self._read_watermark()
        records: list[tuple[int, bytes]] = []
        top = self.watermark
        for number in self._existing():
            with open(self._segment_path(number), "rb") as f:
                got, ended = read_segment(number, f.read())
            records += [(lsn, p) for lsn, p in got if lsn > self.watermark]
            top = max([top, *(lsn for lsn, _ in got)])
            if not ended:
                break  # later segments hold nothing acknowledged
        return records, top

    def open(self) -> None:
        """After the replay committed: start a segment with a new number (records of the
        old ones cannot be read as its own), recycling the largest old file."""
        numbers = self._existing()
        number = (numbers[-1] if numbers else 0) + 1
        path = self._segment_path(number)
        old = [self._segment_path(n) for n in numbers]
        keep = max(old, key=os.path.getsize, default=None)
        for p in old:
            if p != keep:
                os.unlink(p)
        if keep is not None and os.path.getsize(keep) >= FIRST_SEGMENT_BYTES:
            os.replace(keep, path)
            fd = os.open(path, os.O_RDWR)
        else:
            if keep is not None:
                os.unlink(keep)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            _zero_fill(fd, FIRST_SEGMENT_BYTES)
        self.current = Segment(number, path, fd, os.fstat(fd).st_size)
        if self._wm_fd is None:
            wm = self.path + ".applied"
            fresh = not os.path.exists(wm)
            self._wm_fd = os.open(wm, os.O_RDWR | os.O_CREAT, 0o600)
            if fresh:
                _zero_fill(self._wm_fd, 1024)
        _sync_dir(self.path)

    def _read_watermark(self) -> int:
        try:
            with open(self.path + ".applied", "rb") as f:
                data = f.read(1024)
        except FileNotFoundError:
            return 0
        best = 0
        for at in _SLOT_AT:
            if len(data) >= at + _SLOT.size:
                lsn, crc = _SLOT.unpack_from(data, at)
                if crc == zlib.crc32(struct.pack("<Q", lsn)) and lsn > best:
                    best = lsn
        return best

    # ---- writing (under the journal's state lock) --------------------------------------

    def append(self, lsn: int, payload: bytes) -> bool:
        """Write a record (not yet synced); False when no segment has room for it yet
        (a spare is being made: the caller takes the transaction path)."""
        seg = self.current
        if seg is None:
            return False
        data = record(seg.number, lsn, payload)
        if seg.used + len(data) + HEADER.size > seg.size:  # room for the end marker
            if len(data) + HEADER.size > SEGMENT_BYTES or not self.rotate(lsn):
                return False
            seg = self.current
            assert seg is not None
            data = record(seg.number, lsn, payload)  # the CRC covers the segment's number
            if seg.used + len(data) + HEADER.size > seg.size:
                return False
        written = os.pwrite(seg.fd, data, seg.used)
        if written != len(data):
            raise OSError(f"short write to the agent journal ({written} of {len(data)})")
        seg.used += len(data)
        seg.last_lsn = lsn
        return True

    def rotate(self, lsn: int) -> bool:
        """End the current segment and continue in the spare (False: none ready yet)."""
        seg, spare = self.current, self.spare
        if seg is None or spare is None:
            return False
        os.pwrite(seg.fd, HEADER.pack(END, _crc(seg.number, END, lsn, b""), lsn), seg.used)
        self.retiring.append(seg)
        self.current, self.spare = spare, None
        return True

    def wants_spare(self) -> bool:
        seg = self.current
        return seg is not None and self.spare is None and seg.used * 2 > seg.size

    # ---- the flusher (under the journal's sync lock) -----------------------------------

    def sync(self, retiring: list[Segment], current: Segment | None) -> None:
        """fdatasync what was written: full segments first (then closed), the current."""
        for seg in retiring:
            os.fdatasync(seg.fd)
        if current is not None:
            os.fdatasync(current.fd)
        for seg in retiring:
            os.close(seg.fd)
            seg.fd = -1

    # ---- upkeep (the journal's spare-maker thread) -------------------------------------

    def make_spare(self, number: int, recycled: Segment | None) -> Segment:
        """The segment to continue in once the current one is full: a full segment whose
        records are all applied, renamed, or a new zero-filled file. Its name is synced
        before it is used (an acknowledged record must be found under it)."""
        path = self._segment_path(number)
        if recycled is not None:
            os.replace(recycled.path, path)
            fd = os.open(path, os.O_RDWR)
        else:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            _zero_fill(fd, SEGMENT_BYTES)
        _sync_dir(self.path)
        return Segment(number, path, fd, os.fstat(fd).st_size)

    def set_watermark(self, lsn: int) -> None:
        """Record (synced) that every record up to lsn is applied."""
        if self._wm_fd is None or lsn <= self.watermark:
            return
        self._slot ^= 1
        slot = _SLOT.pack(lsn, zlib.crc32(struct.pack("<Q", lsn)))
        os.pwrite(self._wm_fd, slot, _SLOT_AT[self._slot])
        os.fdatasync(self._wm_fd)
        self.watermark = lsn

    def close(self) -> None:
        for seg in [*self.retiring, self.current, self.spare]:
            if seg is not None and seg.fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(seg.fd)
                seg.fd = -1
        if self._wm_fd is not None:
            os.close(self._wm_fd)
            self._wm_fd = None
        self.current = self.spare = None
        self.retiring = []
