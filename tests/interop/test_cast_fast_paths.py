"""The fast paths of the number <-> text and numeric casts (issue 34) at their edges, against
pyarrow's cast bit for bit: where a fast path hands over to the exact one (a rounding near a
half, a decade's edge, the last power of ten it holds, 19 and 20 significant digits) and
where a word of the validity bitmap is all valid, all null or mixed."""
import numpy as np
import pyarrow as pa

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
