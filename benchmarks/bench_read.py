"""Read benchmarks: arrowmm against pyarrow, same process, same files.

Run from the repository root::

    python benchmarks/bench_read.py                 # full run (3.2 GB of data files; ~1 min)
    python benchmarks/bench_read.py --quick         # smoke version (< 30 s, small files)
    python benchmarks/bench_read.py --out bench.md  # also write the table as markdown

The data files are written with pyarrow into ``benchmarks/data/`` (git-ignored)
the first time and reused afterwards.  Each benchmark runs both libraries on the
same file, alternating them, with warm-up runs first; the reported time is the
median of the timed repeats (``time.perf_counter``).  pyarrow reads through
``pyarrow.ipc.open_file(pyarrow.memory_map(path))``, i.e. memory-mapped too.

``ratio`` is arrowmm time / pyarrow time (below 1 means arrowmm is faster) and
a benchmark passes when ``ratio <= target``:

1. open       - open a file of 200,000 tiny record batches (time
                per open, averaged over a loop of opens)               target <= 1.0
2. random     - 2,000 random get_batch(i).column(k).to_numpy() on a
                100-column x 1,000-batch file, reader reused          target <= 0.35
3. scan       - sum one float64 column of a ~2 GB file, batch by batch  target <= 1.1
4. validate   - validate(full=True) of string and list<int64> columns target <= 1.0

The page cache cannot be dropped without root, so every file is read once before
timing: both libraries see a warm cache.  The exit status is 0 whatever the
ratios (machines are noisy) unless ``--strict`` is given.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings, warm_cache)  # (benchmarks/common.py, beside this script)
import arrowmm  # noqa: E402

SEED = 20240501
FULL = dict(open_batches=200_000, open_loops=200,
            rand_batches=1_000, rand_cols=100, rand_rows=1_000, rand_pairs=2_000,
            scan_batches=32, scan_rows=1 << 20, scan_cols=8,  # 2 GiB
            val_batches=10, val_rows=1_000_000, repeats=9, warmup=2)
QUICK = dict(open_batches=20_000, open_loops=50,
             rand_batches=100, rand_cols=100, rand_rows=1_000, rand_pairs=500,
             scan_batches=6, scan_rows=1 << 17, scan_cols=8,  # 48 MiB
             val_batches=2, val_rows=100_000, repeats=3, warmup=1)


def pa_open(path):
    return pa.ipc.open_file(pa.memory_map(str(path)))


# -- data files ----------------------------------------------------------------------------
def write_file(path: Path, schema: pa.Schema, batches) -> Path:
    """Write ``batches`` (an iterable, consumed one at a time) unless ``path`` exists."""
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    tmp.rename(path)
    return path


def make_open_file(d: Path, n: int) -> Path:
    schema = pa.schema([("x", pa.int64())])
    tiny = [pa.record_batch([pa.array(np.arange(r, dtype=np.int64))], schema=schema) for r in (1, 2, 3, 4)]
    sizes = np.random.default_rng(SEED).integers(0, 4, n)
    return write_file(d / f"open_{n}.arrow", schema, (tiny[s] for s in sizes))


def make_random_file(d: Path, nb: int, ncols: int, rows: int) -> Path:
    rng = np.random.default_rng(SEED)
    schema = pa.schema([(f"c{k}", pa.float64() if k % 2 == 0 else pa.int64()) for k in range(ncols)])

    def batches():
        for _ in range(nb):
            cols = [rng.random(rows) if k % 2 == 0 else rng.integers(-1 << 40, 1 << 40, rows)
                    for k in range(ncols)]
            yield pa.record_batch(cols, schema=schema)
    return write_file(d / f"random_{nb}x{ncols}x{rows}.arrow", schema, batches())


def make_scan_file(d: Path, nb: int, rows: int, ncols: int) -> Path:
    rng = np.random.default_rng(SEED)
    schema = pa.schema([(f"f{k}", pa.float64()) for k in range(ncols)])
    batches = (pa.record_batch([rng.random(rows) for _ in range(ncols)], schema=schema) for _ in range(nb))
    return write_file(d / f"scan_{nb}x{rows}x{ncols}.arrow", schema, batches)


def make_validate_file(d: Path, nb: int, rows: int) -> Path:
    rng = np.random.default_rng(SEED)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 -_éßøñ中文字😀"))
    pool = pa.array(["".join(rng.choice(alphabet, int(n))) for n in rng.integers(0, 21, 50_000)])
    schema = pa.schema([("s", pa.string()), ("l", pa.list_(pa.int64()))])

    def batches():
        for _ in range(nb):
            idx = pa.array(rng.integers(0, len(pool), rows), mask=rng.random(rows) < 0.05)
            offsets = np.zeros(rows + 1, dtype=np.int32)
            np.cumsum(rng.integers(0, 6, rows), out=offsets[1:])
            values = pa.array(rng.integers(-1000, 1000, int(offsets[-1])))
            lists = pa.ListArray.from_arrays(pa.array(offsets), values)
            yield pa.record_batch([pool.take(idx), lists], schema=schema)
    return write_file(d / f"validate_{nb}x{rows}.arrow", schema, batches())


# -- benchmarks ----------------------------------------------------------------------------
def bench_open(path: Path, cfg) -> Result:
    n, loops = cfg["open_batches"], cfg["open_loops"]  # one open is ~0.1 ms: time a loop of them

    def amm():
        for _ in range(loops):
            r = arrowmm.open_file(path)
            assert r.num_record_batches == n
            r.close()

    def pya():
        for _ in range(loops):
            with pa.memory_map(str(path)) as src:
                assert pa.ipc.open_file(src).num_record_batches == n

    t_amm, t_pa = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    return Result("1. open", t_amm / loops, t_pa / loops, 1.0,
                  f"{n:,} batches of 1-4 rows; open + num_record_batches + close, per open")


def bench_random(path: Path, cfg) -> Result:
    rng = np.random.default_rng(SEED)
    n = cfg["rand_pairs"]
    pairs = list(zip(rng.integers(0, cfg["rand_batches"], n).tolist(),
                     rng.integers(0, cfg["rand_cols"], n).tolist()))
    r_amm, r_pa = arrowmm.open_file(path), pa_open(path)

    def amm():  # each view is dropped at once: touch and discard
        for i, k in pairs:
            r_amm.get_batch(i).column(k).to_numpy()

    def pya():
        for i, k in pairs:
            r_pa.get_batch(i).column(k).to_numpy()

    assert all(np.array_equal(r_amm.get_batch(i).column(k).to_numpy(), r_pa.get_batch(i).column(k).to_numpy())
               for i, k in pairs[:50])
    t = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    r_amm.close()
    return Result("2. random get_batch/column/to_numpy", *t, 0.35,
                  f"{n:,} (batch, column) pairs, seed {SEED}, reader reused")


def bench_scan(path: Path, cfg) -> Result:
    k = 3  # the column summed

    def amm():
        r = arrowmm.open_file(path)
        total = sum(r.get_batch(i).column(k).to_numpy().sum() for i in range(r.num_record_batches))
        r.close()
        return total

    def pya():
        r = pa_open(path)
        return sum(r.get_batch(i).column(k).to_numpy().sum() for i in range(r.num_record_batches))

    assert amm() == pya()
    t = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    shape = f"{cfg['scan_batches']} batches x {cfg['scan_rows']:,} rows x {cfg['scan_cols']} cols"
    return Result("3. full scan (sum 1 float64 column)", *t, 1.1, f"{shape}, warm cache")


def bench_validate(path: Path, cfg) -> Result:
    r_amm, r_pa = arrowmm.open_file(path), pa_open(path)
    nb = r_amm.num_record_batches

    def amm():  # a fresh batch each time: nothing decoded or checked is reused
        for i in range(nb):
            r_amm.get_batch(i).validate(full=True)

    def pya():  # symmetric: re-get the batch too (cheap); pyarrow re-validates every call
        for i in range(nb):
            r_pa.get_batch(i).validate(full=True)

    t = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    r_amm.close()
    return Result("4. validate(full=True) string + list<int64>", *t, 1.0,
                  f"{nb} batches x {cfg['val_rows']:,} rows")


# -- reporting -----------------------------------------------------------------------------
def environment(files, quick: bool) -> str:
    lines = machine_lines(quick) + [
        "- page cache: warm (each file is read once before timing; it cannot be dropped here)"]
    lines += [f"- {p.name}: {p.stat().st_size / 2**20:,.1f} MiB" for p in files]
    return "\n".join(lines)


def main(argv=None) -> int:
    args = base_parser(__doc__).parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(args.data_dir).free
    if not args.quick and free < 10 * 2**30:
        cfg["scan_batches"] = 4  # ~256 MiB instead of ~2 GiB
        print(f"only {free / 2**30:.1f} GiB free: the scan file shrinks to {cfg['scan_batches']} batches")

    t0 = time.perf_counter()
    print("preparing data files in", args.data_dir, flush=True)
    d = args.data_dir
    files = [make_open_file(d, cfg["open_batches"]),
             make_random_file(d, cfg["rand_batches"], cfg["rand_cols"], cfg["rand_rows"]),
             make_scan_file(d, cfg["scan_batches"], cfg["scan_rows"], cfg["scan_cols"]),
             make_validate_file(d, cfg["val_batches"], cfg["val_rows"])]
    for p in files:
        warm_cache(p)
    print(f"data ready in {time.perf_counter() - t0:.1f} s\n", flush=True)
    env = environment(files, args.quick)
    print(env + "\n", flush=True)

    results = []
    for bench, path in zip((bench_open, bench_random, bench_scan, bench_validate), files):
        results.append(bench(path, cfg))
        print_result(results[-1])
    return report(results, "arrowmm vs pyarrow read benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
