"""Spark benchmark of the JVM reader: ``format("arrowmm_jvm")`` against Spark's Parquet reader.

Run from the repository root::

    python benchmarks/bench_spark_jvm.py            # 20 batches x 1,000,000 rows (~2 min)
    python benchmarks/bench_spark_jvm.py --quick    # smoke version (small data, one round)

One local Spark session (local[2], the JVM reader's jar on it via
``arrowmm.spark.configure``) runs both readers on the same data, interleaved in
each round (A, B, A, B, ...), after one warm-up round; the reported time is the
median of the timed rounds.  A fresh DataFrame is built for each run, so
planning is included.  The data is bench_spark.py's (cached by shape): one IPC
file written by arrowmm, and the same batches as Parquet written by pyarrow
(snappy, one row group per batch).

Queries: 1. ``sum`` of the 4 float64 columns plus ``count(*)``; 2. ``sum(a)``
(1 of the 5 columns: column pruning).  Throughput ratio = Parquet time /
arrowmm_jvm time (higher is better); the issue's target is >= 2.0 for both.
``--compressed`` adds query 1 over ZSTD and LZ4_FRAME copies of the IPC file
(written by arrowmm; the issue's target is >= 0.8).

``--filter`` adds the statistics benchmark, on the same rows cut into 10x more,
10x smaller batches (200 x 100,000; the Parquet copy has one row group per
batch): query 3 is query 1 under a filter on the sorted key ``k`` that the
footer statistics narrow to 1% of the batches (2 of 200), timed interleaved
with the unfiltered query 1 on the same file; speed-up = full-scan time /
filtered time (the issue's target is >= 5), with Parquet's (row-group
statistics) for comparison.  ``--no-scan`` leaves out queries 1 and 2.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import machine_lines  # noqa: E402
from bench_spark import DATA_DIR, make_data  # noqa: E402

FULL = dict(batches=20, rows=1_000_000, rounds=5)
QUICK = dict(batches=4, rows=50_000, rounds=1)
FILTER_FULL = dict(batches=200, rows=100_000)
FILTER_QUICK = dict(batches=100, rows=2_000)


def compressed_copy(ipc: Path, codec: str) -> Path:
    """The same batches as ``ipc``, written by arrowmm with ``codec`` (cached)."""
    import arrowmm
    out = ipc.with_name(f"{ipc.stem}-{codec}.arrow")
    if not out.exists():
        with arrowmm.open_file(str(ipc)) as r, \
                arrowmm.new_file(str(out), r.schema, compression=codec) as w:
            for batch in r:
                w.write(batch)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small smoke version")
    ap.add_argument("--rounds", type=int, help="timed rounds (median reported)")
    ap.add_argument("--out", type=Path, help="also write the environment and table as markdown here")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--strict", action="store_true", help="exit 1 if any benchmark misses its target")
    ap.add_argument("--compressed", action="store_true",
                    help="also time query 1 over ZSTD and LZ4 copies of the IPC file")
    ap.add_argument("--filter", action="store_true",
                    help="also time a filter the statistics narrow to 1%% of the batches")
    ap.add_argument("--no-scan", action="store_true", help="leave out queries 1 and 2")
    args = ap.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.rounds:
        cfg["rounds"] = args.rounds
    ipc, parquet = make_data(args.data_dir, cfg["batches"], cfg["rows"])

    from pyspark.sql import functions as F
    from arrowmm.spark import JVM_FORMAT
    from arrowmm.spark.session import local_session
    t0 = time.perf_counter()
    spark = local_session("local[2]", "arrowmm-bench-jvm", str(args.data_dir / "session"),
                          driver_memory="2g", fast_jit=False, jvm=True)
    start_s = time.perf_counter() - t0

    variants = {
        "arrowmm_jvm": lambda: spark.read.format(JVM_FORMAT).load(str(ipc)),
        "parquet": lambda: spark.read.parquet(str(parquet)),
    }
    codecs = ("zstd", "lz4") if args.compressed else ()
    for codec in codecs:
        path = compressed_copy(ipc, codec)
        variants[f"arrowmm_jvm {codec}"] = lambda path=path: spark.read.format(JVM_FORMAT).load(str(path))
    q1 = [F.sum(c) for c in "abcd"] + [F.count("*")]
    queries = {"1. sum of 4 float64 + count": lambda df: tuple(df.agg(*q1).first()),
               "2. sum(a), 1 of 5 columns": lambda df: tuple(df.agg(F.sum("a")).first())}
    if args.no_scan:
        queries = {}
    results = {}
    for qname, q in queries.items():
        times = {v: [] for v in variants}
        answers = {}
        for round_ in range(cfg["rounds"] + 1):  # round 0 warms up
            for vname, make in variants.items():
                if qname.startswith("2.") and vname.split()[-1] in codecs:
                    continue
                t = time.perf_counter()
                answers[vname] = q(make())
                if round_:
                    times[vname].append(time.perf_counter() - t)
        ref = answers["parquet"]
        for vname, ans in answers.items():  # the same sums (float addition order differs)
            assert len(ans) == len(ref) and all(abs(a - r) <= 1e-9 * abs(r) for a, r in zip(ans, ref)), \
                (qname, vname, ans, ref)
        results[qname] = {v: statistics.median(ts) for v, ts in times.items() if ts}
        print(qname, {v: f"{s:.3f} s" for v, s in results[qname].items()}, flush=True)
    filter_lines = filter_benchmark(spark, args, cfg) if args.filter else []
    version = spark.version
    spark.stop()

    lines = ["| query | arrowmm_jvm | Parquet | throughput ratio | target | result |",
             "|---|---:|---:|---:|---:|:---:|"]
    ok = True
    for qname, r in results.items():
        ratio = r["parquet"] / r["arrowmm_jvm"]
        ok &= ratio >= 2.0
        lines.append(f"| {qname} | {r['arrowmm_jvm']:.3f} s | {r['parquet']:.3f} s | {ratio:.2f} | "
                     f">= 2.0 | {'PASS' if ratio >= 2.0 else 'FAIL'} |")
        for codec in codecs:
            if f"arrowmm_jvm {codec}" in r:
                ratio = r["parquet"] / r[f"arrowmm_jvm {codec}"]
                ok &= ratio >= 0.8
                lines.append(f"| {qname}, {codec} file | {r[f'arrowmm_jvm {codec}']:.3f} s | "
                             f"{r['parquet']:.3f} s | {ratio:.2f} | >= 0.8 | "
                             f"{'PASS' if ratio >= 0.8 else 'FAIL'} |")
    if filter_lines:
        lines += ["", *filter_lines]
        ok &= all("FAIL" not in line for line in filter_lines)
    table = "\n".join(lines)
    env = "\n".join(machine_lines(args.quick) + [
        f"- spark {version}, local[2], driver 2g, session start {start_s:.1f} s",
        f"- data: {cfg['batches']} batches x {cfg['rows']:,} rows (k int64 + 4 float64), "
        f"IPC {os.path.getsize(ipc) / 2**20:.0f} MiB (uncompressed), Parquet "
        f"{sum(p.stat().st_size for p in parquet.iterdir()) / 2**20:.0f} MiB (snappy)",
        f"- median of {cfg['rounds']} interleaved rounds after 1 warm-up round, planning included"])
    print(f"\n{env}\n\n(throughput ratio = Parquet time / arrowmm_jvm time, higher is better)\n\n{table}")
    if args.out:
        args.out.write_text(f"# arrowmm JVM reader vs Parquet\n\n{env}\n\n{table}\n")
    return 1 if args.strict and not ok else 0


def filter_benchmark(spark, args, cfg) -> list:
    """Query 1 with and without a filter the statistics narrow to 1% of the batches."""
    from pyspark.sql import functions as F
    from arrowmm.spark import JVM_FORMAT
    shape = FILTER_QUICK if args.quick else FILTER_FULL
    ipc, parquet = make_data(args.data_dir, shape["batches"], shape["rows"])
    first = shape["batches"] // 2 * shape["rows"]
    stop = first + shape["batches"] // 100 * shape["rows"]  # 1% of the batches
    q1 = [F.sum(c) for c in "abcd"] + [F.count("*")]
    narrow = (F.col("k") >= first) & (F.col("k") < stop)
    readers = {"arrowmm_jvm": lambda: spark.read.format(JVM_FORMAT).load(str(ipc)),
               "parquet": lambda: spark.read.parquet(str(parquet))}
    runs = {f"{r} {kind}": (make, kind) for r, make in readers.items() for kind in ("full", "1%")}
    times = {name: [] for name in runs}
    answers = {}
    for round_ in range(cfg["rounds"] + 1):  # round 0 warms up
        for name, (make, kind) in runs.items():
            t = time.perf_counter()
            df = make()
            answers[name] = tuple((df.filter(narrow) if kind == "1%" else df).agg(*q1).first())
            if round_:
                times[name].append(time.perf_counter() - t)
    assert answers["arrowmm_jvm 1%"][-1] == stop - first, answers
    for kind in ("full", "1%"):
        a, p = answers[f"arrowmm_jvm {kind}"], answers[f"parquet {kind}"]
        assert a[-1] == p[-1] and all(abs(x - y) <= 1e-9 * abs(y) for x, y in zip(a, p)), (a, p)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print("3. filter to 1% of batches", {n: f"{s:.3f} s" for n, s in med.items()}, flush=True)
    out = ["| query 1 on {} batches x {:,} rows | full scan | filter to 1% of the batches | "
           "speed-up | target | result |".format(shape["batches"], shape["rows"]),
           "|---|---:|---:|---:|---:|:---:|"]
    for r in readers:
        full, part = med[f"{r} full"], med[f"{r} 1%"]
        target = r == "arrowmm_jvm"
        verdict = ("PASS" if full / part >= 5 else "FAIL") if target else ""
        out.append(f"| {r} | {full:.3f} s | {part:.3f} s | {full / part:.1f}x | "
                   f"{'>= 5' if target else ''} | {verdict} |")
    return out


if __name__ == "__main__":
    sys.exit(main())
