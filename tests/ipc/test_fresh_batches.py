"""Freshly built batches written at pyarrow's speed (issue 34): a column arrowmm's own builders
made is valid by construction and skips the writers' full validation; memory from a file, the
C data interface or a user's buffers is still fully validated; a batch schema the writer
matched last time is not compared again.
"""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays.array import make_array
from arrowmm.types import Field
from tests.support.helpers import column_read_back, int32_buffer, pyarrow_refuses, validity_bits

#: columns as each builder makes them: numpy (zero-copy, masked, cast), Python values
BUILT = {
    "numpy_int64": lambda: arrowmm.array(np.arange(8)),
    "numpy_uint8_masked": lambda: arrowmm.array(np.arange(8, dtype=np.uint8), mask=np.arange(8) % 3 == 0),
    "numpy_float32": lambda: arrowmm.array(np.linspace(0, 1, 8, dtype=np.float32)),
    "numpy_float_nan_null": lambda: arrowmm.array(np.array([1.0, np.nan, 3.0]), from_pandas=True),
    "numpy_bool": lambda: arrowmm.array(np.arange(9) % 2 == 0),
    "numpy_int_cast_int8": lambda: arrowmm.array(np.arange(8), arrowmm.int8()),
    "python_ints": lambda: arrowmm.array([1, None, 3]),
    "python_uint16": lambda: arrowmm.array([1, None, 65535], arrowmm.uint16()),
    "python_floats": lambda: arrowmm.array([1.5, None, -2.0]),
    "python_bools": lambda: arrowmm.array([True, None, False]),
    "python_ascii_strings": lambda: arrowmm.array([f"s{j}" for j in range(8)]),
    "python_utf8_strings": lambda: arrowmm.array(["é", None, "日本", ""]),
    "python_bytes_as_string": lambda: arrowmm.array([b"ok", "é", None], arrowmm.string()),
    "python_large_string": lambda: arrowmm.array(["a", None, "bcd"], arrowmm.large_string()),
    "python_binary": lambda: arrowmm.array([b"\xff\x00", None, b""]),
    "numpy_unicode": lambda: arrowmm.array(np.array(["x", "yz"])),
}


def _stream(batch) -> bytes:
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, batch.schema) as w:
        w.write(batch)
    return sink.getvalue()


@pytest.mark.parametrize("kind", sorted(BUILT))
def test_a_built_column_is_valid_by_construction(kind):
    """Before: every new column was fully validated by the first writer (~10 us a column)."""
    col = BUILT[kind]()
    assert col._fully_valid
    marked = _stream(arrowmm.record_batch([col], names=["c"]))
    col._fully_valid = False  # the bytes the checked path writes
    checked = _stream(arrowmm.record_batch([col], names=["c"]))
    assert col._fully_valid  # (it passed the full check too)
    assert marked == checked
    back = pa.ipc.open_stream(marked).read_all()
    back.validate(full=True)
    assert back.column("c").to_pylist() == col.to_pylist()


@pytest.mark.parametrize("make", [
    lambda: arrowmm.array(np.array([86_400_000], dtype="datetime64[ms]"), arrowmm.date64()),
    lambda: arrowmm.array(np.array([1, 2], dtype="datetime64[s]")),
    lambda: arrowmm.array([1], arrowmm.time32("s")),
    lambda: arrowmm.array(["a", "b", "a"], arrowmm.dictionary(arrowmm.int8(), arrowmm.string())),
    lambda: arrowmm.array(pa.array([1, 2, 3])),
    lambda: make_array(arrowmm.int32(), 1, [None, arrowmm.array(np.arange(1, dtype=np.int32)).buffers()[1]]),
], ids=["date64", "timestamp", "time32", "dictionary", "c_interface", "make_array"])
def test_ranged_foreign_and_user_buffer_columns_are_not_marked(make):
    """Value ranges, indices and memory arrowmm did not fill are still checked when written."""
    assert not make()._fully_valid


def _short_int_values():
    """An int32 column of 3 slots over 8 bytes of values (make_array checks no sizes)."""
    return make_array(arrowmm.int32(), 3, [None, arrowmm.array(np.arange(2, dtype=np.int32)).buffers()[1]]), \
        "has 8 bytes, 12 needed"


def _int_null_count_contradicts_bitmap():
    """An int32 column of 3 slots whose bitmap marks none null, with a null count of 1."""
    bits = arrowmm.array(np.array([True] * 3)).buffers()[1]
    return make_array(arrowmm.int32(), 3, [bits, arrowmm.array(np.arange(3, dtype=np.int32)).buffers()[1]],
                      null_count=1), "null count 1 does not match"


