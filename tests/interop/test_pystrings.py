"""``arrowmm.array`` / ``record_batch`` of the common inputs built directly (issue 34): a list
of str built in C (``interop._pystrings``), a plain numpy array wrapped, a dict of columns
made a batch without re-checking what its fields were made from.  Each against the general
path it short-cuts (the reference: tests/interop/test_build.py checks it against pyarrow):
the same type, buffer bytes, null count and validity verdict; and every input the short cut
does not take still reaches the general path, with its errors."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import types as t
from arrowmm.errors import ArrowInvalid
from arrowmm.interop import build, from_python
from arrowmm.interop._pystrings import pack_strings

STRING_LISTS = [
    ["a", "bb", "", "ccc"],
    ["s0", None, "s2", None, None, "x" * 40, "", "é", "日本語", "emoji 🐍"],
    [None, "only the first is null"],
    ["a"] * 17 + [None] * 9,
    ["é", "\x00", "tab\tand\nnewline"],
]
BYTES_LISTS = [[b"a", b"\x00\xff", None, b""], [b"x", "str into binary", None, b"y" * 30]]


def _python_path(values, dtype, monkeypatch):
    """``values`` as ``dtype`` through ``from_python``'s Python code (the C builder off)."""
    with monkeypatch.context() as m:
        m.setattr(from_python, "pack_strings", lambda *args: None)
        return from_python.convert(list(values), dtype)


def _same_array(fast, slow):
    assert fast.type == slow.type and len(fast) == len(slow)
    assert fast.null_count == slow.null_count
    assert fast._fully_valid and slow._fully_valid
    for a, b in zip(fast.buffers(), slow.buffers()):
        assert (a is None) == (b is None)
        if a is not None:
            assert bytes(a) == bytes(b)
    fast.validate(full=True)


@pytest.mark.parametrize("values", STRING_LISTS)
@pytest.mark.parametrize("dtype", [t.string(), t.large_string(), t.binary(), t.large_binary()])
def test_strings_built_in_c_are_the_python_paths(values, dtype, monkeypatch):
    fast = from_python.string_array(values, dtype)
    assert fast is not None
    _same_array(fast, _python_path(values, dtype, monkeypatch))
    assert fast.to_pylist() == [v if v is None or dtype.utf8 else v.encode() for v in values]


@pytest.mark.parametrize("values", BYTES_LISTS)
@pytest.mark.parametrize("dtype", [t.binary(), t.large_binary()])
def test_bytes_built_in_c_are_the_python_paths(values, dtype, monkeypatch):
    fast = from_python.string_array(values, dtype)
    assert fast is not None
    _same_array(fast, _python_path(values, dtype, monkeypatch))


@pytest.mark.parametrize("values", STRING_LISTS)
def test_a_list_of_str_is_not_converted_in_python(values, monkeypatch):
    monkeypatch.setattr(from_python, "_blobs", None)  # (the Python path would call it)
    made = arrowmm.array(values)
    assert made.type == t.string()
    assert made.to_pylist() == values
    assert pa.array(values).equals(pa.array(made))


@pytest.mark.parametrize("values", [
    ["a", 1],  # (string inferred, 1 refused: pyarrow's rule)
    ["a", "\ud800"],  # (not encodable as UTF-8)
    ["a", b"b"],  # (str and bytes: binary)
    ["a", bytearray(b"b")],
    ["a", np.str_("b")],  # (a str subclass)
    ["a", float("nan")],
    [None, None],
    [],
])
def test_what_c_does_not_take_goes_the_general_way(values, monkeypatch):
    assert build._plain(list(values)) is None
    with monkeypatch.context() as m:  # the general path alone, as before the short cut
        m.setattr(build, "_plain", lambda obj: None)
        try:
            expected = arrowmm.array(values)
        except ArrowInvalid as exc:
            expected = exc
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)) as got:
            arrowmm.array(values)
        assert str(got.value) == str(expected)
    else:
        made = arrowmm.array(values)
        assert made.type == expected.type and made.to_pylist() == expected.to_pylist()


def test_32_bit_offsets_that_would_overflow_go_to_the_python_check(monkeypatch):
    """pack_strings gives up past INT32_MAX bytes for 32-bit offsets: sized, not built."""
    big = "x" * (1 << 20)
    values = [big] * 2049  # (just over 2 GiB, the same str object: little memory)
    assert pack_strings(values, False, False) is None
    monkeypatch.setattr(from_python, "_blobs", lambda *a: (None, np.array([2**31]), b""))
    with pytest.raises(ArrowInvalid, match="overflow 32-bit offsets"):
        from_python.convert(values, t.string())


