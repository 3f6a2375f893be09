"""Cast benchmarks: ``Array.cast`` between numbers and strings and between numbers, arrowmm
against pyarrow's ``cast`` on the same values (issue 32).

Run from the repository root::

    python benchmarks/bench_cast.py             # 1M and 10M values (a few minutes)
    python benchmarks/bench_cast.py --quick     # smoke version (under 20 s)
    python benchmarks/bench_cast.py --sizes 1e6 --repeats 3 --only "double -> string"
    python benchmarks/bench_cast.py --out bench_cast.md

Each row casts one array (made by pyarrow, imported by arrowmm without a copy) in both
libraries, alternately, the median of the repeats (at least ``--repeats``, more for quick
casts: as many as fit in half a second, up to 41); a row runs without nulls and with 10%
nulls.  The values: integers uniform over their type's range (int64: over +-10**12),
doubles ``standard_normal() * 1000`` (16-17 significant digits, the slow case for shortest
text), floats likewise, booleans half true; strings are pyarrow's text of those numbers.  The
numeric rows cast values that fit (a safe cast that succeeds).  Every result is checked
equal to pyarrow's before timing.

Then temporal values to text and decimal casts (``OTHERS``), with the text target; last,
strings to and from their views (``VIEWS``: strings of 0-19 bytes), with the text target.

Targets: a string <-> number cast <= 1.5 x pyarrow's time, a numeric cast <= 1.2 x.
The exit status is 0 whatever the ratios (machines are noisy) unless ``--strict``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings)
import arrowmm  # noqa: E402

FULL = dict(sizes=[1_000_000, 10_000_000], repeats=5, warmup=1, budget=0.5)
QUICK = dict(sizes=[20_000], repeats=1, warmup=0, budget=0.0)
TEXT_TARGET, NUMERIC_TARGET = 1.5, 1.2

# (source type, target type): numbers to text, text to numbers, numbers to numbers
TO_TEXT = [(pa.int8(), pa.string()), (pa.int32(), pa.string()), (pa.int64(), pa.string()),
           (pa.uint64(), pa.string()), (pa.float32(), pa.string()), (pa.float64(), pa.string()),
           (pa.float16(), pa.string()), (pa.bool_(), pa.string()),
           (pa.float64(), pa.large_string()), (pa.int64(), pa.string_view()),
           (pa.float64(), pa.string_view())]
FROM_TEXT = [(pa.string(), pa.int8()), (pa.string(), pa.int32()), (pa.string(), pa.int64()),
             (pa.string(), pa.uint64()), (pa.string(), pa.float32()),
             (pa.string(), pa.float64()), (pa.string(), pa.float16()),
             (pa.string(), pa.bool_()), (pa.large_string(), pa.float64()),
             (pa.string_view(), pa.int64()), (pa.string_view(), pa.float64()),
             (pa.binary(), pa.int64())]
NUMERIC = [(pa.int64(), pa.int32()), (pa.int32(), pa.int64()), (pa.int64(), pa.float64()),
           (pa.float64(), pa.int64()), (pa.float64(), pa.int32()),
           (pa.float64(), pa.float32()), (pa.float32(), pa.float64()),
           (pa.int32(), pa.float16()), (pa.float16(), pa.float32()),
           (pa.float32(), pa.float16()), (pa.uint8(), pa.int8()), (pa.int64(), pa.bool_()),
           (pa.bool_(), pa.int64())]


# temporal values to text, and decimals (values of a few digits either side of the point)
OTHERS = [(pa.timestamp("us"), pa.string()), (pa.timestamp("ms", "UTC"), pa.string()),
          (pa.timestamp("s", "America/New_York"), pa.string()), (pa.date32(), pa.string()),
          (pa.time64("us"), pa.string()), (pa.decimal128(20, 4), pa.string()),
          (pa.string(), pa.decimal128(20, 4)), (pa.float64(), pa.decimal128(20, 4)),
          (pa.int64(), pa.decimal128(24, 4)), (pa.decimal128(20, 4), pa.decimal128(24, 6)),
          # unscaled values past an int64 (~10**24): 128-bit integers in C
          (pa.decimal128(38, 18), pa.string()), (pa.decimal128(38, 18), pa.float64()),
          (pa.decimal128(38, 18), pa.decimal128(38, 10))]

# strings and their views (``VIEWS``): strings of 0-19 letters and digits
VIEWS = [(pa.string(), pa.string_view()), (pa.string_view(), pa.string())]


def texts(src: pa.DataType, n: int, nulls: bool, rng) -> pa.Array:
    """The array a ``VIEWS`` row casts: ``n`` strings of 0-19 bytes (uniform) as ``src``."""
    lengths = rng.integers(0, 20, n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    data = alphabet[rng.integers(0, alphabet.size, int(offsets[-1]))]
    validity = pa.array(rng.random(n) >= 0.1).buffers()[1] if nulls else None
    strings = pa.Array.from_buffers(pa.string(), n, [validity, pa.py_buffer(offsets),
                                                     pa.py_buffer(data)])
    return strings.cast(src)


def other(src: pa.DataType, dst: pa.DataType, n: int, nulls: bool, rng) -> pa.Array:
    """The array an ``OTHERS`` row casts: timestamps over 1970-2023, dates, times of day,
    decimals ``standard_normal() * 1e6`` to 4 places, at scale 4 (their text for a text
    source) or the source's own scale."""
    mask = rng.random(n) < 0.1 if nulls else None
    if pa.types.is_timestamp(src):
        per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[src.unit]
        return pa.array(rng.integers(0, 1_700_000_000 * per, n), mask=mask).cast(src)
    if pa.types.is_date32(src):
        return pa.array(rng.integers(0, 20_000, n).astype(np.int32), mask=mask).cast(src)
    if pa.types.is_time64(src):
        return pa.array(rng.integers(0, 86_400 * 10**6, n), mask=mask).cast(src)
    if pa.types.is_integer(src):
        return pa.array(rng.integers(-10**12, 10**12, n), mask=mask)
    values = pa.array(np.round(rng.standard_normal(n) * 1e6, 4), mask=mask)
    if pa.types.is_floating(src):
        return values
    decimals = values.cast(pa.decimal128(20, 4))
    if pa.types.is_decimal(src):
        decimals = decimals.cast(src)
    return decimals.cast(src) if pa.types.is_string(src) else decimals


