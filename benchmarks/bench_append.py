"""Appending one record batch to an IPC file: the cost must not grow with the file's size.

Run from the repository root::

    python benchmarks/bench_append.py                 # full run: a 10 MB and a 1 GB file
    python benchmarks/bench_append.py --quick         # smoke version: 10 MB and 100 MB (< 30 s)
    python benchmarks/bench_append.py --out bench.md  # also write the table as markdown

The files are written into ``--data-dir`` (``benchmarks/data/``, git-ignored) and deleted at
the end.  Each row runs its two sides alternately after a warm-up; the reported times are
medians.  The appended batch is 8,192 int64 rows (64 KiB).

1/2. append one batch to the small / the big file: ``arrowmm.append_file`` (fsync'd: data,
     then trailer) against what pyarrow offers instead, rewriting the file with the batch
     added (``pa.ipc.open_file`` of a memory map, ``new_file`` to a temporary, rename)
                                                                           target <= 1.0
3/4. growth: arrowmm's append to the big file against its append to the small file (both
     columns are arrowmm; the ratio is what the file's size costs), without and with
     fsync (fsync times depend on the disk and on other jobs: noisy)      target <= 2.0

The exit status is 0 whatever the ratios unless ``--strict`` is given.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings)  # (benchmarks/common.py, beside this script)
import arrowmm  # noqa: E402

FULL = dict(sizes=(10 << 20, 1 << 30), repeats=7, warmup=1, big_rewrites=3)
QUICK = dict(sizes=(10 << 20, 100 << 20), repeats=5, warmup=1, big_rewrites=3)
BATCH_ROWS = 1 << 20  # rows per batch of the base files (8 MiB of int64)
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])
APPENDED = {"x": np.arange(8192, dtype=np.int64)}


def make_file(path: Path, nbytes: int) -> Path:
    batches = max(1, nbytes // (BATCH_ROWS * 8))
    with arrowmm.new_file(path, SCHEMA, fsync=True) as w:  # (no dirty pages left to time)
        for b in range(batches):
            w.write({"x": np.arange(b * BATCH_ROWS, (b + 1) * BATCH_ROWS, dtype=np.int64)})
    return path


def arrowmm_append(path: Path, fsync: bool = True):
    def run():
        with arrowmm.append_file(path, fsync=fsync) as w:
            w.write(APPENDED)
    return run


def pyarrow_rewrite(path: Path):
    batch = pa.record_batch([pa.array(APPENDED["x"])], names=["x"])
    tmp = path.with_name(path.name + ".tmp")

    def run():
        with pa.memory_map(str(path)) as source:
            reader = pa.ipc.open_file(source)
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as w:
                for i in range(reader.num_record_batches):
                    w.write_batch(reader.get_batch(i))
                w.write_batch(batch)
                sink.flush()
                os.fsync(sink.fileno())
        os.replace(tmp, path)
    return run


def interleaved(f_a, f_b, repeats: int):
    """Medians of ``f_a`` and ``f_b`` run alternately."""
    t_a, t_b = [], []
    for _ in range(repeats):
        for f, out in ((f_a, t_a), (f_b, t_b)):
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
    return statistics.median(t_a), statistics.median(t_b)


class Growth(Result):
    """Row 3: both columns are arrowmm (big file, small file)."""


def main() -> int:
    ap = base_parser(__doc__)
    args = ap.parse_args()
    cfg = settings(args, FULL, QUICK)
    d = args.data_dir
    d.mkdir(parents=True, exist_ok=True)
    small_n, big_n = cfg["sizes"]
    names = {small_n: f"{small_n >> 20} MB", big_n: (f"{big_n >> 30} GB" if big_n >= 1 << 30
                                                      else f"{big_n >> 20} MB")}
    paths = []
    try:
        files = {}
        for n in (small_n, big_n):
            mm = make_file(d / f"append_mm_{n}.arrow", n)
            pa_path = d / f"append_pa_{n}.arrow"
            _copy(mm, pa_path)
            paths += [mm, pa_path]
            files[n] = (mm, pa_path)
            print(f"wrote {mm} ({os.path.getsize(mm):,} bytes) and a copy for pyarrow", flush=True)
        results = []
        for k, n in enumerate((small_n, big_n), 1):
            mm, pa_path = files[n]
            repeats = cfg["repeats"] if n == small_n else cfg["big_rewrites"]
            t_mm, t_pa = compare(arrowmm_append(mm), pyarrow_rewrite(pa_path), repeats,
                                 cfg["warmup"])
            r = Result(f"{k}. append 1 batch (64 KiB) to a {names[n]} file", t_mm, t_pa, 1.0,
                       "pyarrow: rewrite with the batch added (it has no append)")
            print_result(r)
            results.append(r)
        for k, fsync in ((3, False), (4, True)):
            t_big, t_small = interleaved(arrowmm_append(files[big_n][0], fsync),
                                         arrowmm_append(files[small_n][0], fsync), cfg["repeats"])
            r = Growth(f"{k}. growth: arrowmm append{' + fsync' if fsync else ''}, "
                       f"{names[big_n]} file vs {names[small_n]} file", t_big, t_small, 2.0,
                       f"'arrowmm' column: {names[big_n]} file; 'pyarrow' column: arrowmm on "
                       f"the {names[small_n]} file")
            print_result(r)
            results.append(r)
    finally:
        for p in paths + [p.with_name(p.name + ".tmp") for p in paths]:
            if p.exists():
                p.unlink()
    env = "\n".join(machine_lines(args.quick) + [
        "- the machine is shared (2 cores, several engineers' jobs at once): times are noisy",
        "- arrowmm appends fsync twice (data, then trailer); pyarrow's rewrite fsyncs once"])
    return report(results, "Append benchmark", env, cfg, args.out, args.strict,
                  note=f"medians; rows 1-2 alternate arrowmm and pyarrow after "
                       f"{cfg['warmup']} warm-up run, rows 3-4 alternate the two arrowmm appends")


def _copy(src: Path, dst: Path) -> None:
    with open(src, "rb") as f, open(dst, "wb") as g:
        while True:
            chunk = f.read(16 << 20)
            if not chunk:
                break
            g.write(chunk)


if __name__ == "__main__":
    sys.exit(main())
