"""Smoke tests of benchmarks/bench_read.py, bench_write.py, bench_interchange.py, bench_compression.py and bench_spark.py: the quick runs complete and report every benchmark.

No timing is asserted (machines are noisy); only that the script runs end to end,
exits 0, and prints (and writes with ``--out``) one table row per benchmark.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_read.py"
ROWS = ("| 1. open |", "| 2. random get_batch/column/to_numpy |",
        "| 3. full scan (sum 1 float64 column) |", "| 4. validate(full=True) string + list<int64> |")


def test_bench_read_quick(tmp_path):
    out = tmp_path / "bench.md"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    written = out.read_text()
    for row in ROWS:
        assert row in proc.stdout, f"no row {row!r} in:\n{proc.stdout}"
        assert row in written, f"no row {row!r} in {out}:\n{written}"
    assert "| benchmark | arrowmm | pyarrow | ratio | target | result |" in written


WRITE_SCRIPT = ROOT / "benchmarks" / "bench_write.py"
WRITE_ROWS = ("| 1. file write (uncompressed, from memory) |", "| 2. stream write (uncompressed, from memory) |",
              "| 3a. write-from-map: peak anonymous memory growth |", "| 3b. write-from-map: tracemalloc peak |",
              "| 3c. write-from-map: peak RSS growth |")


def test_bench_write_quick(tmp_path):
    out = tmp_path / "bench_write.md"
    proc = subprocess.run([sys.executable, str(WRITE_SCRIPT), "--quick", "--out", str(out),
                           "--data-dir", str(tmp_path / "data")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    written = out.read_text()
    for row in WRITE_ROWS:
        assert row in proc.stdout, f"no row {row!r} in:\n{proc.stdout}"
        assert row in written, f"no row {row!r} in {out}:\n{written}"
    assert "| benchmark | arrowmm | pyarrow | ratio | target | result |" in written
    assert not any((tmp_path / "data").iterdir()), "the benchmark left files behind"


SPARK_SCRIPT = ROOT / "benchmarks" / "bench_spark.py"
SPARK_ROWS = ("| 1. full scan vs Parquet |", "| 1. full scan vs pyarrow DS |",
              "| 2. selective vs Parquet (statistics prune) |")


def test_bench_spark_quick(tmp_path):
    pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
    out = tmp_path / "bench.md"
    proc = subprocess.run([sys.executable, str(SPARK_SCRIPT), "--quick", "--out", str(out),
                           "--data-dir", str(tmp_path / "data")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"
    written = out.read_text()
    for row in SPARK_ROWS:
        assert row in proc.stdout and row in written, f"no row {row!r} in:\n{proc.stdout}"


INTERCHANGE_SCRIPT = ROOT / "benchmarks" / "bench_interchange.py"
INTERCHANGE_ROWS = ("| 1. pyarrow.table(reader) |", "| 2. pyarrow.table(reader), small batches |",
                    "| 3. polars.DataFrame(reader) |")


def test_bench_interchange_quick(tmp_path):
    pytest.importorskip("polars")
    out = tmp_path / "bench_interchange.md"
    proc = subprocess.run([sys.executable, str(INTERCHANGE_SCRIPT), "--quick", "--out", str(out),
                           "--data-dir", str(tmp_path / "data")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    written = out.read_text()
    for row in INTERCHANGE_ROWS:
        assert row in proc.stdout, f"no row {row!r} in:\n{proc.stdout}"
        assert row in written, f"no row {row!r} in {out}:\n{written}"


COMPRESSION_SCRIPT = ROOT / "benchmarks" / "bench_compression.py"
COMPRESSION_ROWS = ("| 1a. full read, lz4 (materialise every column) |",
                    "| 1b. full read, zstd (materialise every column) |",
                    "| 2. one column of a 100-column lz4 file |",
                    "| 3a. compressed write, lz4 |", "| 3b. compressed write, zstd |")


def test_bench_compression_quick(tmp_path):
    out = tmp_path / "bench_compression.md"
    proc = subprocess.run([sys.executable, str(COMPRESSION_SCRIPT), "--quick", "--out", str(out),
                           "--data-dir", str(tmp_path / "data")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    written = out.read_text()
    for row in COMPRESSION_ROWS:
        assert row in proc.stdout, f"no row {row!r} in:\n{proc.stdout}"
        assert row in written, f"no row {row!r} in {out}:\n{written}"
    assert not list((tmp_path / "data").glob("w_*")), "the write benchmark left files behind"