def numbers(dtype: pa.DataType, n: int, rng, *, fits=None) -> np.ndarray:
    """``n`` values of ``dtype`` (the benchmark's distributions, see the module); ``fits``:
    a target type the values must fit exactly (a numeric row's safe cast)."""
    if pa.types.is_boolean(dtype):
        return rng.random(n) < 0.5
    if pa.types.is_floating(dtype):
        values = rng.standard_normal(n) * 1000
        if fits is not None and pa.types.is_integer(fits):
            values = np.round(values)
        return values.astype(dtype.to_pandas_dtype())
    info = np.iinfo(dtype.to_pandas_dtype())
    lo, hi = max(int(info.min), -10**12), min(int(info.max), 10**12)
    if fits is not None and (pa.types.is_integer(fits) or pa.types.is_floating(fits)):
        bound = np.iinfo(fits.to_pandas_dtype()).max if pa.types.is_integer(fits) else \
            {2: 2048, 4: 2**24, 8: 2**53}[fits.byte_width]
        lo, hi = max(lo, -bound if lo < 0 else 0), min(hi, bound)
    if pa.types.is_unsigned_integer(dtype) and dtype.byte_width == 8:
        return rng.integers(0, 2**64, n, dtype=np.uint64)
    return rng.integers(lo, hi, n, endpoint=True).astype(dtype.to_pandas_dtype())


def source(src: pa.DataType, dst: pa.DataType, n: int, nulls: bool, rng) -> pa.Array:
    """The array a row casts: numbers of ``src``, or the text of numbers of ``dst``."""
    mask = rng.random(n) < 0.1 if nulls else None
    if pa.types.is_string(src) or pa.types.is_large_string(src) or \
            pa.types.is_string_view(src) or pa.types.is_binary(src):
        return pa.array(numbers(dst, n, rng), mask=mask).cast(pa.string()).cast(src)
    return pa.array(numbers(src, n, rng, fits=dst), mask=mask)


