"""``validate(full=True)`` checks what pyarrow's full validation checks, so that damage that
still reads as plausible values is reported (adversarial review s41): the null count against
the validity bitmap, and the zero padding after an inline string view.

Each damage here passed full validation before, and read as other data.
"""
from __future__ import annotations

import io
import struct

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm


def _file_bytes(batch) -> bytearray:
    sink = io.BytesIO()
    with ipc.new_file(sink, batch.schema) as w:
        w.write_batch(batch)
    return bytearray(sink.getvalue())


def _body_start(data, batch) -> int:
    """Offset in ``data`` of the record batch's body (pyarrow's own serialization of it)."""
    msg = batch.serialize().to_pybytes()
    at = data.find(msg)
    assert at > 0
    return at + len(msg) - ipc.read_message(pa.py_buffer(msg)).body.size


def test_flipped_validity_bit_fails_full_validation():
    """A flipped bitmap bit made row 3 null while the header kept null_count=1: to_pylist
    showed two nulls, null_count said one, and validate(full=True) passed.  A header count of
    0 is not compared (no bitmap is read then, as in pyarrow)."""
    batch = pa.record_batch({"x": pa.array([1, None, 3, 4], pa.int64())})
    data = _file_bytes(batch)
    body = _body_start(data, batch)
    assert data[body] == 0b1101
    data[body] = 0b0101
    with pytest.raises(pa.ArrowInvalid, match="null_count"):
        ipc.open_file(pa.py_buffer(bytes(data))).get_batch(0).validate(full=True)
    with arrowmm.open_file(bytes(data)) as reader:
        damaged = reader.get_batch(0)
        damaged.validate()  # (structure only: the bitmap is not counted)
        with pytest.raises(arrowmm.ArrowInvalid, match=r"null count 1 .* marks 2 of 4"):
            damaged.validate(full=True)
    with arrowmm.open_file(bytes(_file_bytes(batch))) as reader:  # (the good file passes)
        reader.get_batch(0).validate(full=True)
    # the other way round, a header that says 0 nulls over a bitmap with a zero bit:
    # pyarrow's reader drops the bitmap (every value valid) and its full validation passes;
    # arrowmm reads the same values on every path (Python values, the mask, the C export),
    # never a null on some paths and a value on others
    data = _file_bytes(batch)
    at = data.find(struct.pack("<qq", 4, 1))  # the FieldNode (length 4, null_count 1)
    assert at > 0
    struct.pack_into("<q", data, at + 8, 0)
    theirs = ipc.open_file(pa.py_buffer(bytes(data))).get_batch(0)
    theirs.validate(full=True)
    with arrowmm.open_file(bytes(data)) as reader:
        ours = reader.get_batch(0)
        ours.validate(full=True)
        column = ours.column("x")
        assert column.null_count == 0 and column.is_valid().all()
        assert column.to_pylist() == theirs.column("x").to_pylist()
        assert pa.record_batch(ours).column("x").to_pylist() == theirs.column("x").to_pylist()


def test_inline_view_with_damaged_length_fails_full_validation():
    """An inline string view whose length was damaged from 5 to 2 read "short" as "sh" and
    passed: the bytes after an inline value must be zero, as pyarrow checks."""
    batch = pa.record_batch({"sv": pa.array(["short", "xyz", None], pa.string_view())})
    data = _file_bytes(batch)
    at = data.find(b"\x05\x00\x00\x00short")
    assert at > 0
    data[at] = 2
    with pytest.raises(pa.ArrowInvalid, match="padding"):
        ipc.open_file(pa.py_buffer(bytes(data))).get_batch(0).validate(full=True)
    with arrowmm.open_file(bytes(data)) as reader:
        with pytest.raises(arrowmm.ArrowInvalid, match=r"view\[0\].*size=2.*padding"):
            reader.get_batch(0).validate(full=True)
    good = arrowmm.open_file(bytes(_file_bytes(batch)))
    good.get_batch(0).validate(full=True)
    written = io.BytesIO()  # (arrowmm's own views, written and read back, pass too)
    with arrowmm.new_file(written, good.schema) as writer:
        writer.write(good.get_batch(0))
    arrowmm.open_file(written.getvalue()).get_batch(0).validate(full=True)


@pytest.mark.parametrize("offset,size", [(8388609, 0), (0, 8388608), (0, -2147483648)],
                         ids=["offset", "size", "negative-size"])
def test_a_null_list_view_slot_outside_the_child_is_refused(offset, size):
    # (review, session 42) full validation looked at non-null slots only; pyarrow's looks at
    # every slot, and its kernels read null ones: such an array "validated" by arrowmm and
    # cast to a list by pyarrow crashed the process
    child = pa.array([1, 2, 3], pa.int32())
    validity = pa.array([True, False, True, True]).buffers()[1]
    offsets = pa.py_buffer(np.array([0, offset, 1, 3], np.int32).tobytes())
    sizes = pa.py_buffer(np.array([1, size, 2, 0], np.int32).tobytes())
    theirs = pa.Array.from_buffers(pa.list_view(pa.int32()), 4, [validity, offsets, sizes],
                                   children=[child])
    with pytest.raises(pa.ArrowInvalid):
        theirs.validate(full=True)
    ours = arrowmm.array(theirs)
    ours.validate()  # (the structure: buffers long enough)
    with pytest.raises(arrowmm.ArrowInvalid, match="list-view"):
        ours.validate(full=True)
