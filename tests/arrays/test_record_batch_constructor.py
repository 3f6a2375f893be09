"""``arrowmm.RecordBatch(schema, num_rows, columns)`` is public: columns that do not match the
schema are refused there, naming the field (they were taken, then read as other rows or
failed far from the cause)."""
import pytest

import arrowmm
from arrowmm import ArrowInvalid

SCHEMA = arrowmm.schema([("a", arrowmm.int64()), ("b", arrowmm.string())])


def _columns():
    return [arrowmm.array([1, 2, 3]), arrowmm.array(["x", "y", "z"])]


def test_matching_columns_make_the_batch():
    batch = arrowmm.RecordBatch(SCHEMA, 3, _columns())
    assert batch.to_pydict() == {"a": [1, 2, 3], "b": ["x", "y", "z"]}


def test_a_column_too_few_or_too_many_is_refused():
    with pytest.raises(ArrowInvalid, match="the schema has 2 fields, got 1 columns"):
        arrowmm.RecordBatch(SCHEMA, 3, _columns()[:1])
    with pytest.raises(ArrowInvalid, match="the schema has 2 fields, got 3 columns"):
        arrowmm.RecordBatch(SCHEMA, 3, _columns() + [arrowmm.array([4, 5, 6])])


@pytest.mark.parametrize("num_rows", [2, 4])
def test_a_column_of_another_length_is_refused(num_rows):
    # (2: the batch read two of three values; 4: a fourth row read past the column's end)
    with pytest.raises(ArrowInvalid, match=f"column 'a' has 3 rows, the batch {num_rows}"):
        arrowmm.RecordBatch(SCHEMA, num_rows, _columns())


def test_a_column_of_another_type_is_refused():
    cols = [arrowmm.array([1, 2, 3], arrowmm.int32()), arrowmm.array(["x", "y", "z"])]
    with pytest.raises(ArrowInvalid, match="field 'a' is int64 but its column is int32"):
        arrowmm.RecordBatch(SCHEMA, 3, cols)
    cols = [arrowmm.array([1, 2, 3]), arrowmm.array([b"x", b"y", b"z"])]
    with pytest.raises(ArrowInvalid, match="field 'b' is string but its column is binary"):
        arrowmm.RecordBatch(SCHEMA, 3, cols)


def test_what_is_no_array_and_a_negative_row_count_are_refused():
    with pytest.raises(ArrowInvalid, match="column 'a' is a list, not an arrowmm Array"):
        arrowmm.RecordBatch(SCHEMA, 3, [[1, 2, 3], arrowmm.array(["x", "y", "z"])])
    with pytest.raises(ArrowInvalid, match="num_rows must be >= 0, got -1"):
        arrowmm.RecordBatch(SCHEMA, -1, _columns())


def test_an_extension_column_must_be_of_its_fields_extension_type():
    uuids = arrowmm.array([b"\0" * 16], arrowmm.uuid())
    schema = arrowmm.schema([("u", arrowmm.uuid())])
    assert arrowmm.RecordBatch(schema, 1, [uuids]).column(0).type == arrowmm.uuid()
    other = arrowmm.schema([("u", arrowmm.fixed_size_binary(16))])
    assert arrowmm.RecordBatch(other, 1, [uuids.storage]).num_rows == 1  # (its storage: taken)
    with pytest.raises(ArrowInvalid, match="field 'u' is fixed_size_binary.16. but its column"):
        arrowmm.RecordBatch(other, 1, [uuids])
