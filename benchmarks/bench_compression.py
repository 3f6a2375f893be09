"""Compression benchmarks: arrowmm against pyarrow, same process, same files.

Run from the repository root::

    python benchmarks/bench_compression.py                 # full run (~1-2 min)
    python benchmarks/bench_compression.py --quick         # smoke version (< 30 s)
    python benchmarks/bench_compression.py --out bench.md  # also write the table as markdown

The files are written by pyarrow (LZ4_FRAME and ZSTD, its default levels) into
``benchmarks/data/`` (git-ignored) the first time and reused.  Each benchmark runs
both libraries alternately after warm-up runs; the reported time is the median of
the timed repeats.  pyarrow reads through ``pa.ipc.open_file(pa.memory_map(path))``.

``ratio`` is arrowmm time / pyarrow time; a benchmark passes when ``ratio <= target``:

1a/1b. full read - every column of every batch of an LZ4 / ZSTD file materialised:
       arrowmm ``batch.columns`` (all buffers decompressed), then ``to_numpy()`` of
       each numeric column and ``buffers()`` of the string column; pyarrow
       ``read_all()`` (its IPC reader decompresses with its thread pool), then the
       same ``to_numpy()`` / ``buffers()`` of each chunk                       target <= 1.0
2.     one column - ``get_batch(0).column(57).to_numpy()`` on a 100-column LZ4
       file, opened afresh each time (pyarrow decompresses the whole batch)   target <= 0.2
3a/3b. compressed write - the full-read table written to a file with LZ4 /
       ZSTD (codec defaults of each library: LZ4 fast, zstd level 1)         target <= 1.1
       The files go to ``--write-dir`` (default ``/dev/shm`` where it exists): on
       a disk, how much earlier output the kernel is still flushing moved one
       run's write time by up to 300 ms here, drowning the writers' own cost.
       arrowmm writes a temporary file and renames it over the last one (never
       a half-written file under the final name); pyarrow truncates in place.

Both libraries use the machine's cores (arrowmm: ``ARROWMM_CODEC_THREADS``, default
the usable CPUs; pyarrow: its CPU pool).  The exit status is 0 whatever the ratios
unless ``--strict`` is given.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings, warm_cache)  # (benchmarks/common.py, beside this script)
import arrowmm  # noqa: E402

SEED = 20240502
FULL = dict(batches=8, rows=1_000_000, wide_rows=100_000, repeats=7, warmup=2)
QUICK = dict(batches=2, rows=100_000, wide_rows=10_000, repeats=3, warmup=1)


# -- data ------------------------------------------------------------------------------------

def mixed_table(batches: int, rows: int) -> pa.Table:
    """Columns that compress the way real ones do: small-range ints, sorted ids, prices with
    two decimals, random floats (incompressible), an int8 category and short strings."""
    rng = np.random.default_rng(SEED)
    out = []
    words = np.array([f"item-{i:05d}" for i in range(5000)])
    for b in range(batches):
        out.append(pa.record_batch({
            "id": pa.array(np.arange(b * rows, (b + 1) * rows, dtype=np.int64)),
            "qty": pa.array(rng.integers(0, 100, rows)),
            "price": pa.array(np.round(rng.random(rows) * 1000, 2)),
            "noise": pa.array(rng.random(rows)),
            "cat": pa.array(rng.integers(0, 12, rows).astype(np.int8)),
            "name": pa.array(words[rng.integers(0, len(words), rows)]),
        }))
    return pa.Table.from_batches(out)


def write_pa(path: Path, table: pa.Table, codec: str) -> Path:
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table)
    tmp.rename(path)
    return path


def wide_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(SEED)
    return pa.table({f"c{k}": pa.array(rng.integers(0, 1000, rows)) for k in range(100)})


# -- benchmarks --------------------------------------------------------------------------------

NUMERIC = ("id", "qty", "price", "noise", "cat")


def bench_full(path: Path, codec: str, cfg, label: str) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            n = 0
            for batch in r:
                for name, col in zip(batch.schema.names, batch.columns):
                    n += col.to_numpy().size if name in NUMERIC else len(col.buffers())
            return n

    def pya():
        table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
        n = 0
        for name, col in zip(table.column_names, table.columns):
            for chunk in col.chunks:
                n += chunk.to_numpy().size if name in NUMERIC else len(chunk.buffers())
        return n

    assert amm() == pya()
    with arrowmm.open_file(path) as r:  # same values
        b = r.get_batch(-1)
        t = pa.ipc.open_file(pa.memory_map(str(path))).get_batch(r.num_record_batches - 1)
        assert all(np.array_equal(b.column(k).to_numpy(), t.column(k).to_numpy()) for k in NUMERIC)
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    size = path.stat().st_size / 2**20
    return Result(label, *times, 1.0, f"{cfg['batches']} batches x {cfg['rows']:,} rows x 6 cols, "
                                       f"{size:,.0f} MiB {codec} file")


def bench_one_column(path: Path, cfg) -> Result:
    k = 57

    def amm():
        with arrowmm.open_file(path) as r:
            return r.get_batch(0).column(k).to_numpy().sum()

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0).column(k).to_numpy().sum()

    assert amm() == pya()
    times = compare(amm, pya, cfg["repeats"] * 3, cfg["warmup"])
    return Result("2. one column of a 100-column lz4 file", *times, 0.2,
                  f"1 batch x {cfg['wide_rows']:,} rows x 100 int64 cols; open + column(57).to_numpy()")


def bench_write(table: pa.Table, codec: str, out_dir: Path, cfg, label: str) -> Result:
    mm_batches = [arrowmm.record_batch(b) for b in table.to_batches()]  # zero-copy imports
    schema = mm_batches[0].schema
    dst_amm, dst_pa = out_dir / f"w_amm_{codec}.arrow", out_dir / f"w_pa_{codec}.arrow"

    def amm():
        with arrowmm.new_file(dst_amm, schema, compression=codec) as w:
            for b in mm_batches:
                w.write(b)

    opts = pa.ipc.IpcWriteOptions(compression=codec)

    def pya():
        with pa.OSFile(str(dst_pa), "wb") as sink, pa.ipc.new_file(sink, table.schema, options=opts) as w:
            w.write_table(table)

    try:
        amm()
        assert pa.ipc.open_file(pa.memory_map(str(dst_amm))).read_all().equals(table)
        times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
        sizes = dst_amm.stat().st_size / 2**20, dst_pa.stat().st_size / 2**20
    finally:
        for p in (dst_amm, dst_pa):
            if p.exists():
                p.unlink()
    return Result(label, *times, 1.1, f"same table as 1; output {sizes[0]:,.0f} MiB (arrowmm) vs "
                                      f"{sizes[1]:,.0f} MiB (pyarrow)")


# -- main --------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = base_parser(__doc__)
    shm = Path("/dev/shm")
    parser.add_argument("--write-dir", type=Path,
                        default=shm if shm.is_dir() and os.access(shm, os.W_OK) else None,
                        help="where benchmarks 3a/3b write (default /dev/shm, else --data-dir)")
    args = parser.parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    d = args.data_dir
    write_dir = args.write_dir or d
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    print("preparing data files in", d, flush=True)
    table = mixed_table(cfg["batches"], cfg["rows"])
    tag = f"{cfg['batches']}x{cfg['rows']}"
    lz4_path = write_pa(d / f"compressed_{tag}.lz4.arrow", table, "lz4")
    zstd_path = write_pa(d / f"compressed_{tag}.zstd.arrow", table, "zstd")
    wide_path = write_pa(d / f"wide_100x{cfg['wide_rows']}.lz4.arrow", wide_table(cfg["wide_rows"]), "lz4")
    files = [lz4_path, zstd_path, wide_path]
    for p in files:
        warm_cache(p)
    print(f"data ready in {time.perf_counter() - t0:.1f} s\n", flush=True)
    env = "\n".join(machine_lines(args.quick) + [
        f"- arrowmm codec threads: {arrowmm.ipc.core.compression.parallel_threads()}, "
        f"pyarrow CPU pool: {pa.cpu_count()}",
        "- page cache: warm (each file is read once before timing)",
        f"- writes go to {write_dir}"]
        + [f"- {p.name}: {p.stat().st_size / 2**20:,.1f} MiB" for p in files])
    print(env + "\n", flush=True)

    steps = [lambda: bench_full(lz4_path, "lz4", cfg, "1a. full read, lz4 (materialise every column)"),
             lambda: bench_full(zstd_path, "zstd", cfg, "1b. full read, zstd (materialise every column)"),
             lambda: bench_one_column(wide_path, cfg),
             lambda: bench_write(table, "lz4", write_dir, cfg, "3a. compressed write, lz4"),
             lambda: bench_write(table, "zstd", write_dir, cfg, "3b. compressed write, zstd")]
    results = []
    for step in steps:
        results.append(step())
        print_result(results[-1])
    return report(results, "arrowmm vs pyarrow compression benchmarks", env, cfg, args.out, args.strict,
                  note=f"median of the timed repeats after {cfg['warmup']} warm-up runs")


if __name__ == "__main__":
    sys.exit(main())
