"""The JVM connector on Hadoop filesystems other than ``file:`` (issue 30, items 1-4).

Before, every path that was not a local file was refused at planning (``LocalPaths``), and
before that written to the wrong place.  Now a path of any filesystem Hadoop has a class for is
read and written through ``org.apache.hadoop.fs.FileSystem`` (``HadoopStorage``): here
``lfs:`` (Hadoop's ``RawLocalFileSystem`` under its own scheme) and a ``viewfs://`` mount table
over a local folder, both without servers, so the bytes can be checked on disk.  Reads are
compared with pyarrow; a projection reads only its columns (counted by Hadoop's statistics);
damaged files fail as local ones do; writes keep the commit protocol (docs/commit-protocol.md)
with the final names written directly; concurrent writers lose no job; a failed job leaves
nothing visible; local paths still take java.nio, not Hadoop.  One session for the module.
"""
from __future__ import annotations

import glob
import json
import os
import threading

import pyarrow as pa
import pyarrow.ipc  # noqa: F401  (pa.ipc, loaded)
import pytest

from arrowmm.spark import jar as jvm_jar
from tests.support import hadoop_test_filesystems as hfs

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.FORMAT
#: The test filesystems' jar when the session had to add it with ADD JAR (a JVM an earlier
#: module started): each Python thread's JVM thread then needs it added too (ADD JAR sets the
#: calling thread's context class loader, where Hadoop's Configuration finds fs.lfs.impl).
ADDED_JARS = []


@pytest.fixture(scope="module")
def view_root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("viewfs-data"))


@pytest.fixture(scope="module", name="spark")
def hadoop_spark(tmp_path_factory, view_root):
    from pyspark import SparkContext
    from arrowmm.spark.session import local_session
    folder = str(tmp_path_factory.mktemp("spark"))
    test_jar = hfs.build_test_jar(str(tmp_path_factory.mktemp("testfs")))
    jvm_running = SparkContext._gateway is not None
    session = local_session("local[2]", "arrowmm-jvm-hadoop-tests", folder, jvm=True,
                            **{"spark.default.parallelism": "2"},
                            **hfs.session_conf(test_jar, view_root))
    if jvm_running:  # (the class path is fixed at JVM start: add both jars to this session)
        ADDED_JARS[:] = [jvm_jar.jar_path(), test_jar]
        for jar in ADDED_JARS:
            session.sql(f"ADD JAR '{jar}'")
    for key, value in hfs.session_conf(test_jar, view_root).items():
        if key.startswith("spark__hadoop__"):
            session.conf.set(key[len("spark__hadoop__"):].replace("__", "."), value)
    yield session
    session.stop()


def _table(n=60_000, batches=4):
    import pyarrow.compute as pc
    ids = pa.array(range(n), pa.int64())
    table = pa.table({
        "id": ids,
        "a": pc.multiply(ids, 0.5),
        "b": pc.multiply(ids, 2.0),
        "c": pc.multiply(ids, 3.0),
        "s": pa.array([None if i % 7 == 0 else f"v{i}" for i in range(n)], pa.string()),
    })
    return table, n // batches


def _write_arrow(path, table, chunk):
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=chunk)


def _rows(df, key="id"):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: r[key])


def test_reads_a_pyarrow_file_through_lfs_and_viewfs_as_pyarrow_does(spark, tmp_path, view_root):
    table, chunk = _table()
    _write_arrow(tmp_path / "t.arrow", table, chunk)
    os.makedirs(os.path.join(view_root, "r"), exist_ok=True)
    _write_arrow(os.path.join(view_root, "r", "t.arrow"), table, chunk)
    want = sorted(table.to_pylist(), key=lambda r: r["id"])
    for uri in (f"lfs://{tmp_path}/t.arrow", f"lfs://{tmp_path}", f"lfs://{tmp_path}/*.arrow",
                "viewfs://cluster/data/r/t.arrow", "viewfs://cluster/data/r"):
        df = spark.read.format(FMT).load(uri)
        assert df.columns == table.column_names, uri
        assert _rows(df) == want, uri
        # a filter and a projection too (footer statistics are pyarrow's none: all batches)
        got = df.where("id >= 59990").select("id", "s").collect()
        assert sorted((r.id, r.s) for r in got) == [
            (i, None if i % 7 == 0 else f"v{i}") for i in range(59990, 60000)], uri


