"""What every fuzz target does with one input, without atheris (the tests reuse it).

Each ``target_*`` function takes the raw bytes of one input and reads them the
way a user would.  Bad bytes may raise ``ArrowInvalid`` / ``ArrowNotImplementedError``
(caught here); anything else leaves the function and is a finding.  The
``differential`` target additionally raises ``Disagreement`` when two read paths
that must agree do not.

``outcome(open_fn)`` reduces one read to something comparable: the schema,
then per batch its rows or the error that stopped it (type and batch index).
"""
from __future__ import annotations

import random
import zlib
from typing import Callable, List, Tuple

import arrowmm
from arrowmm import ArrowInvalid, ArrowNotImplementedError

__all__ = ["ALLOWED", "TARGETS", "Disagreement", "ChunkedSource", "outcome", "run_target"]

ALLOWED = (ArrowInvalid, ArrowNotImplementedError)
MAX_BATCHES = 64  # batches touched per input (a 64 KiB footer can list ~2,700)
MAX_ROWS = 1 << 14  # rows converted whole; longer batches convert head and tail
MAGIC = b"ARROW1"


class Disagreement(AssertionError):
    """Two read paths gave different batches, or failed at different places."""


class ChunkedSource:
    """A binary file-like object over ``data`` whose ``read`` returns short chunks.

    Chunk sizes come from a generator seeded by the data itself, so one input
    always reads the same way (a finding reproduces from its file alone).
    """

    def __init__(self, data: bytes, seed=None):
        self._data = memoryview(data)
        self._pos = 0
        self._rng = random.Random(zlib.crc32(data) if seed is None else seed)
        self.name = "chunked source"

    def read(self, n=-1) -> bytes:
        left = len(self._data) - self._pos
        if n is None or n < 0 or n > left:
            n = left
        if n > 1:
            n = self._rng.randint(1, min(n, self._rng.choice((1, 3, 8, 64, 4096))))
        out = bytes(self._data[self._pos:self._pos + n])
        self._pos += len(out)
        return out


def _rows(batch) -> list:
    """``batch.to_pylist()``; for a batch longer than MAX_ROWS, its head and tail rows.

    A batch of nulls (no buffers) may honestly claim 2**31 rows in a few bytes;
    converting all of them is the user's choice, not something to fuzz.
    """
    n = batch.num_rows
    if n <= MAX_ROWS:
        return batch.to_pylist()
    half = MAX_ROWS // 2
    return batch.slice(0, half).to_pylist() + batch.slice(n - half, half).to_pylist()


def _touch_batch(batch, full: bool) -> None:
    str(batch.schema)
    for k in range(batch.num_columns):
        try:
            col = batch.column(k)
            if full:
                col.validate(full=True)
            col.null_count  # noqa: B018
        except ALLOWED:
            pass
    try:
        if full:
            batch.validate(full=True)
        _rows(batch)
    except ALLOWED:
        pass


def _touch_file(reader, full: bool) -> None:
    str(reader.schema)
    reader.metadata  # noqa: B018
    for i in range(min(reader.num_record_batches, MAX_BATCHES)):
        try:
            batch = reader.get_batch(i)
        except ALLOWED:
            continue
        _touch_batch(batch, full)


def _touch_stream(reader, full: bool) -> None:
    str(reader.schema)
    for _ in range(MAX_BATCHES):
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except ALLOWED:
            return
        _touch_batch(batch, full)


def _guarded(open_fn: Callable, touch: Callable, full: bool) -> None:
    try:
        reader = open_fn()
    except ALLOWED:
        return
    with reader:
        touch(reader, full)


def target_file(data: bytes) -> None:
    """The file reader over the bytes (zero-copy), every batch converted."""
    _guarded(lambda: arrowmm.open_file(data), _touch_file, False)


def target_stream(data: bytes) -> None:
    """The stream reader over the bytes (zero-copy), every batch converted."""
    _guarded(lambda: arrowmm.open_stream(data), _touch_stream, False)


def target_chunks(data: bytes) -> None:
    """The stream reader fed through a file-like object in random chunk sizes."""
    _guarded(lambda: arrowmm.open_stream(ChunkedSource(data)), _touch_stream, False)


def target_full(data: bytes) -> None:
    """``open`` (sniffs file or stream), then validate(full=True) and to_pylist() on every batch."""
    def touch(reader, full):
        (_touch_file if isinstance(reader, arrowmm.FileReader) else _touch_stream)(reader, full)
    _guarded(lambda: arrowmm.open(data), touch, True)


# -- differential ----------------------------------------------------------------------------

Outcome = Tuple[str, object]


def _error(exc: BaseException) -> Tuple[str, str]:
    """The kind of ``exc``: its public class (``limits.LimitExceeded`` is an ``ArrowInvalid``:
    which one a reader raises depends on whether it re-words the error with its context)."""
    kind = next((c for c in type(exc).__mro__ if c.__module__ == "arrowmm.errors"), type(exc))
    return ("error", kind.__name__)


def outcome(open_fn: Callable, file_reader: bool = False, max_batches: int = MAX_BATCHES) -> List[Outcome]:
    """``[("schema", str)] + [("batch", rows) | ("error", kind), ...]``, ending at the first error.

    An error while opening gives ``[("error", kind)]``.  A batch whose header
    reads but whose columns fail counts as an error at that batch, so readers
    that decode lazily and readers that decode eagerly compare alike.
    """
    try:
        reader = open_fn()
    except ALLOWED as exc:
        return [_error(exc)]
    out: List[Outcome] = [("schema", str(reader.schema))]
    with reader:
        for i in range(max_batches):
            try:
                if file_reader:
                    if i >= reader.num_record_batches:
                        break
                    batch = reader.get_batch(i)
                else:
                    batch = reader.read_next_batch()
                batch.validate(full=True)
                out.append(("batch", _rows(batch)))
            except StopIteration:
                break
            except ALLOWED as exc:
                out.append(_error(exc))
                break
    return out


def _same(a: List[Outcome], b: List[Outcome]) -> bool:
    """Equal outcomes; NaN-safe (rows compare by repr)."""
    return a == b or repr(a) == repr(b)


def stream_outcomes(data: bytes) -> Tuple[List[Outcome], List[Outcome]]:
    """The stream reader over ``data`` zero-copy, and fed in random chunks."""
    return (outcome(lambda: arrowmm.open_stream(data)),
            outcome(lambda: arrowmm.open_stream(ChunkedSource(data))))


def target_differential(data: bytes) -> None:
    """Zero-copy and chunked stream reads of the same bytes agree batch for batch, error for
    error (an IPC file's leading magic is dropped first: the chunked reader takes streams only).

    The file reader is compared with the stream inside the file in the tests, over valid files
    only: a mutated footer may legitimately list the same block twice, which the stream
    reader cannot see.
    """
    while data[:6] == MAGIC:
        data = data[8:]
    zero_copy, chunked = stream_outcomes(data)
    if not _same(zero_copy, chunked):
        raise Disagreement(f"zero-copy stream {zero_copy!r}\nchunked stream {chunked!r}")


TARGETS = {
    "file": target_file,
    "stream": target_stream,
    "chunks": target_chunks,
    "full": target_full,
    "differential": target_differential,
}


def run_target(name: str, data: bytes) -> None:
    TARGETS[name](data)
