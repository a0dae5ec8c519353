"""Bytes from the event loop to a blocking reader thread, a few chunks at a time.

The download (async) feeds chunks; `tarfile` in a worker thread reads them as a file.
At most `max_chunks` chunks are in flight, so memory stays flat however large the
archive is, and nothing touches the disk.
"""

from __future__ import annotations

import io
import queue

_EOF = object()


class ReaderGone(Exception):
    """The reading side stopped (it finished or failed): stop feeding."""


class ChunkPipe(io.RawIOBase):
    def __init__(self, max_chunks: int = 16) -> None:
        super().__init__()
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_chunks)
        self._buffer = memoryview(b"")
        self._gone = False

    # --- writer side (called from the event loop through a thread) ---------------

    def feed(self, chunk: bytes) -> None:
        """Blocks while the reader is behind; raises ReaderGone once it has stopped."""
        while not self._gone:
            try:
                self._queue.put(chunk, timeout=0.2)
                return
            except queue.Full:
                continue
        raise ReaderGone

    def finish(self) -> None:
        self._put_final(_EOF)

    def fail(self, exc: BaseException) -> None:
        self._put_final(exc)

    def _put_final(self, item: object) -> None:
        while not self._gone:
            try:
                self._queue.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    # --- reader side -----------------------------------------------------------

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buffer:
            item = self._queue.get()
            if item is _EOF:
                self._queue.put(_EOF)  # a later read sees the end again
                return 0
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, bytes)
            self._buffer = memoryview(item)
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size

    def abandon(self) -> None:
        """The reader is done: unblock a writer waiting on a full queue."""
        self._gone = True
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return
