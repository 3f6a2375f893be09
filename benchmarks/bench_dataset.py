"""Dataset, projection and row-count benchmarks: arrowmm against pyarrow on the same files.

Run from the repository root::

    python benchmarks/bench_dataset.py            # full run (about 3.8 GB of files)
    python benchmarks/bench_dataset.py --quick    # smoke version (a few seconds)
    python benchmarks/bench_dataset.py --out bench_dataset.md

The files are written once (by arrowmm, with footer statistics) into ``--data-dir`` and kept.

1. selective filter - ``arrowmm.dataset(dir).to_table(filter=[("id", ">=", x)])``, ``x`` such
                      that the statistics leave 1% of the batches, then ``pyarrow.table`` of it,
                      vs ``pyarrow.dataset`` with ``pc.field("id") >= x``.     target <= 1.0
                      The details give the speed-up over the same filter on the same data
                      written without statistics (a full scan; the issue asks >= 20x).
2. count_rows       - ``arrowmm.open_file(p).count_rows()`` vs
                      ``pyarrow.dataset.dataset(p, format="ipc").count_rows()`` on the largest
                      file (the issue asks < 10 ms for a multi-GB file).       target <= 1.0
3. one column of 100 - ``pyarrow.table(arrowmm.open_file(p, columns=["c7"]))`` vs
                      ``pa.ipc.open_file(memory_map, IpcReadOptions(included_fields=[7]))
                      .read_all()``.                                           target <= 1.5

The exit status is 0 whatever the ratios (machines are noisy) unless ``--strict``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (Result, base_parser, compare, fmt_time, machine_lines,  # noqa: E402
                    print_result, report, settings)
import arrowmm  # noqa: E402

FULL = dict(files=2, batches=200, batch_rows=1 << 16, columns=8, wide_rows=1 << 16,
            repeats=5, warmup=1)  # two 0.9 GB files, twice (with and without statistics)
QUICK = dict(files=2, batches=50, batch_rows=1 << 11, columns=4, wide_rows=1 << 10,
             repeats=3, warmup=1)


def _write_dir(root: Path, cfg: dict, statistics: bool) -> None:
    marker = root / "_DONE"
    if marker.exists():
        return
    root.mkdir(parents=True, exist_ok=True)
    schema = arrowmm.schema([("id", arrowmm.int64())] +
                            [(f"v{k}", arrowmm.float64()) for k in range(cfg["columns"])])
    rng = np.random.default_rng(0)
    n = cfg["batch_rows"]
    start = 0
    for f in range(cfg["files"]):
        with arrowmm.new_file(str(root / f"part-{f:03d}.arrow"), schema,
                              statistics=statistics) as w:
            for _ in range(cfg["batches"]):
                cols = {"id": np.arange(start, start + n, dtype=np.int64)}
                cols.update({f"v{k}": rng.random(n) for k in range(cfg["columns"])})
                w.write(cols)
                start += n
    marker.write_text("ok")


def _write_wide(path: Path, cfg: dict) -> None:
    if path.exists():
        return
    rng = np.random.default_rng(1)
    table = pa.table({f"c{k}": rng.random(cfg["wide_rows"]) for k in range(100)})
    tmp = path.with_suffix(".tmp")
    with pa.ipc.new_file(str(tmp), table.schema) as w:
        w.write_table(table, max_chunksize=cfg["wide_rows"] // 8)
    os.replace(tmp, path)


def bench(cfg: dict, data: Path) -> list:
    stats_dir, plain_dir = data / "with-stats", data / "no-stats"
    _write_dir(stats_dir, cfg, True)
    _write_dir(plain_dir, cfg, False)
    wide = data / "wide-100.arrow"
    _write_wide(wide, cfg)
    total = cfg["files"] * cfg["batches"] * cfg["batch_rows"]
    x = total - total // 100  # the last 1% of the ids: 1% of the batches
    results = []

    amm_ds, pa_ds = arrowmm.dataset(str(stats_dir)), pads.dataset(str(stats_dir), format="ipc")
    full_ds = arrowmm.dataset(str(plain_dir))
    want = pa_ds.to_table(filter=pc.field("id") >= x).num_rows
    got = pa.table(amm_ds.to_table(filter=[("id", ">=", x)])).num_rows
    assert got == want == total - x, (got, want)
    t_amm, t_pa = compare(lambda: pa.table(amm_ds.to_table(filter=[("id", ">=", x)])),
                          lambda: pa_ds.to_table(filter=pc.field("id") >= x),
                          cfg["repeats"], cfg["warmup"])
    t_full, _ = compare(lambda: pa.table(full_ds.to_table(filter=[("id", ">=", x)])),
                        lambda: None, max(1, cfg["repeats"] // 2), 0)
    results.append(Result("1. selective filter (statistics prune 99%)", t_amm, t_pa, 1.0,
                          f"{want:,} of {total:,} rows; without statistics {fmt_time(t_full)} "
                          f"({t_full / t_amm:.0f}x slower)"))

    biggest = max(stats_dir.glob("part-*.arrow"), key=lambda p: p.stat().st_size)

    def amm_count():
        with arrowmm.open_file(str(biggest)) as r:
            return r.count_rows()
    assert amm_count() == pads.dataset(str(biggest), format="ipc").count_rows()
    t_amm, t_pa = compare(amm_count,
                          lambda: pads.dataset(str(biggest), format="ipc").count_rows(),
                          cfg["repeats"], cfg["warmup"])
    results.append(Result("2. count_rows", t_amm, t_pa, 1.0,
                          f"{biggest.stat().st_size / 2**20:,.0f} MiB file, "
                          f"{cfg['batches']} batches"))

    def amm_one():
        with arrowmm.open_file(str(wide), columns=["c7"]) as r:
            return pa.table(r)

    def pa_one():
        opts = pa.ipc.IpcReadOptions(included_fields=[7])
        with pa.memory_map(str(wide)) as src:
            return pa.ipc.open_file(src, options=opts).read_all()
    assert amm_one().equals(pa_one())
    t_amm, t_pa = compare(amm_one, pa_one, cfg["repeats"], cfg["warmup"])
    results.append(Result("3. one column of 100 (columns=)", t_amm, t_pa, 1.5,
                          f"{wide.stat().st_size / 2**20:,.0f} MiB file"))
    return results


def main(argv=None) -> int:
    args = base_parser(__doc__).parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    data = args.data_dir / ("dataset-quick" if args.quick else "dataset")
    env = "\n".join(machine_lines(args.quick) + [
        f"- dataset: {cfg['files']} files x {cfg['batches']} batches x {cfg['batch_rows']:,} "
        f"rows, id + {cfg['columns']} float64 columns; wide file: 100 float64 columns x "
        f"{cfg['wide_rows']:,} rows"])
    print(env + "\n", flush=True)
    t0 = time.perf_counter()
    results = bench(cfg, data)
    print(f"(ran in {time.perf_counter() - t0:.1f} s)")
    for r in results:
        print_result(r)
    return report(results, "arrowmm dataset benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
