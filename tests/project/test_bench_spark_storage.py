"""The parts of ``benchmarks/bench_spark_storage.py`` that run without Spark: its inputs, its
moto server and its uploads, and its command line.

Its ``--quick`` run is not in the suite: a Spark session with S3A's jars alone starts in
30-120 s on a loaded 2-core machine, and the run took 7.5 min at load 10-14 (the suite's
budget for a benchmark smoke test is under a minute).  Run it by hand:
``python benchmarks/bench_spark_storage.py --quick``.
"""
from __future__ import annotations

import bench_spark_storage as bench  # (benchmarks/ is on pytest's pythonpath)
import pytest

import arrowmm


def test_unknown_filesystem_is_refused_naming_the_known_ones(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--filesystems", "s3,gcs"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown ['gcs']" in err and "hdfs, s3" in err, err


def test_small_files_are_the_same_rows_in_both_formats(tmp_path):
    import pyarrow.parquet as pq
    ipc, parquet = bench.small_files(tmp_path, 3, 10)
    names = sorted(p.name for p in ipc.iterdir())
    assert names == ["part-00000.arrow", "part-00001.arrow", "part-00002.arrow"]
    for i, name in enumerate(names):
        with arrowmm.open_file(str(ipc / name)) as r:
            got = r.read_all().to_pydict()
        assert got["k"] == list(range(i * 10, (i + 1) * 10))
        assert got == pq.read_table(parquet / name.replace(".arrow", ".parquet")).to_pydict()
    assert bench.small_files(tmp_path, 3, 10) == (ipc, parquet)  # cached by shape


def test_moto_process_takes_uploads_and_ends_with_its_stdin(tmp_path):
    pytest.importorskip("moto.server", reason="moto[server] is in the test extra")
    pytest.importorskip("boto3", reason="boto3 (s3fs[boto3]) is in the test extra")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"a" * 1000)
    (folder / "b.bin").write_bytes(b"b" * 10)
    (tmp_path / "one.bin").write_bytes(b"one")
    moto = bench.MotoProcess(tmp_path / "moto.log")
    try:
        bucket = moto.server.new_bucket("bench-test")
        bench.copy_up(None, folder, f"s3a://{bucket}/x/dir", moto.server)
        bench.copy_up(None, tmp_path / "one.bin", f"s3a://{bucket}/x/one", moto.server)
        listed = moto.server.client().list_objects_v2(Bucket=bucket, Prefix="x/")
        assert {o["Key"]: o["Size"] for o in listed["Contents"]} == {
            "x/dir/a.bin": 1000, "x/dir/b.bin": 10, "x/one": 3}
    finally:
        moto.stop()
    assert moto.proc.returncode is not None
