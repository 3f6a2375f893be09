"""Decimal text whose exponent is read as pyarrow reads it, an int32 (review 15: 4, 6): by its
value, however many zeros pad it (``int()`` of the exponent as written raised Python's
ValueError past 4300 digits), and ``-2**31`` refused as pyarrow refuses it (it cannot negate
it), safe or not (unsafe gave 0)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm


def _cast(source: pa.Array, target, safe: bool = True) -> pa.Array:
    target_mm = arrowmm.array(pa.nulls(0, target)).type
    return pa.array(arrowmm.array(source).cast(target_mm, safe=safe))


@pytest.mark.parametrize("text,target,value", [
    ("1e" + "0" * 4300 + "5", pa.decimal128(38, 0), "100000"),
    ("1.5e-" + "0" * 5000 + "1", pa.decimal128(38, 2), "0.15"),
    ("1e+" + "0" * 5000 + "3", pa.decimal32(9, 2), "1000.00"),
    ("-25E-" + "0" * 4400 + "3", pa.decimal256(40, 3), "-0.025"),
], ids=["e+4300-zeros", "e-5000-zeros", "decimal32", "decimal256"])
@pytest.mark.parametrize("safe", [True, False])
def test_decimal_text_with_a_long_zero_padded_exponent_parses(text, target, value, safe):
    source = pa.array([text, None])
    assert [str(v) for v in pc.cast(source, target, safe=safe).to_pylist()] == [value, "None"]
    assert [str(v) for v in _cast(source, target, safe=safe).to_pylist()] == [value, "None"]


@pytest.mark.parametrize("text", ["1e-2147483648", "0e-2147483648", "1.5E-0002147483648"])
@pytest.mark.parametrize("target", [pa.decimal32(9, 0), pa.decimal64(18, 0),
                                    pa.decimal128(38, 0), pa.decimal256(76, 10)], ids=str)
@pytest.mark.parametrize("safe", [True, False])
def test_decimal_text_with_exponent_int32_min_is_refused(text, target, safe):
    source = pa.array([text])
    words = f"The string '{text}' cannot be represented as decimal{target.bit_width}"
    with pytest.raises(pa.ArrowInvalid, match=words):
        pc.cast(source, target, safe=safe)
    with pytest.raises(arrowmm.ArrowInvalid, match=words):
        _cast(source, target, safe=safe)
