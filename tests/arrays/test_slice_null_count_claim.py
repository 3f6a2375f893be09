"""A slice of a column whose recorded null count disagrees with its bitmap is refused by every
exit, as its own ``to_pylist`` refuses it (review 16: F2).

A slice counts its own nulls and leaves the recorded count of the column it was cut from to be
checked later; only reads checked it, so the export check and the writers handed the slice out
with a null that the file's count did not admit (``[8998, 8999, None, 9001]`` from a column
pyarrow's full validation refuses).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import ipc_bytes

N = 1000
NULLS = [5, 100, 900]


def _with_nulls(typ: pa.DataType, null_count: int) -> pa.Array:
    """N values of ``typ``, the bitmap marking NULLS null, the recorded count ``null_count``."""
    valid = np.ones(N, bool)
    valid[NULLS] = False
    values = pa.array(np.arange(N)).cast(typ) if typ != pa.string() else \
        pa.array([str(i) for i in range(N)])
    bits = pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())
    return pa.Array.from_buffers(typ, N, [bits] + values.buffers()[1:], null_count=null_count)


def _file(typ, codec):
    """One batch: 'bad' records 2 nulls for its bitmap's 3, 'ok' the same values recorded right."""
    batch = pa.record_batch([_with_nulls(typ, 2), _with_nulls(typ, 3)], names=["bad", "ok"])
    with pytest.raises(pa.ArrowInvalid, match="null_count value"):
        batch.column(0).validate(full=True)
    return ipc_bytes(batch, compression=codec)


def _exits(data, tmp_path):
    def batch(name):
        return arrowmm.open_file(data).get_batch(0).select([name])

    def write(name):
        with arrowmm.new_file(str(tmp_path / f"{name}.arrow"), batch(name).schema) as w:
            w.write_batch(batch(name).slice(890, 20))
        return pa.ipc.open_file(str(tmp_path / f"{name}.arrow")).read_all().column(0)

    return {
        "column export": lambda name: pa.array(batch(name).column(0).slice(890, 20)),
        "batch export": lambda name: pa.record_batch(batch(name).slice(890, 20)).column(0),
        "table export": lambda name: pa.table(
            arrowmm.open_file(data).read_all().select([name]).slice(890, 20)).column(0),
        "write": write,
    }


@pytest.mark.parametrize("codec", [None, "zstd"])
@pytest.mark.parametrize("typ", [pa.int64(), pa.string(), pa.timestamp("us")],
                         ids=["int64", "string", "timestamp"])
@pytest.mark.parametrize("exit_", ["column export", "batch export", "table export", "write"])
def test_slice_of_column_with_wrong_null_count_is_refused_at_every_exit(tmp_path, codec, typ,
                                                                        exit_):
    data = _file(typ, codec)
    exits = _exits(data, tmp_path)
    out = exits[exit_]("ok")  # the slice of the column recorded right leaves, its null in place
    assert out.to_pylist()[10] is None and out.null_count == 1
    with pytest.raises(arrowmm.ArrowInvalid, match="null count 2 does not match"):
        arrowmm.open_file(data).get_batch(0).column("bad").slice(890, 20).to_pylist()
    # (through the C stream, the table's error reaches pyarrow as its own ArrowInvalid)
    raised = pa.ArrowInvalid if exit_ == "table export" else arrowmm.ArrowInvalid
    with pytest.raises(raised, match="null count 2 does not match"):
        exits[exit_]("bad")


def test_slice_of_slice_checks_the_first_count():
    """The claim passes down a chain of slices to the column whose count the file recorded."""
    col = arrowmm.open_file(_file(pa.int64(), None)).get_batch(0).column("bad")
    with pytest.raises(arrowmm.ArrowInvalid, match="null count 2 does not match"):
        pa.array(col.slice(800, 200).slice(90, 20))
