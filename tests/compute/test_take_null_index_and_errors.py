"""``take`` answers and fails as pyarrow's (review 22): a null index into an empty array is a
null row (F3: it raised IndexError); an index out of bounds raises ``ArrowIndexError``, an
``ArrowError`` that is also an ``IndexError`` (F4: a bare IndexError, which ``except
arrowmm.ArrowError`` missed); a null index into a run-end encoded array is unsupported, not
invalid (F5: ArrowInvalid; pyarrow has no take kernel for it)."""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm

TYPES = [pa.int64(), pa.string(), pa.large_binary(), pa.list_view(pa.int32()),
         pa.decimal128(5, 2), pa.dictionary(pa.int8(), pa.string()),
         pa.struct([("a", pa.int8())]), pa.uuid()]


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_null_indices_into_an_empty_array_are_null_rows(dtype):
    empty = pa.array([], dtype)
    indices = pa.array([None, None], pa.int64())
    want = empty.take(indices)
    got = arrowmm.array(empty).take(arrowmm.array(indices))
    assert got.type == arrowmm.array(want).type
    assert got.to_pylist() == want.to_pylist() == [None, None]
    got.validate(full=True)
    assert pa.array(got).equals(want)


def test_null_indices_into_an_empty_batch_are_null_rows():
    empty = pa.record_batch({"i": pa.array([], pa.int64()), "s": pa.array([], pa.string())})
    got = arrowmm.record_batch(empty).take([None])
    assert got.to_pylist() == empty.take(pa.array([None], pa.int64())).to_pylist()
    assert got.num_rows == 1


@pytest.mark.parametrize("indices", [[5], np.array([2**64 - 1], np.uint64), [-1]],
                         ids=["past_the_end", "past_int64", "negative"])
def test_an_index_out_of_bounds_is_an_arrow_index_error(indices):
    values = arrowmm.array(pa.array(["a", "b"], pa.string_view()))
    with pytest.raises(arrowmm.ArrowIndexError, match="out of bounds for length 2") as info:
        values.take(indices)
    assert isinstance(info.value, arrowmm.ArrowError)
    assert isinstance(info.value, IndexError)  # (code catching IndexError keeps working)
    assert issubclass(arrowmm.ArrowIndexError, arrowmm.errors.ArrowError)


def test_a_null_index_into_run_end_encoded_values_is_not_implemented():
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array(["x", "y"]))
    with pytest.raises(pa.ArrowNotImplementedError):
        ree.take(pa.array([0, None]))
    with pytest.raises(arrowmm.ArrowNotImplementedError, match="null indices into a run_end"):
        arrowmm.array(ree).take(arrowmm.array([0, None], arrowmm.int64()))