def bench(cfg: dict) -> list:
    rng = np.random.default_rng(32)
    results = []
    row = 0
    for group, pairs, target in (("to text", TO_TEXT, TEXT_TARGET),
                                 ("from text", FROM_TEXT, TEXT_TARGET),
                                 ("numeric", NUMERIC, NUMERIC_TARGET),
                                 ("temporal and decimal", OTHERS, TEXT_TARGET),
                                 ("views", VIEWS, TEXT_TARGET)):
        for src, dst in pairs:
            row += 1
            if cfg.get("only") and not any(x in f"{src} -> {dst}" for x in cfg["only"]):
                continue
            for n in cfg["sizes"]:
                for nulls in (False, True):
                    theirs_in = other(src, dst, n, nulls, rng) if pairs is OTHERS else \
                        texts(src, n, nulls, rng) if pairs is VIEWS else \
                        source(src, dst, n, nulls, rng)
                    mine_in = arrowmm.array(theirs_in)
                    mm_dst = arrowmm.array(pa.nulls(0, dst)).type
                    mine, theirs = pa.array(mine_in.cast(mm_dst)), theirs_in.cast(dst)
                    if pa.types.is_floating(dst):  # (NaN != NaN: compare the bits)
                        same = mine.buffers()[1] == theirs.buffers()[1] or \
                            mine.cast(pa.string()).equals(theirs.cast(pa.string()))
                        if not same and pa.types.is_decimal(src):
                            # (arrowmm's are correctly rounded, pyarrow's C++ can be a bit
                            # off: the same within one unit in the last place)
                            a = mine.fill_null(0).to_numpy()
                            b = theirs.fill_null(0).to_numpy()
                            same = bool(np.all((a == b) | (np.nextafter(b, a) == a)))
                    else:
                        same = mine.equals(theirs)
                    assert same, f"{src} -> {dst}: arrowmm's values differ from pyarrow's"
                    del mine, theirs
                    t0 = time.perf_counter()
                    theirs_in.cast(dst)
                    once = time.perf_counter() - t0  # (quick casts get more repeats: under
                    repeats = max(cfg["repeats"],  # load a median of 5 ms-long runs is noise)
                                  min(41, int(cfg["budget"] / max(once, 1e-6))))
                    t_amm, t_pa = compare(lambda: mine_in.cast(mm_dst),
                                          lambda: theirs_in.cast(dst), repeats, cfg["warmup"])
                    size = f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n / 1e6:g}M"
                    results.append(Result(
                        f"{row}. {src} -> {dst}, {size}{', 10% nulls' if nulls else ''}",
                        t_amm, t_pa, target,
                        f"{group}; load {os.getloadavg()[0]:.1f}"))
                    print_result(results[-1])
    return results


def main(argv=None) -> int:
    parser = base_parser(__doc__, quick_help="small smoke version (< 20 s)")
    parser.add_argument("--sizes", help="comma-separated array lengths (default 1M and 10M)")
    parser.add_argument("--only", help="comma-separated pieces of the rows to run "
                                       "(\"double -> string,string -> double\")")
    args = parser.parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    if args.sizes:
        cfg["sizes"] = [int(float(x)) for x in args.sizes.split(",")]
    cfg["only"] = args.only.split(",") if args.only else None
    env = "\n".join(machine_lines(args.quick) + [
        f"- arrays of {', '.join(f'{n:,}' for n in cfg['sizes'])} values, without and with "
        f"10% nulls, made by pyarrow and imported by arrowmm without a copy",
        "- load average at start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())])
    print(env + "\n", flush=True)
    t0 = time.perf_counter()
    results = bench(cfg)
    print(f"(ran in {time.perf_counter() - t0:.1f} s; load average at the end: "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")")
    return report(results, "arrowmm cast benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
