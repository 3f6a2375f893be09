"""Integers cast to ``time32`` / ``time64`` / ``date64`` are checked against the type's domain
(review 15: 3): the buffer was relabelled as it was, safe or not, into an array that
``validate(full=True)`` calls damage (a time past the day, a date64 that is not whole days).
pyarrow relabels without checking; arrowmm raises rather than return damage."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm


@pytest.mark.parametrize("source_type,target,good,bad", [
    (pa.int32(), pa.time32("s"), 86_399, 100_000),
    (pa.int32(), pa.time32("ms"), 0, -1),
    (pa.int64(), pa.time64("us"), 86_399_999_999, 86_400_000_000),
    (pa.int64(), pa.time64("ns"), 86_399_999_999_999, -5),
    (pa.int64(), pa.date64(), -86_400_000, 1),
], ids=str)
@pytest.mark.parametrize("safe", [True, False])
def test_integer_outside_the_target_domain_raises_naming_its_slot(source_type, target, good,
                                                                  bad, safe):
    # rows [good, bad, null, bad] at offset 1: the sliced-off row and the null hold ``bad``
    # too, and are not judged
    stored = np.array([bad, good, bad, bad, bad], dtype=source_type.to_pandas_dtype())
    validity = pa.py_buffer(np.packbits([1, 1, 1, 0, 1], bitorder="little").tobytes())
    values = pa.Array.from_buffers(source_type, 4, [validity, pa.py_buffer(stored.tobytes())],
                                   offset=1)
    source = arrowmm.array(values)
    target_mm = arrowmm.array(pa.nulls(0, target)).type
    with pytest.raises(arrowmm.ArrowInvalid, match=f"slot 1 holds {bad}"):
        source.cast(target_mm, safe=safe)
    ok = source.slice(2, 1).cast(target_mm, safe=safe)  # (the null row)
    ok.validate(full=True)
    assert pa.array(ok).to_pylist() == [None]
    ok = source.slice(0, 1).cast(target_mm, safe=safe)
    ok.validate(full=True)
    assert pa.array(ok).view(source_type).to_pylist() == [good]
