"""take / filter check every offset of what they copy from (review 18: 1-3), not only the
taken rows' own two: in a file whose string or list offsets read ``0, 7, 5, ...`` (written
``0, 3, 5``), row 0's range looks sound, and a take of it, or a filter on another column
keeping it, gave ``'abcdefg'`` where ``'abc'`` was written, in a clean new array."""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm import compute as ac

WRITTEN = [0, 3, 5, 8, 10, 13, 15, 18, 20]
DAMAGED = [0, 7, 5, 8, 10, 13, 15, 18, 20]  # (offset[1] 3 -> 7: above offset[2])


def _damaged_file(tmp_path, column: pa.Array) -> str:
    path = str(tmp_path / "damaged.arrow")
    table = pa.table({"v": column, "i": pa.array(range(len(column)))})
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    data = bytearray(open(path, "rb").read())
    old, new = struct.pack("<9i", *WRITTEN), struct.pack("<9i", *DAMAGED)
    at = data.find(old)
    assert at > 0 and data.find(old, at + 1) < 0
    data[at:at + len(old)] = new
    open(path, "wb").write(data)
    return path


COLUMNS = {
    "string": pa.array(["abc", "de", "fgh", "ij"] * 4),
    "binary": pa.array([b"abc", b"de", b"fgh", b"ij"] * 4),
    "list": pa.array([[1, 2, 3], [4, 5], [6, 7, 8], [9, 10]] * 2, pa.list_(pa.int8())),
}


@pytest.mark.parametrize("kind", COLUMNS)
def test_a_copy_of_a_row_next_to_a_damaged_offset_raises(tmp_path, kind):
    path = _damaged_file(tmp_path, COLUMNS[kind])
    table = arrowmm.open_file(path).read_all()
    column = table.column("v").chunks[0]
    with pytest.raises(ArrowInvalid):
        column.to_pylist()  # (arrowmm's reads see the damage)
    one_row = np.zeros(len(column), dtype=bool)
    one_row[0] = True
    copies = {
        "compute.take": lambda: ac.take(column, [0]),
        "Array.take": lambda: column.take([0]),
        "Table.take": lambda: table.take([0]),
        "compute.filter (sparse)": lambda: ac.filter(column, one_row),
        "Table.filter on another column": lambda: table.filter(arrowmm.field("i") == 0),
        "dataset filter": lambda: arrowmm.dataset(path).to_table(filter=arrowmm.field("i") == 0),
    }
    for name, copy in copies.items():
        with pytest.raises(ArrowInvalid, match="offset"):
            got = copy()
            pytest.fail(f"{name} gave {got.to_pylist()}")


@pytest.mark.parametrize("kind", COLUMNS)
def test_the_same_copies_of_the_undamaged_file_are_pyarrows(tmp_path, kind):
    path = str(tmp_path / "sound.arrow")
    expected = pa.table({"v": COLUMNS[kind], "i": pa.array(range(len(COLUMNS[kind])))})
    with pa.ipc.new_file(path, expected.schema) as w:
        w.write_table(expected)
    table = arrowmm.open_file(path).read_all()
    column = table.column("v").chunks[0]
    assert column.take([0, 3]).to_pylist() == expected["v"].take([0, 3]).to_pylist()
    assert table.filter(arrowmm.field("i") == 0).to_pylist() == \
        expected.filter(pa.compute.field("i") == 0).to_pylist()
    assert column._offsets_sound  # (the verdict is kept: the next copy checks nothing again)