def test_a_projection_reads_only_its_columns(spark, tmp_path):
    """Buffers of other columns are never read: 1 of 5 float64 columns (800 KB per column and
    batch: the gaps between one column's buffers are wider than the coalescing gap) reads
    that column, the batch headers and the footer; all columns read the whole file."""
    import pyarrow.compute as pc
    n = 400_000
    ids = pa.array(range(n), pa.int64())
    table = pa.table({k: pc.multiply(ids, float(i + 1)) for i, k in enumerate("abcde")})
    _write_arrow(tmp_path / "w.arrow", table, 100_000)  # 800 KB per column and batch
    size = os.path.getsize(tmp_path / "w.arrow")
    uri = f"lfs://{tmp_path}/w.arrow"
    df = spark.read.format(FMT).load(uri)
    before = hfs.bytes_read(spark, "lfs")
    assert df.select("c").agg({"c": "sum"}).collect()[0][0] == 3.0 * n * (n - 1) / 2
    one = hfs.bytes_read(spark, "lfs") - before
    before = hfs.bytes_read(spark, "lfs")
    df.selectExpr("sum(a)", "sum(b)", "sum(c)", "sum(d)", "sum(e)").collect()
    every = hfs.bytes_read(spark, "lfs") - before
    column = 8 * n
    assert column <= one < column + size // 10, (one, column, size)
    assert every >= size * 0.9, (every, size)


def test_damaged_files_fail_through_hadoop_as_they_do_locally(spark, tmp_path):
    table, chunk = _table(2000, 2)
    _write_arrow(tmp_path / "good.arrow", table, chunk)
    data = (tmp_path / "good.arrow").read_bytes()
    cases = {
        "truncated.arrow": data[: len(data) - 7],
        "empty.arrow": b"",
        "zeros.arrow": bytes(len(data)),
        "cut-footer.arrow": data[:-10] + (10 ** 6).to_bytes(4, "little") + data[-6:],
    }
    for name, blob in cases.items():
        folder = tmp_path / name.split(".")[0]
        folder.mkdir()
        (folder / name).write_bytes(blob)
        errors = []
        for uri in (str(folder / name), f"lfs://{folder}/{name}"):
            with pytest.raises(Exception) as info:
                spark.read.format(FMT).load(uri).collect()
            text = str(info.value)
            errors.append(text[text.index(name) + len(name):].split("\n")[0])
        assert errors[0] == errors[1], (name, errors)


def test_a_batch_damaged_inside_fails_through_hadoop_as_locally(spark, tmp_path):
    """A buffer that points past its body (the footer intact) is refused by the same check,
    before anything is read from the coalesced ranges."""
    table, chunk = _table(2000, 2)
    _write_arrow(tmp_path / "d.arrow", table, chunk)
    data = bytearray((tmp_path / "d.arrow").read_bytes())
    with pa.ipc.open_file(str(tmp_path / "d.arrow")) as r:
        batch = r.get_batch(0)
    # the int64 data buffer of column 'id' in batch 0 has length 8*1000: make it 8*1000*1000
    needle = (8 * len(batch)).to_bytes(8, "little")
    at = bytes(data).index(needle)
    data[at:at + 8] = (8 * 10 ** 9).to_bytes(8, "little")
    (tmp_path / "d.arrow").write_bytes(bytes(data))
    texts = []
    for uri in (str(tmp_path / "d.arrow"), f"lfs://{tmp_path}/d.arrow"):
        with pytest.raises(Exception) as info:
            spark.read.format(FMT).load(uri).select("id").collect()
        text = str(info.value)
        assert "record batch 0" in text, text
        texts.append(text[text.index("d.arrow: record batch"):].split("\n")[0])
    assert texts[0] == texts[1]


