"""A dictionary with a null entry converts to a Categorical of the dictionary's own type
(review 22: F6): the whole dictionary went through ``to_numpy``, where the null made int64
entries float64 (2**53 + 1 read as 2**53) before it was dropped.  The slots pointing at the
null entry get code -1, as null slots do.  (pyarrow refuses such a dictionary: "Categorical
categories cannot be null"; arrowmm converts it, as it does string dictionaries with nulls.)"""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm

BIG = 2**53 + 1


def _dictionary(indices, values):
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int8()),
                                          pa.array(values, pa.int64()))


def test_int64_categories_stay_int64_and_exact():
    got = arrowmm.array(_dictionary([0, 1, None, 2, 0], [BIG, None, -3])).to_pandas()
    assert got.cat.categories.dtype == np.int64
    assert got.cat.categories.tolist() == [BIG, -3]
    assert got.cat.codes.tolist() == [0, -1, -1, 1, 0]
    assert got.tolist()[0] == BIG


def test_chunks_with_null_entries_in_other_places_unify():
    chunks = [arrowmm.array(_dictionary([1, 0], [None, BIG])),
              arrowmm.array(_dictionary([2, 0, 1], [7, None, BIG]))]
    got = arrowmm.table({"c": arrowmm.chunked_array(chunks)}).to_pandas()["c"]
    assert got.cat.categories.dtype == np.int64
    assert got.cat.categories.tolist() == [BIG, 7]
    assert got.cat.codes.tolist() == [0, -1, 0, 1, -1]


def test_a_negative_index_is_refused_not_read_as_another_entry():
    # (the codes' table ends with the null slots' -1: index -2 read entry 1's code, silently)
    indices = pa.py_buffer(np.array([0, -2, 1], np.int8))
    damaged = pa.DictionaryArray.from_buffers(pa.dictionary(pa.int8(), pa.int64()), 3,
                                              [None, indices], pa.array([5, None, 7]))
    with pytest.raises(arrowmm.ArrowInvalid, match="dictionary index -2 out of range"):
        arrowmm.array(damaged).to_pandas()