def _bool_short_values():
    return make_array(arrowmm.bool_(), 9, [None, arrowmm.array(np.ones(8, dtype=bool)).buffers()[1]]), \
        "bool values has 1 bytes, 2 needed"


def _c_interface_null_count():
    """pyarrow's ``from_buffers`` through the C data interface: a bitmap marking no slot null
    under a null count of 1."""
    arr = pa.Array.from_buffers(pa.int32(), 3, [validity_bits(1, 1, 1), int32_buffer(1, 0, 3)],
                                null_count=1)
    pyarrow_refuses(arr, "null_count")
    return arrowmm.array(arr), "null count 1 does not match"


def _file_null_count():
    """The same damage read from a file."""
    arr = pa.Array.from_buffers(pa.int64(), 3, [validity_bits(1, 1, 1),
                                                pa.py_buffer(np.arange(3, dtype="<i8").tobytes())],
                                null_count=1)
    return column_read_back(arr)[0], "null count 1 does not match"


def _c_interface_utf8():
    arr = pa.Array.from_buffers(pa.string(), 2, [None, int32_buffer(0, 1, 3), pa.py_buffer(b"a\xff\xfe")])
    return arrowmm.array(arr), "UTF-8"


DAMAGED = {"short_int_values": _short_int_values,
           "int_null_count_contradicts_bitmap": _int_null_count_contradicts_bitmap,
           "bool_short_values": _bool_short_values,
           "c_interface_null_count": _c_interface_null_count,
           "file_null_count": _file_null_count,
           "c_interface_utf8": _c_interface_utf8}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_damaged_flat_columns_are_still_refused(damage):
    """The short path of the full check (ints, floats, bools) refuses what the generic walk
    refused, named as it named it."""
    col, why = DAMAGED[damage]()
    assert not col._fully_valid
    batch = arrowmm.record_batch([col], names=["c"])
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"record batch 0 was not written: .*column 0 \('c'\).*{why}"):
        with arrowmm.new_stream(io.BytesIO(), batch.schema) as w:
            w.write(batch)
    assert not col._fully_valid


def _fresh(i):
    return arrowmm.record_batch({"a": np.arange(8) + i, "b": np.arange(8.0), "c": [f"s{j}" for j in range(8)]})


def test_fresh_batches_built_alike_share_their_fields():
    """Before: each batch had new field objects, compared one by one with the writer's."""
    first, second = _fresh(0), _fresh(1)
    assert first.schema is not second.schema
    assert all(a is b for a, b in zip(first.schema.fields, second.schema.fields))
    other = arrowmm.record_batch({"a": np.arange(8, dtype=np.int32)})
    assert other.schema.field("a") is not first.schema.field("a")
    assert other.schema.field("a").type == arrowmm.int32()


def test_a_schema_matched_last_time_is_not_compared_again(monkeypatch):
    """Before: each fresh batch's fields were compared with the writer's (their types through
    ``Field.type``, the extension type looked up first)."""
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, _fresh(0).schema) as w:
        w.write(_fresh(1))
        batch = _fresh(2)
        looked = []
        original = Field.type

        def counted(field):
            looked.append(field.name)
            return original.fget(field)
        monkeypatch.setattr(Field, "type", property(counted))
        w.write(batch)
        w.write(batch.slice(2, 3))
        assert looked == []
        monkeypatch.undo()
        renamed = arrowmm.record_batch({"a": np.arange(8), "b": np.arange(8.0), "d": ["x"] * 8})
        with pytest.raises(arrowmm.ArrowInvalid, match="batch schema does not match"):
            w.write(renamed)
        retyped = arrowmm.record_batch({"a": np.arange(8.0), "b": np.arange(8.0), "c": ["x"] * 8})
        with pytest.raises(arrowmm.ArrowInvalid, match="batch schema does not match"):
            w.write(retyped)
        w.write(_fresh(3))
    back = pa.ipc.open_stream(sink.getvalue()).read_all()
    assert back.num_rows == 8 * 3 + 3
    assert back.column("a").to_pylist()[-8:] == list(range(3, 11))


def test_nested_fields_keep_their_childrens_names():
    """List types compare equal whatever their child's name: a shared field would give the
    second batch the first one's child name."""
    item = arrowmm.record_batch({"l": arrowmm.array([[1]], arrowmm.list_(arrowmm.int64()))})
    element = arrowmm.record_batch({"l": arrowmm.array(
        [[1]], arrowmm.list_(arrowmm.field("element", arrowmm.int64())))})
    assert element.schema.field("l").type.value_field.name == "element"
    assert item.schema.field("l").type.value_field.name == "item"