def _log(folder):
    return sorted(os.listdir(os.path.join(folder, "_arrowmm_log")))


def _committed(folder):
    log = os.path.join(folder, "_arrowmm_log")
    latest = sorted(n for n in os.listdir(log) if n.endswith(".json"))[-1]
    with open(os.path.join(log, latest)) as f:
        return json.load(f)


def test_writes_land_where_named_and_keep_the_protocol(spark, tmp_path, view_root):
    target = tmp_path / "out"
    spark.range(0, 100, numPartitions=3).write.format(FMT).mode("overwrite").save(f"lfs://{target}")
    doc = _committed(target)
    assert doc["version"] == 1 and doc["operation"] == "overwrite" and len(doc["files"]) == 3
    on_disk = sorted(n for n in os.listdir(target) if n.endswith(".arrow"))
    assert on_disk == sorted(doc["files"])  # written under their final names: no temporaries
    assert not [n for n in os.listdir(target) if n.startswith(".") and "arrowmm" in n]
    ids = []
    for name in on_disk:  # the bytes are Arrow IPC files pyarrow reads
        with pa.ipc.open_file(str(target / name)) as r:
            ids += r.read_all().column("id").to_pylist()
    assert sorted(ids) == list(range(100))
    spark.range(100, 110, numPartitions=1).write.format(FMT).mode("append").save(f"lfs://{target}")
    assert _committed(target)["version"] == 2 and len(_committed(target)["files"]) == 4
    assert sorted(r.id for r in spark.read.format(FMT).load(f"lfs://{target}").collect()) \
        == list(range(110))
    assert sorted(r.id for r in spark.read.format(FMT).load(str(target)).collect()) \
        == list(range(110))  # the same directory, read locally
    spark.range(0, 5, numPartitions=1).write.format(FMT).mode("overwrite").save(f"lfs://{target}")
    assert sorted(r.id for r in spark.read.format(FMT).load(f"lfs://{target}").collect()) \
        == list(range(5))
    assert len([n for n in os.listdir(target) if n.endswith(".arrow")]) == 1  # replaced: gone
    with open(target / "_SUCCESS") as f:
        assert json.load(f)["version"] == 3
    with pytest.raises(Exception, match="already exists"):
        spark.range(1).write.format(FMT).mode("errorifexists").save(f"lfs://{target}")
    spark.range(1).write.format(FMT).mode("ignore").save(f"lfs://{target}")
    assert spark.read.format(FMT).load(f"lfs://{target}").count() == 5
    # through the viewfs mount table, into the local folder it names
    spark.range(7).write.format(FMT).mode("overwrite").save("viewfs://cluster/data/w")
    assert _committed(os.path.join(view_root, "w"))["files"]
    assert spark.read.format(FMT).load(os.path.join(view_root, "w")).count() == 7
    assert spark.read.format(FMT).load("viewfs://cluster/data/w").count() == 7


def test_concurrent_writers_through_hadoop_lose_no_job(spark, tmp_path):
    target = f"lfs://{tmp_path}/race"
    spark.range(1).write.format(FMT).mode("append").save(target)
    errors = []

    def job(k):
        try:
            for jar in ADDED_JARS:
                spark.sql(f"ADD JAR '{jar}'")
            for j in range(3):
                spark.range(1000 * (k * 10 + j + 1), 1000 * (k * 10 + j + 1) + 10,
                            numPartitions=2).write.format(FMT).mode("append").save(target)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=job, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    got = sorted(r.id for r in spark.read.format(FMT).load(target).collect())
    want = [0] + sorted(i for k in range(3) for j in range(3)
                        for i in range(1000 * (k * 10 + j + 1), 1000 * (k * 10 + j + 1) + 10))
    assert got == want
    assert _committed(f"{tmp_path}/race")["version"] == 10