def test_the_list_may_change_while_it_is_built():
    """pack_strings reads a copy: a caller's list mutated later changes nothing built."""
    values = ["a", "bb"]
    made = from_python.string_array(values, t.string())
    values[0] = "zzz"
    assert made.to_pylist() == ["a", "bb"]


@pytest.mark.parametrize("arr", [np.arange(5, dtype=np.int64), np.arange(5, dtype=np.uint8),
                                 np.linspace(0, 1, 7, dtype=np.float32),
                                 np.arange(4, dtype=np.float16), np.arange(0, dtype=np.int32)])
def test_a_plain_numpy_array_is_wrapped_as_the_general_path_wraps_it(arr, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(build, "_plain", lambda obj: None)
        slow = arrowmm.array(arr)
    monkeypatch.setattr(build, "_from_numpy", None)  # (the general path would call it)
    fast = arrowmm.array(arr)
    _same_array(fast, slow)
    assert fast._buffers[1].address == arr.ctypes.data or len(arr) == 0  # (no copy)


@pytest.mark.parametrize("arr", [np.arange(10)[::2], np.arange(3, dtype=">i4"),
                                 np.array([True, False]), np.array(["a", "b"]),
                                 np.arange(3).astype("datetime64[s]"), np.zeros((2, 2)),
                                 np.ma.masked_array([1, 2], mask=[True, False])])
def test_other_numpy_arrays_go_the_general_way(arr):
    assert build._plain(arr) is None
    if arr.ndim != 1:
        with pytest.raises(ArrowInvalid, match=r"only 1-D numpy arrays .* shape \(2, 2\)"):
            arrowmm.array(arr)
        return
    expected = arr.tolist() if arr.dtype.kind != "M" else pa.array(arr).to_pylist()
    assert arrowmm.array(arr).to_pylist() == [None if m else v for v, m in
                                              zip(expected, np.ma.getmaskarray(arr))]


def test_a_dict_batch_is_checked_where_it_can_be_wrong(monkeypatch):
    """Fields made from the arrays' own types agree with them: only ragged columns (and an
    extension array, whose field's type comes from the registry) take ``_checked``."""
    checked = []
    real = build._checked
    monkeypatch.setattr(build, "_checked", lambda *a: checked.append(a) or real(*a))
    batch = arrowmm.record_batch({"i": np.arange(3), "s": ["a", None, "c"], 7: [1.5, 2.5, None]},
                                 metadata={"k": "v"})
    assert checked == []
    assert batch.schema.names == ["i", "s", "7"] and batch.schema.metadata == {"k": "v"}
    assert [f.nullable for f in batch.schema] == [True, True, True]
    assert batch.column(1).to_pylist() == ["a", None, "c"]
    again = arrowmm.record_batch({"i": np.arange(3), "s": ["x", "y", "z"], 7: [0.0, 1.0, 2.0]})
    assert all(a is b for a, b in zip(batch.schema.fields, again.schema.fields))
    with pytest.raises(ArrowInvalid, match=r"columns have different lengths \('a': 2, 'b': 3\)"):
        arrowmm.record_batch({"a": [1, 2], "b": ["x", "y", "z"]})
    uuids = arrowmm.array([b"0123456789abcdef"], arrowmm.uuid())
    batch = arrowmm.record_batch({"u": uuids, "n": [1]})
    assert batch.schema.field("u").type == arrowmm.uuid()
    assert batch.column(0).to_pylist() == uuids.to_pylist()
    assert len(checked) == 2


class _OwnEncode(str):
    """A str whose ``encode`` (a Python method anyone may override) gives bytes that are not
    UTF-8; pyarrow takes a str's text through the C API and ignores it."""

    def encode(self, *args, **kwargs):
        return b"\xff\xfe"


def test_a_str_subclass_overriding_encode_is_built_from_its_text():
    # the column is valid by construction (the writer skips its UTF-8 check): its bytes must be
    # the text's, as pyarrow builds them, not what the subclass's encode returns
    import io
    import pyarrow as pa
    values = [_OwnEncode("ab"), "c", None]
    batch = arrowmm.record_batch({"s": values})
    assert batch.column("s").to_pylist() == ["ab", "c", None]
    sink = io.BytesIO()
    with arrowmm.new_file(sink, batch.schema) as writer:
        writer.write(batch)
    table = pa.ipc.open_file(pa.py_buffer(sink.getvalue())).read_all()
    table.validate(full=True)
    assert table.column("s").to_pylist() == pa.array(values).to_pylist()
