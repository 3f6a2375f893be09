"""Hostile-size benchmarks: wide schemas and high-ratio decompression, arrowmm against pyarrow.

Run from the repository root::

    python benchmarks/bench_limits.py                 # full run (a few minutes)
    python benchmarks/bench_limits.py --quick         # smoke version (< 30 s)
    python benchmarks/bench_limits.py --out bench.md  # also write the table as markdown

The files are written by pyarrow into ``benchmarks/data/`` (git-ignored) the first time and
reused.  Each benchmark runs both libraries alternately after warm-up runs; the reported time is
the median of the timed repeats.  ``ratio`` is arrowmm time / pyarrow time; a benchmark passes
when ``ratio <= target``:

1a/1b. wide-schema open - ``open_file(path)`` of a file of one batch of one row under a schema
       of 10^5 / 10^6 int8 fields (10^4 / 10^5 with --quick), against
       ``pa.ipc.open_file(pa.memory_map(path))``: both parse the footer's schema     target <= 2.0
2.     high-ratio ZSTD decode - a file of 8 int64 columns of zeros, 2 GiB uncompressed
       (128 MiB with --quick) in a few KiB: arrowmm ``get_batch(0).columns``, pyarrow
       ``get_batch(0)`` (both decompress every buffer, in threads)             target <= 1.5
       Repeated decodes reuse freed memory in both: pyarrow's allocator keeps it, arrowmm's
       block cache (``_core/_arena``) holds up to its limit (the 2 GiB fit the default on a
       machine with 16 GiB of RAM or more; ARROWMM_BLOCK_CACHE=256m shows the old default)

The exit status is 0 whatever the ratios unless ``--strict`` is given.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings, warm_cache)  # (benchmarks/common.py, beside this script)
import arrowmm  # noqa: E402
from arrowmm._core import _arena  # noqa: E402

FULL = dict(wide=(100_000, 1_000_000), ratio_rows=32 << 20, repeats=3, warmup=1)
QUICK = dict(wide=(10_000, 100_000), ratio_rows=2 << 20, repeats=3, warmup=1)


def _write(path: Path, table: pa.Table, codec=None) -> Path:
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_file(sink, table.schema,
                            options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table)
    tmp.rename(path)
    return path


def wide_file(d: Path, n: int) -> Path:
    path = d / f"wide_schema_{n}.arrow"
    if not path.exists():
        one = pa.array([1], pa.int8())
        _write(path, pa.Table.from_arrays([one] * n, names=[f"f{i}" for i in range(n)]))
    return path


def ratio_file(d: Path, rows: int) -> Path:
    path = d / f"zeros_8x{rows}.zstd.arrow"
    if not path.exists():
        zeros = pa.array(np.zeros(rows, dtype=np.int64))
        _write(path, pa.table({f"c{k}": zeros for k in range(8)}), "zstd")
    return path


def bench_open(path: Path, n: int, cfg, label: str) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return len(r.schema)

    def pya():
        return len(pa.ipc.open_file(pa.memory_map(str(path))).schema)

    assert amm() == pya() == n
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    return Result(label, *times, 2.0, f"{n:,} int8 fields, 1 row; open only")


def bench_ratio(path: Path, rows: int, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return sum(len(c) for c in r.get_batch(0).columns)

    def pya():
        batch = pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0)
        return sum(len(c) for c in batch.columns)

    assert amm() == pya() == 8 * rows
    with arrowmm.open_file(path) as r:
        assert not r.get_batch(0).column(7).to_numpy().any()  # (values read back)
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    size = path.stat().st_size
    return Result("2. high-ratio zstd decode", *times, 1.5,
                  f"8 int64 cols of zeros, {8 * 8 * rows / 2**30:.3g} GiB from a {size / 1024:,.0f} "
                  f"KiB file")


def main(argv=None) -> int:
    args = base_parser(__doc__).parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    d = args.data_dir
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    print("preparing data files in", d, flush=True)
    wide = [wide_file(d, n) for n in cfg["wide"]]
    ratio = ratio_file(d, cfg["ratio_rows"])
    for p in wide + [ratio]:
        warm_cache(p)
    print(f"data ready in {time.perf_counter() - t0:.1f} s\n", flush=True)
    env = "\n".join(machine_lines(args.quick) + [
        f"- arrowmm codec threads: {arrowmm.ipc.compression.parallel_threads()}, "
        f"pyarrow CPU pool: {pa.cpu_count()}",
        "- page cache: warm (each file is read once before timing)",
        f"- arrowmm block cache: limit {_arena.cache_limit() / 2**30:.2f} GiB (an eighth of "
        f"RAM, 256 MiB-4 GiB, or ARROWMM_BLOCK_CACHE), {_arena.cache_resident() >> 20} MiB "
        f"resident, the rest MADV_FREE"]
        + [f"- {p.name}: {p.stat().st_size / 2**20:,.2f} MiB" for p in wide + [ratio]])
    print(env + "\n", flush=True)
    results = []
    for letter, n, path in zip("ab", cfg["wide"], wide):
        results.append(bench_open(path, n, cfg, f"1{letter}. wide-schema open, {n:,} fields"))
        print_result(results[-1])
    results.append(bench_ratio(ratio, cfg["ratio_rows"], cfg))
    print_result(results[-1])
    return report(results, "arrowmm hostile-size benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