def test_a_failed_job_leaves_nothing_visible(spark, tmp_path):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    @F.udf(LongType())
    def boom(x):
        if x == 57:
            raise ValueError("boom at 57")
        return x

    fresh = tmp_path / "fresh"
    with pytest.raises(Exception, match="boom at 57"):
        spark.range(100, numPartitions=2).select(boom("id").alias("id")) \
            .write.format(FMT).mode("append").save(f"lfs://{fresh}")
    # a failed first write leaves the path as it found it: absent (no empty log)
    assert not fresh.exists(), os.listdir(fresh)
    spark.range(3).write.format(FMT).mode("errorifexists").save(f"lfs://{fresh}")
    assert spark.read.format(FMT).load(f"lfs://{fresh}").count() == 3
    before = sorted(os.listdir(fresh))
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match="boom at 57"):
            spark.range(100, numPartitions=2).select(boom("id").alias("id")) \
                .write.format(FMT).mode(mode).save(f"lfs://{fresh}")
        assert sorted(os.listdir(fresh)) == before, mode  # no file of the failed job is left
        assert sorted(r.id for r in spark.read.format(FMT).load(f"lfs://{fresh}").collect()) \
            == [0, 1, 2]


def test_a_filesystem_without_an_atomic_create_is_refused_for_writes(spark, tmp_path):
    table, chunk = _table(100, 1)
    _write_arrow(tmp_path / "t.arrow", table, chunk)
    assert spark.read.format(FMT).load(f"nofs://{tmp_path}/t.arrow").count() == 100  # reads work
    for mode in ("append", "overwrite", "errorifexists"):
        with pytest.raises(Exception, match="cannot commit writes to this filesystem") as info:
            spark.range(3).write.format(FMT).mode(mode).save(f"nofs://{tmp_path}/w")
        assert "conditional create" in str(info.value) and "atomic rename" in str(info.value)
        assert not (tmp_path / "w").exists()


def test_an_unknown_scheme_is_refused_at_planning_naming_it(spark, tmp_path):
    for action in ("read", "write"):
        with pytest.raises(Exception) as info:
            if action == "read":
                spark.read.format(FMT).load("nosuch://bucket/x").collect()
            else:
                spark.range(2).write.format(FMT).mode("append").save("nosuch://bucket/x")
        text = str(info.value)
        assert "unsupported scheme 'nosuch'" in text and "No FileSystem for scheme" in text, text
        assert "does not exist" not in text


def test_local_paths_do_not_go_through_hadoop(spark, tmp_path):
    """Local reads and writes keep java.nio (the positioned reads of FileChannel): Hadoop's
    file: statistics do not move, where Parquet's reads of the same folder move them."""
    table, chunk = _table(20_000, 2)
    _write_arrow(tmp_path / "t.arrow", table, chunk)
    start = hfs.bytes_read(spark, "file")
    assert spark.read.format(FMT).load(str(tmp_path / "t.arrow")).count() == 20_000
    assert sum(r.a for r in spark.read.format(FMT).load(f"file://{tmp_path}/t.arrow")
               .select("a").collect()) == 0.5 * 20_000 * 19_999 / 2
    spark.range(50).write.format(FMT).mode("overwrite").save(str(tmp_path / "w"))
    assert spark.read.format(FMT).load(str(tmp_path / "w")).count() == 50
    assert hfs.bytes_read(spark, "file") == start
    assert glob.glob(str(tmp_path / "w" / "part-*.arrow"))
    spark.range(50).write.mode("overwrite").parquet(str(tmp_path / "p"))
    assert spark.read.parquet(str(tmp_path / "p")).count() == 50
    assert hfs.bytes_read(spark, "file") > start  # (the counter does count Hadoop's reads)
