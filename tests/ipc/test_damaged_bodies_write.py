"""The writers refuse a damaged column instead of copying it into a new file that says nothing
of it (review s44 #3: R6; 1,059 of 1,060 damaged columns were written, and pyarrow refused 950
of the new files).

Each damage is built with pyarrow's ``Array.from_buffers`` (its IPC writer does not validate),
read back through arrowmm, and pyarrow's ``validate(full=True)`` is shown to refuse it.
"""
from __future__ import annotations

import io

import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import column_read_back, int32_buffer, pyarrow_refuses, validity_bits


def _offsets_out_of_order():
    """['ab', 'c', 'de'] with offsets 0, 2, 1, 5."""
    return pa.Array.from_buffers(pa.string(), 3, [None, int32_buffer(0, 2, 1, 5), pa.py_buffer(b"abcde")]), \
        "non-monotonic offset"


def _null_count_contradicts_bitmap():
    """[1, None, 3] whose bitmap marks no slot null, with a null count of 1."""
    return pa.Array.from_buffers(pa.int32(), 3, [validity_bits(1, 1, 1), int32_buffer(1, 0, 3)],
                                 null_count=1), "null_count"


def _invalid_utf8():
    return pa.Array.from_buffers(pa.string(), 2, [None, int32_buffer(0, 1, 3), pa.py_buffer(b"a\xff\xfe")]), \
        "Invalid UTF8"


def _date64_not_whole_days():
    return pa.Array.from_buffers(pa.date64(), 2, [None, pa.py_buffer((86_400_000).to_bytes(8, "little")
                                                                     + (5).to_bytes(8, "little"))]), \
        "date64"


DAMAGE = {"offsets_out_of_order": _offsets_out_of_order,
          "null_count_contradicts_bitmap": _null_count_contradicts_bitmap,
          "invalid_utf8": _invalid_utf8,
          "date64_not_whole_days": _date64_not_whole_days}


@pytest.mark.parametrize("how", ["new_file", "new_stream", "write_table", "append"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_column_is_not_written(tmp_path, damage, how):
    """Before: each was written without a word, its damage copied byte for byte."""
    arr, why = DAMAGE[damage]()
    col, pa_col = column_read_back(arr)
    pyarrow_refuses(pa_col, why)
    batch = arrowmm.record_batch([col], names=["c"])
    path = tmp_path / "out.arrow"
    if how == "append":
        arrowmm.write_file(path, arrowmm.record_batch([col.slice(0, 0)], names=["c"]))
        before = path.read_bytes()
    with pytest.raises(arrowmm.ArrowInvalid, match=r"record batch \d+ was not written: .*column 0 \('c'\)"):
        if how == "new_file":
            with arrowmm.new_file(path, batch.schema) as w:
                w.write_batch(batch)
        elif how == "new_stream":
            with arrowmm.new_stream(io.BytesIO(), batch.schema) as w:
                w.write_batch(batch)
        elif how == "write_table":
            arrowmm.write_file(path, arrowmm.table(batch))
        else:
            with arrowmm.append_file(path) as w:
                w.write_batch(batch)
    if how == "append":  # the file keeps what it held
        assert path.read_bytes() == before
    elif how != "new_stream":  # nothing under the final name
        assert not path.exists()


def test_a_failed_batch_leaves_the_writer_usable(tmp_path):
    """The check runs before any byte of the batch is written: the writer takes the next batch
    and the file holds the good batches only."""
    bad, _ = _offsets_out_of_order()
    col, _ = column_read_back(bad)
    good = arrowmm.record_batch([arrowmm.array(["x", "y", "z"])], names=["c"])
    path = tmp_path / "out.arrow"
    with arrowmm.new_file(path, good.schema) as w:
        w.write_batch(good)
        with pytest.raises(arrowmm.ArrowInvalid, match="record batch 1 was not written"):
            w.write_batch(arrowmm.record_batch([col], names=["c"]))
        w.write_batch(good)
    t = pa.ipc.open_file(str(path)).read_all()
    t.validate(full=True)
    assert t.column("c").to_pylist() == ["x", "y", "z"] * 2


def test_a_damaged_dictionary_is_not_written(tmp_path):
    """An index past its dictionary: before, the file was written and every reader that does
    not validate read some other value there."""
    indices = pa.Array.from_buffers(pa.int8(), 2, [None, pa.py_buffer(bytes([2, 0]))])
    bad = pa.DictionaryArray.from_arrays(indices, pa.array(["a", "b"]), safe=False)
    col, pa_col = column_read_back(bad)
    pyarrow_refuses(pa_col, "out of bounds")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"column 0 \('c'\).*(index|indices)"):
        arrowmm.write_file(tmp_path / "d.arrow", arrowmm.record_batch([col], names=["c"]))


def test_a_valid_column_read_from_a_file_is_checked_once(tmp_path):
    """The verdict stays with the array: writing one column twice checks it once."""
    col, _ = column_read_back(pa.array(["a", None, "ccc"] * 10))
    assert not col._fully_valid
    with arrowmm.new_file(tmp_path / "o.arrow", arrowmm.schema([("c", arrowmm.string())])) as w:
        w.write_batch(arrowmm.record_batch([col], names=["c"]))
        assert col._fully_valid
        assert col.slice(3, 4)._fully_valid
        w.write_batch(arrowmm.record_batch([col.slice(3, 4)], names=["c"]))
    assert pa.ipc.open_file(str(tmp_path / "o.arrow")).read_all().num_rows == 34


def test_bytes_under_a_null_string_are_not_damage(tmp_path):
    """Invalid UTF-8 under a null slot is no value (pyarrow's full validation accepts it):
    the column is written, cast and sorted, where the full check refused it before."""
    arr = pa.Array.from_buffers(pa.string(), 3, [validity_bits(1, 0, 1), int32_buffer(0, 1, 3, 4),
                                                 pa.py_buffer(b"a\xff\xfeb")], null_count=1)
    arr.validate(full=True)
    col, _ = column_read_back(arr)
    col.validate(full=True)
    arrowmm.write_file(tmp_path / "n.arrow", arrowmm.record_batch([col], names=["c"]))
    assert pa.ipc.open_file(str(tmp_path / "n.arrow")).read_all().column("c").to_pylist() == ["a", None, "b"]
    assert col.cast(arrowmm.large_string()).to_pylist() == ["a", None, "b"]
    assert arrowmm.compute.sort_indices(col).to_pylist() == [0, 2, 1]
