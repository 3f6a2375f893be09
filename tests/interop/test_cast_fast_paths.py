"""The fast paths of the number <-> text and numeric casts (issue 34) at their edges, against
pyarrow's cast bit for bit: where a fast path hands over to the exact one (a rounding near a
half, a decade's edge, the last power of ten it holds, 19 and 20 significant digits) and
where a word of the validity bitmap is all valid, all null or mixed."""
import numpy as np
import pyarrow as pa
import pytest

from tests.interop.test_cast_text import same_cast


def _near_decimal_halves(rng, n: int) -> np.ndarray:
    """Doubles nearest to p-digit decimals followed by a 5 (p = 15, 16), and their neighbours:
    values whose p-digit rounding lies within a few units of a half, where the extended
    product cannot decide."""
    texts = []
    for p in (15, 16):
        digits = rng.integers(10**(p - 1), 10**p, n).tolist()
        exps = rng.integers(-14, 45, n).tolist()
        texts += [f"{d}5e{e - p}" for d, e in zip(digits, exps)]
    base = np.array([float(x) for x in texts])
    return np.concatenate([base, np.nextafter(base, np.inf), np.nextafter(base, -np.inf)])


def _decade_edges() -> np.ndarray:
    """The doubles at and beside each power of ten the fast path reaches (10**-14 to 10**45:
    past them the exact path answers), and powers of two there (lopsided gaps)."""
    tens = np.array([float(f"1e{k}") for k in range(-14, 46)])
    twos = np.ldexp(1.0, np.arange(-50, 152))
    edges = np.concatenate([tens, twos])
    return np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf),
                           np.nextafter(np.nextafter(edges, 0), 0)])


def test_doubles_where_the_shortest_fast_path_hands_over_are_written_as_pyarrow():
    """17-digit doubles near a half at 15 and 16 digits, decade edges, powers of two,
    random doubles of every decade of the fast path; positive and negative."""
    rng = np.random.default_rng(34)
    spread = rng.standard_normal(20_000) * 10.0 ** rng.integers(-14, 46, 20_000)
    values = np.concatenate([_near_decimal_halves(rng, 3_000), _decade_edges(), spread])
    values = np.concatenate([values, -values])
    for target in (pa.string(), pa.large_string(), pa.string_view()):
        same_cast(pa.array(values), target)


def test_floats_where_the_shortest_fast_path_hands_over_are_written_as_pyarrow():
    rng = np.random.default_rng(35)
    with np.errstate(over="ignore", under="ignore"):
        values = np.concatenate([_near_decimal_halves(rng, 2_000), _decade_edges(),
                                 rng.standard_normal(20_000) * 10.0 ** rng.integers(-38, 39,
                                                                                   20_000)])
        floats = values.astype(np.float32)
    floats = np.concatenate([floats, np.nextafter(floats, np.float32(0)), -floats])
    same_cast(pa.array(floats), pa.string())


@pytest.mark.parametrize("source", [pa.float32(), pa.float64()], ids=str)
@pytest.mark.parametrize("target", [pa.int8(), pa.uint16(), pa.int32(), pa.uint32(),
                                    pa.int64()], ids=str)
def test_floats_to_integers_name_the_first_bad_value_in_any_lane_or_block(source, target):
    """Arrays of whole numbers (an odd length, blocks of 2048 and a half block) with one or two
    values that do not fit (just past either end of the range, a fraction, NaN, inf) at the
    edges of blocks and of SSE2 pairs, alone, under a null and beside nulls."""
    info = np.iinfo(target.to_pandas_dtype())
    dtype = source.to_pandas_dtype()
    rng = np.random.default_rng(36)
    n = 5_001
    fine = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True)
    edges = [float(info.min), float(info.max), -0.0]  # (fit, where the type holds them)
    bads = [float(info.min) - 1, float(info.max) + 1, float(info.max) * 2 + 2, 0.5, -1.5,
            float("nan"), float("inf"), float("-inf")]
    same_cast(pa.array(np.concatenate([fine, edges]).astype(dtype)), target)
    for at in (0, 1, 2, 2047, 2048, 2049, 4095, 4096, n - 2, n - 1):
        for bad in bads:
            with np.errstate(over="ignore", invalid="ignore"):
                values = fine.astype(dtype)
                values[at] = bad
                if at + 3 < n:
                    values[at + 3] = 0.25  # (a second bad value: the first is named)
            if not np.isnan(values[at]) and values[at] == float(np.array(bad, dtype)) and \
                    info.min <= values[at] <= info.max and values[at] == int(values[at]):
                continue  # (a float32 that rounds to a value in range: it fits)
            same_cast(pa.array(values), target)
            for hidden in ([at], [at - 1, at + 1]):  # (under a null; beside nulls)
                mask = np.zeros(n, dtype=bool)
                mask[[k for k in hidden if 0 <= k < n]] = True
                same_cast(pa.array(values, mask=mask), target)


def _digit_runs(rng) -> list:
    """Decimals whose digits the parse may read 8 at a time: 1 to 26 digits either side of the
    point (19 and 20 significant: where the exact path takes over), after leading zeros, and
    each with one byte of an 8-byte window swapped for a neighbour of the digits in ASCII
    ('/', ':'), a point, an exponent, a sign, a space or a byte of UTF-8."""
    texts = []
    for whole in range(0, 27):
        for frac in range(0, 27):
            if whole + frac == 0:
                continue
            digits = "".join(rng.choice(list("0123456789"), whole + frac))
            digits = "".join(str(rng.integers(1, 10)) + digits[1:])  # (no lead)
            text = digits[:whole] + ("." + digits[whole:] if frac else "")
            texts += [text, "-" + text, "0.000" + digits, "000" + text, text + "e-5"]
    for k in range(0, 12):
        for bad in "/:.e+ \u00e9":
            digits = list("1234567890123456789012")
            digits[3 + k] = bad
            texts += ["".join(digits), "9." + "".join(digits)]
    return texts


def _parses(text: str) -> bool:
    try:
        pa.array([text]).cast(pa.float64())
    except pa.ArrowInvalid:
        return False
    return True


def test_decimals_read_eight_digits_at_a_time_parse_as_pyarrow():
    """The values pyarrow reads all together (bit for bit), each one it refuses alone."""
    texts = _digit_runs(np.random.default_rng(37))
    good = [text for text in texts if _parses(text)]
    assert len(good) > 3_000
    for target in (pa.float64(), pa.float32(), pa.float16()):
        same_cast(pa.array(good), target)
    for text in sorted(set(texts) - set(good)):
        same_cast(pa.array([text]), pa.float64())
