"""The full check of a compressed column where it is decoded (``_batch_walk.prove_decoded``).

The loader proves a column it decompressed valid right away, on the decoding thread, and
keeps the verdict on the Array, so its exports check nothing again (issue 34, bench_paths rows
2, 2b, 2c).  A proof that fails proves nothing: the export then runs the full validation,
which names the fault.  So:

* a decoded compressed column leaves through ``__arrow_c_array__`` without the Python check;
* a damaged column still fails its export, after another column of the same batch left, in
  one thread or several at once (a verdict kept on one column is never another's);
* what the fast proof cannot prove but is valid (bad bytes under a null slot) still exports;
* ``prove_decoded`` refuses each kind of damage it checks, and marks nothing then.
"""
from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm._core._region import as_view
from arrowmm.arrays.array import make_array
from arrowmm.arrays.nested import ListArray
from arrowmm.arrays.primitive import BinaryArray
from arrowmm.ipc.read._batch_walk import prove_decoded

N = 20_000  # rows: enough for the codec to compress every buffer


def _strings(damage=None, n=N):
    """``n`` values "abcd" as a pyarrow string array, built unchecked from its buffers; value
    7000 damaged: "utf8" its first byte 0xff, "offsets" offset[7001] below offset[7000]."""
    data = bytearray(b"abcd" * n)
    offsets = np.arange(n + 1, dtype=np.int32) * 4
    if damage == "utf8":
        data[4 * 7000] = 0xFF
    elif damage == "offsets":
        offsets[7001] = 3
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                  pa.py_buffer(bytes(data))])


