"""``BatchEncoder.emit``: a writer's batch encoded, handed to the sink, flushed and counted in
one C call (issue 34).  The bytes are ``encode``'s (tests/ipc/test_fast_encode.py compares
those with the Python path, through the writers too); here what emit adds: the Block it
records, a sink that takes part of a write, a sink that fails, columns it does not take
(nothing written) and a batch whose columns are not decoded yet."""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

from tests.support.writer_support import to_mm

import arrowmm
from arrowmm.errors import ArrowInvalid


def _batch(i: int = 0):
    return arrowmm.record_batch({"i": np.arange(8, dtype=np.int64) + i,
                                 "s": [f"s{j}" if j % 3 else None for j in range(8)],
                                 "f": np.linspace(0, 1, 8)})


class _Trickle(io.RawIOBase):
    """A raw sink that takes at most ``most`` bytes a call, as a pipe or socket may."""

    def __init__(self, most: int):
        self.most, self.out, self.flushes = most, bytearray(), 0

    def writable(self):
        return True

    def write(self, b):
        taken = bytes(memoryview(b).cast("B")[:self.most])
        self.out += taken
        return len(taken)

    def flush(self):
        self.flushes += 1


class _Failing(io.BytesIO):
    """Fails its ``fail_at``-th write (counting from 1)."""

    def __init__(self, fail_at: int):
        super().__init__()
        self.calls, self.fail_at = 0, fail_at

    def write(self, b):
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError("disk full")
        return super().write(b)


@pytest.mark.parametrize("new", [arrowmm.new_file, arrowmm.new_stream])
def test_emit_records_the_block_of_what_it_wrote(new):
    sink = io.BytesIO()
    batch = _batch()
    with new(sink, batch.schema) as w:
        start = w._sink.position
        msg = w._fast.encode(batch.storage_columns, batch.num_rows, start)
        assert w._fast.emit(w, batch) is True
        assert w._sink.position == start + msg.nbytes
        assert sink.getvalue()[start:] == b"".join(bytes(p) for p in msg.parts)
        assert w.num_record_batches == 1
        assert w._batch_blocks == ([(start, msg.metadata_length, msg.body_length)]
                                   if new is arrowmm.new_file else [])
    read = pa.ipc.open_file(sink.getvalue()) if new is arrowmm.new_file else \
        pa.ipc.open_stream(sink.getvalue())
    assert read.read_all().to_pylist() == pa.table(batch).to_pylist()


@pytest.mark.parametrize("most", [1, 7, 100])
def test_emit_to_a_sink_taking_part_of_each_write(most):
    whole, trickle = io.BytesIO(), _Trickle(most)
    for sink in (whole, trickle):
        with arrowmm.new_stream(sink, _batch().schema) as w:
            for i in range(3):
                assert w._fast.emit(w, _batch(i))
    assert bytes(trickle.out) == whole.getvalue()
    assert trickle.flushes >= 3  # (each batch flushed: a reader sees it)


def test_a_sink_error_in_emit_leaves_the_writer_failed():
    sink = _Failing(fail_at=3)  # (the schema, the first batch, then this)
    w = arrowmm.new_stream(sink, _batch().schema)
    w.write(_batch(0))
    with pytest.raises(OSError, match="disk full"):
        w._fast.emit(w, _batch(1))
    assert isinstance(w._failed, OSError)
    with pytest.raises(ArrowInvalid, match="failed earlier"):
        w.write(_batch(2))
    w.abort()


def test_emit_takes_no_column_not_validated_and_writes_nothing():
    imported = arrowmm.record_batch(pa.record_batch({"i": np.arange(4), "s": list("abcd")}))
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, imported.schema) as w:
        before = (w._sink.position, sink.getvalue())
        assert w._fast.emit(w, imported) is False
        assert (w._sink.position, sink.getvalue(), w.num_record_batches) == (*before, 0)
        w.write(imported)  # (the checked path validates, then encodes in C)
        assert w.num_record_batches == 1
    assert pa.ipc.open_stream(sink.getvalue()).read_all().column("s").to_pylist() == list("abcd")


def test_emit_of_a_batch_whose_columns_are_not_decoded_yet():
    table = pa.table({"i": np.arange(5), "s": ["a", None, "c", "d", "e"]})
    lazy = to_mm(table)[0]
    assert None in lazy._columns  # (read, not decoded)
    expected = io.BytesIO()
    with arrowmm.new_stream(expected, lazy.schema) as w:
        w._fast = None  # (the Python path)
        w.write(to_mm(table)[0])
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, lazy.schema) as w:
        assert w._fast.emit(w, lazy) is False  # (decoded now, but not validated yet)
        assert None not in lazy._columns and len(sink.getvalue()) == w._sink.position
        w.write(lazy)
        assert w.num_record_batches == 1
    assert sink.getvalue() == expected.getvalue()
