"""A Python value longer than a view can say (2**31 - 1 bytes: its length and offset are
int32) built into a binary_view / string_view column is refused, naming its index, as pyarrow
refuses it (review 26: F1).  The length was written wrapped: the value read back negative
(past 2 GiB) or as its first bytes only (past 4 GiB), and ``validate(full=True)`` passed."""
import numpy as np
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.interop.from_python import binary_views


def test_a_value_of_more_than_2_gib_is_refused_by_index():
    big = bytes(2**31 + 5)  # (calloc'd zero pages: only the builder's own copy is filled)
    with pytest.raises(ArrowInvalid, match=r"binary_view at index 1: a value of 2,147,483,653 "
                                           r"bytes; a view holds at most 2,147,483,647"):
        arrowmm.array([b"short", big, b"x" * 25], type=arrowmm.binary_view())
    # (pyarrow refuses it too: ArrowCapacityError, "cannot reference strings larger than 2GB")


@pytest.mark.parametrize("size", [2**31, 2**32 + 5])
def test_the_builder_refuses_lengths_a_view_cannot_hold(size):
    # (lengths as _blobs gives them: past 4 GiB the length wrapped to 5, a 5-byte value)
    lengths = np.array([5, size, 25], dtype=np.int64)
    with pytest.raises(ArrowInvalid, match=f"string_view at index 1: a value of {size:,} bytes"):
        binary_views(lengths, b"", arrowmm.string_view(), None)