def _file(tmp_path, columns, codec="lz4"):
    batch = pa.record_batch(columns)
    path = str(tmp_path / f"data.{codec}.arrow")
    with pa.ipc.new_file(path, batch.schema,
                         options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_batch(batch)
    return path


def _lists():
    offsets = pa.array(np.arange(N + 1, dtype=np.int32) * 2)
    return pa.ListArray.from_arrays(offsets, pa.array(np.arange(2 * N, dtype=np.int32)))


def test_decoded_column_exports_without_the_python_check(tmp_path, monkeypatch):
    # the export checked each compressed string and list column again in Python, on the
    # caller's thread (the offsets twice): 2c went from 0.80 to 0.95 of pyarrow's time
    path = _file(tmp_path, {"s": _strings(), "l": _lists(), "i": pa.array(np.arange(N))})
    calls = []
    for cls in (BinaryArray, ListArray):
        monkeypatch.setattr(cls, "_check_full", lambda self, where: calls.append(where))
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        assert batch.compression == "lz4"
        got = [pa.array(batch.column(k)) for k in range(3)]
    assert calls == []
    want = pa.ipc.open_file(path).get_batch(0)
    assert all(g.equals(want.column(k)) for k, g in enumerate(got))


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("damage, words", [("utf8", r"value\[7000\].*not valid UTF-8"),
                                           ("offsets", r"offset\[7001\]=3 < offset\[7000\]")])
def test_damaged_column_fails_after_another_column_of_its_batch(tmp_path, codec, damage, words):
    path = _file(tmp_path, {"good": _strings(), "bad": _strings(damage)}, codec)
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        assert pa.array(batch.column(0)).equals(_strings())
        for _ in range(2):  # (a failed check is no verdict: the next export fails again)
            with pytest.raises(arrowmm.ArrowInvalid, match=words):
                pa.array(batch.column(1))
        with pytest.raises(arrowmm.ArrowInvalid, match=r"column 1 \('bad'\).*" + words):
            pa.record_batch(batch)
        with pytest.raises(arrowmm.ArrowInvalid, match=words):
            batch.column(1).validate(full=True)
    with pytest.raises(pa.ArrowInvalid, match=r"batch 0, column 1 \('bad'\).*" + words):
        pa.table(arrowmm.open_file(path))


def test_damaged_column_fails_while_threads_export_its_batch(tmp_path):
    path = _file(tmp_path, {"good": _strings(), "bad": _strings("utf8"),
                            "also good": _strings()})
    for _ in range(5):
        with arrowmm.open_file(path) as r:
            batch = r.get_batch(0)
            outcomes = {}
            start = threading.Barrier(6)

            def export(k, slot):
                start.wait()
                try:
                    pa.array(batch.column(k))
                    outcomes[slot] = (k, "ok")
                except arrowmm.ArrowInvalid as exc:
                    outcomes[slot] = (k, "not valid UTF-8" in str(exc))

            threads = [threading.Thread(target=export, args=(k % 3, k)) for k in range(6)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        assert sorted(outcomes.values()) == [(0, "ok"), (0, "ok"), (1, True), (1, True),
                                             (2, "ok"), (2, "ok")]


def test_bad_bytes_under_a_null_slot_still_export(tmp_path):
    # the fast proof reads every byte from the first offset to the last; a null slot's bytes
    # are no value (pyarrow does not check them): the export's full check passes them
    bad = _strings("utf8")
    valid = np.ones(N, dtype=bool)
    valid[7000] = False
    masked = pa.Array.from_buffers(pa.string(), N, [pa.array(valid).buffers()[1]] +
                                   bad.buffers()[1:], null_count=1)
    path = _file(tmp_path, {"s": masked})
    with arrowmm.open_file(path) as r:
        column = r.get_batch(0).column(0)
        assert not column._fully_valid  # (not proved at decode)
        got = pa.array(column)
    assert got.null_count == 1 and got[7000].as_py() is None and got[6999].as_py() == "abcd"


def _offsets(values):
    return as_view(np.array(values, dtype=np.int32).tobytes())


def _bits(valid):
    return as_view(np.packbits(np.array(valid, dtype=bool), bitorder="little").tobytes())


@pytest.mark.parametrize("values", [["a" * 100, "é", "b" * 70 + "ü€𝄞"], ["é" * 40, ""] * 3,
                                    ["x" * 64, "ab"], []])
def test_prove_decoded_proves_valid_strings(values):
    # multi-byte characters after 64-byte blocks of ASCII (the validator starts at the block
    # that holds one), or from the first byte; a run of whole ASCII blocks; no value at all
    want = pa.array(values, pa.string())
    array = make_array(arrowmm.string(), len(values), [None] + [as_view(b) for b in
                                                                  want.buffers()[1:]])
    assert prove_decoded(array) and array._fully_valid


def test_prove_decoded_marks_a_valid_column_and_its_children():
    child = make_array(arrowmm.int32(), 4, [None, as_view(np.arange(4, dtype=np.int32))])
    lists = make_array(arrowmm.list_(arrowmm.int32()), 3,
                       [_bits([1, 0, 1]), _offsets([0, 2, 2, 4])], [child], null_count=1)
    assert prove_decoded(lists)
    assert lists._fully_valid and child._fully_valid
    dtype = arrowmm.map_(arrowmm.int32(), arrowmm.string())
    keys = make_array(arrowmm.int32(), 2, [None, as_view(np.arange(2, dtype=np.int32))])
    items = make_array(arrowmm.string(), 2, [_bits([0, 1]), _offsets([0, 0, 2]),
                                             as_view("é".encode())], null_count=1)
    entries = make_array(dtype.children[0].type, 2, [None], [keys, items])
    maps = make_array(dtype, 1, [None, _offsets([0, 2])], [entries])
    assert prove_decoded(maps)
    assert all(a._fully_valid for a in (maps, entries, keys, items))


@pytest.mark.parametrize("damage", ["decreasing offsets", "offsets past the data", "utf8",
                                    "utf8 after ASCII blocks", "value inside a character",
                                    "value inside a character after ASCII blocks",
                                    "decreasing offsets between characters", "null count",
                                    "decreasing list offsets", "null count of a list's child",
                                    "null map key"])
def test_prove_decoded_refuses_damage_and_marks_nothing(damage):
    s = arrowmm.string()
    data = as_view(b"abcdefgh")
    if damage == "decreasing offsets":
        array = make_array(s, 3, [None, _offsets([0, 5, 3, 8]), data])
    elif damage == "offsets past the data":
        array = make_array(s, 2, [None, _offsets([0, 4, 8]), as_view(b"abcdefg")])
    elif damage == "utf8":
        array = make_array(s, 2, [None, _offsets([0, 4, 8]), as_view(b"abc\xffefgh")])
    elif damage == "utf8 after ASCII blocks":  # (a truncated "é" at byte 130)
        array = make_array(s, 2, [None, _offsets([0, 100, 131]), as_view(b"a" * 130 + b"\xc3")])
    elif damage == "value inside a character":
        array = make_array(s, 2, [None, _offsets([0, 1, 3]), as_view("éa".encode())])
    elif damage == "value inside a character after ASCII blocks":
        array = make_array(s, 2, [None, _offsets([0, 129, 131]),
                                  as_view(b"a" * 128 + "éa".encode())])
    elif damage == "decreasing offsets between characters":  # (each on a character's start)
        array = make_array(s, 3, [None, _offsets([0, 4, 2, 6]), as_view("ééé".encode())])
    elif damage == "null count":
        array = make_array(s, 2, [_bits([1, 0]), _offsets([0, 4, 8]), data], null_count=0)
    elif damage == "null map key":
        dtype = arrowmm.map_(arrowmm.int32(), arrowmm.int32())
        keys = make_array(arrowmm.int32(), 2, [_bits([1, 0]), as_view(np.arange(2, dtype=np.int32))],
                          null_count=1)
        items = make_array(arrowmm.int32(), 2, [None, as_view(np.arange(2, dtype=np.int32))])
        entries = make_array(dtype.children[0].type, 2, [None], [keys, items])
        array = make_array(dtype, 1, [None, _offsets([0, 2])], [entries])
    else:
        child = make_array(arrowmm.int32(), 4,
                           [_bits([1, 1, 0, 1]) if damage.startswith("null") else None,
                            as_view(np.arange(4, dtype=np.int32))], null_count=0)
        offsets = [0, 3, 2, 4] if damage.startswith("decreasing") else [0, 2, 2, 4]
        array = make_array(arrowmm.list_(arrowmm.int32()), 3, [None, _offsets(offsets)], [child])
    assert not prove_decoded(array)
    assert not array._fully_valid and not any(c._fully_valid for c in array.children)
