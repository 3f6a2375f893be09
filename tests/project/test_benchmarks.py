"""Smoke tests of the benchmark scripts in benchmarks/: each quick run completes and reports every benchmark.

No timing is asserted (machines are noisy); only that the script runs end to end,
exits 0, and prints (and writes with ``--out``) one table row per benchmark, and that
it leaves no data files behind where it promises not to.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[2]
PYARROW_HEADER = "| benchmark | arrowmm | pyarrow | ratio | target | result |"

# script -> (rows its table must have, module it needs, whether it takes --data-dir, leftovers glob)
SCRIPTS = {
    "bench_append.py": (("| 1. append 1 batch (64 KiB) to a 10 MB file |",
                         "| 2. append 1 batch (64 KiB) to a 100 MB file |",
                         "| 3. growth: arrowmm append, 100 MB file vs 10 MB file |",
                         "| 4. growth: arrowmm append + fsync, 100 MB file vs 10 MB file |",
                         PYARROW_HEADER), None, True, "*"),
    "bench_read.py": (("| 1. open |", "| 2. random get_batch/column/to_numpy |",
                       "| 3. full scan (sum 1 float64 column) |",
                       "| 4. validate(full=True) string + list<int64> |", PYARROW_HEADER),
                      None, False, None),
    "bench_write.py": (("| 1. file write (uncompressed, from memory) |",
                        "| 2. stream write (uncompressed, from memory) |",
                        "| 3a. write-from-map: peak anonymous memory growth |",
                        "| 3b. write-from-map: tracemalloc peak |",
                        "| 3c. write-from-map: peak RSS growth |", PYARROW_HEADER),
                       None, True, "*"),
    "bench_compression.py": (("| 1a. full read, lz4 (materialise every column) |",
                              "| 1b. full read, zstd (materialise every column) |",
                              "| 2. one column of a 100-column lz4 file |",
                              "| 3a. compressed write, lz4 |", "| 3b. compressed write, zstd |"),
                             None, True, "w_*"),
    "bench_interchange.py": (("| 1. pyarrow.table(reader) |",
                              "| 2. pyarrow.table(reader), small batches |",
                              "| 3. polars.DataFrame(reader) |"),
                             "polars", True, None),
    "bench_dataset.py": (("| 1. selective filter (statistics prune 99%) |", "| 2. count_rows |",
                          "| 3. one column of 100 (columns=) |",
                          "| 4. one column of 100 through a file object |",
                          "| 5. threaded scan, reads of 2 ms (vs use_threads=False) |",
                          PYARROW_HEADER), None, True, None),
    "bench_filter.py": (("| 1. x > 0.99, columns x, y, 0.04M rows, plain |", PYARROW_HEADER),
                        None, True, None),
    "bench_object_store.py": (("| 1. open + 2 of 10 columns of 3 random batches |",
                               "| 1b. the same, pyarrow through the same s3fs file |",
                               "| 2. full read (every column of every batch) |", PYARROW_HEADER),
                              "moto", True, None),
    "bench_limits.py": (("| 1a. wide-schema open, 10,000 fields |",
                         "| 1b. wide-schema open, 100,000 fields |",
                         "| 1c. wide-schema open, 10,000 struct<a: int8> fields |",
                         "| 1d. wide-schema open, 10,000 dictionary<int32, string> fields |",
                         "| 1e. wide-schema open, 10,000 int8 + field metadata fields |",
                         "| 1h. wide-schema open, 100,000 int8 + field metadata fields |",
                         "| 1i. every field after the open, 10,000 int8 fields |",
                         "| 2. high-ratio zstd decode |",
                         "| 3. cold high-ratio zstd decode |", PYARROW_HEADER), None, True, None),
    "bench_paths.py": (("| 1a. pyarrow.table(reader), zstd |", "| 1b. pyarrow.table(reader), lz4 |",
                        "| 2. every column one at a time, zstd |",
                        "| 2b. every column of every batch, in batch order, zstd |",
                        "| 2c. every column of every batch, in batch order, lz4 |",
                        "| 3. uncompressed stream from a pipe |",
                        "| 4. 100 columns of a random batch to numpy |",
                        "| 5. open a 100-column file + schema (repeated) |",
                        "| 6. to_pandas() of strings, 1,000 distinct |",
                        "| 7. open a file of 10,000 fields |",
                        "| 8. to_pandas() of 5,000 batches of 10 rows |", PYARROW_HEADER,
                        "| benchmark | arrowmm | polars | arrowmm/polars | duckdb | arrowmm/duckdb "
                        "| ceiling | arrowmm's share | the ceiling |"),
                       "pandas", True, None),
    "bench_cast.py": (("| 1. int8 -> string, 0.02M |", "| 17. string -> double, 0.02M |",
                       "| 36. bool -> int64, 0.02M, 10% nulls |", PYARROW_HEADER), None, True, None),
    "bench_shm.py": (("| 1. hand-off: write segment + worker sum |", "| 2. consume: worker maps + sums |",
                      "| 3. pickle-by-name vs pickled pyarrow table |",
                      "| 4a. channel vs arrowmm stream over a pipe |",
                      "| 4b. channel vs pyarrow stream over a pipe |",
                      "| 4c. channel vs multiprocessing.Queue of pyarrow batches |",
                      "| 5. small batch one-way latency (median) vs pyarrow pipe |", PYARROW_HEADER),
                     None, False, None),
    "bench_spark.py": (("| 1. full scan vs Parquet |", "| 1. full scan vs pyarrow DS |",
                        "| 2. selective vs Parquet (statistics prune) |"),
                       "pyspark", True, None),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_benchmark_quick_run(tmp_path, script):
    rows, needs, _, leftovers = SCRIPTS[script]
    if needs:
        pytest.importorskip(needs, reason=f"{needs} is in the test extras; install them")
    out = tmp_path / "bench.md"
    cmd = [sys.executable, str(ROOT / "benchmarks" / script), "--quick", "--out", str(out)]
    # every script takes --data-dir; pointing all of them at tmp_path keeps benchmarks/data/ empty
    cmd += ["--data-dir", str(tmp_path / "data")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"
    written = out.read_text()
    for row in rows:
        assert row in proc.stdout, f"no row {row!r} in:\n{proc.stdout}"
        assert row in written, f"no row {row!r} in {out}:\n{written}"
    if leftovers:
        assert not list((tmp_path / "data").glob(leftovers)), "the benchmark left files behind"
