"""Length-framed records out of a zstd stream, with every size checked before it is trusted.

Decompression happens in fixed-size chunks into one reusable buffer, so memory stays flat
however long the stream is, and a decompression bomb stops at the configured total instead
of filling the disk or the RAM.
"""

from __future__ import annotations

import zlib
from typing import IO, cast

import zstandard

from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import ReadLimits
from simkube.trace.native.format import RECORD_LENGTH

READ_CHUNK = 256 * 1024


class _CountingReader:
    """Counts compressed bytes consumed, to say where in the file corruption was found."""

    def __init__(self, raw: IO[bytes], offset: int) -> None:
        self._raw = raw
        self.offset = offset

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.offset += len(data)
        return data


class RecordFrames:
    """Yields each record's bytes; ``count`` and ``offset`` locate the latest one."""

    def __init__(self, raw: IO[bytes], *, limits: ReadLimits, base_offset: int) -> None:
        self._raw = _CountingReader(raw, base_offset)
        decompressor = zstandard.ZstdDecompressor()
        self._zstd = decompressor.stream_reader(cast("IO[bytes]", self._raw), read_size=READ_CHUNK,
                                                read_across_frames=True, closefd=False)
        self._limits = limits
        self._buffer = bytearray()
        self._pos = 0
        self._base = 0  # decompressed offset of self._buffer[0]
        self.count = 0
        self.offset = 0
        self.checksum = 0  # CRC-32 of every record before the latest one (the end record's)
        self._running = 0

    def next(self) -> bytearray | None:
        """The next record's bytes, or ``None`` at a clean end of stream."""
        self.count += 1
        self.offset = self._base + self._pos
        if not self._ensure(RECORD_LENGTH.size):
            if self._available():
                raise self._error("the stream ends inside a record length (truncated?)")
            return None
        (size,) = RECORD_LENGTH.unpack_from(self._buffer, self._pos)
        if size == 0 or size > self._limits.max_record_bytes:
            raise self._error(f"record length {size} is outside 1..{self._limits.max_record_bytes}")
        if not self._ensure(RECORD_LENGTH.size + size):
            raise self._error(f"the stream ends inside a record of {size} bytes (truncated?)")
        end = self._pos + RECORD_LENGTH.size + size  # after _ensure, which may move _pos
        frame = self._buffer[self._pos + RECORD_LENGTH.size:end]
        self.checksum = self._running
        self._running = zlib.crc32(frame, zlib.crc32(self._buffer[self._pos:self._pos + 4],
                                                     self._running))
        self._pos = end
        return frame

    def expect_end(self) -> None:
        """After the end record nothing may follow."""
        self.offset = self._base + self._pos
        if self._ensure(1):
            raise self._error("unexpected data after the end record")

    def _available(self) -> int:
        return len(self._buffer) - self._pos

    def _ensure(self, size: int) -> bool:
        while self._available() < size:
            if self._pos and self._pos >= len(self._buffer) // 2:
                del self._buffer[:self._pos]
                self._base += self._pos
                self._pos = 0
            try:
                chunk = self._zstd.read(max(READ_CHUNK, size - self._available()))
            except zstandard.ZstdError as exc:
                raise TraceFormatError(f"corrupt compressed data: {exc}",
                                       where=f"near byte {self._raw.offset} of the file",
                                       ) from None
            if not chunk:
                return False
            if self._base + len(self._buffer) + len(chunk) > self._limits.max_decompressed_bytes:
                raise self._error("the trace decompresses to more than "
                                  f"{self._limits.max_decompressed_bytes} bytes")
            self._buffer += chunk
        return True

    def _error(self, message: str) -> TraceFormatError:
        return TraceFormatError(message, where=f"record {self.count} (byte {self.offset} "
                                "decompressed)")
