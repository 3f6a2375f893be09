"""``arrays.empty.empty_array``: a zero-row array of any type, from the type alone (what a
frame or table of zero batches is made of)."""
from __future__ import annotations

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays.empty import empty_array
from arrowmm.arrays.extension import bool8, json_, uuid
from arrowmm.interop.build import array as build_array
from arrowmm.interop._cdata import import_field
from tests.interop.test_cdata import COLUMNS  # every type, with nulls

TYPES = {name: import_field(pa.field(name, a.type).__arrow_c_schema__()).type
         for name, a in COLUMNS.items()}
TYPES.update({"uuid": uuid(), "json": json_(), "bool8": bool8()})


@pytest.mark.parametrize("name", list(TYPES))
def test_empty_array_is_what_the_builder_makes(name):
    dtype = TYPES[name]
    empty = empty_array(dtype)
    built = build_array([], dtype)
    assert type(empty) is type(built)
    assert empty.type == dtype and len(empty) == 0 and empty.null_count == 0
    assert empty.equals(built)
    empty.validate(True)
    assert empty.to_pylist() == []


@pytest.mark.parametrize("name", list(COLUMNS))
def test_pyarrow_reads_an_empty_array_of_every_type(name):
    got = pa.array(empty_array(TYPES[name]))
    assert got.type == COLUMNS[name].type
    assert len(got) == 0
    got.validate(full=True)


def test_a_frame_of_no_batches_keeps_its_column_types():
    pd = pytest.importorskip("pandas", reason="pandas is optional")
    schema = arrowmm.schema([arrowmm.field("s", arrowmm.string()),
                             arrowmm.field("l", arrowmm.list_(arrowmm.int32())),
                             arrowmm.field("d", arrowmm.dictionary(arrowmm.int8(),
                                                                   arrowmm.string()))])
    frame = arrowmm.Table(schema, []).to_pandas()
    expected = pa.table({f.name: pa.array([], f.type) for f in pa.schema(schema)}).to_pandas()
    assert list(frame.columns) == ["s", "l", "d"]
    assert len(frame) == 0
    pd.testing.assert_frame_equal(frame, expected)
