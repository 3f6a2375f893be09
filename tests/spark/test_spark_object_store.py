"""The Python data source on S3 (issue 30, item 6): ``format("arrowmm_python")`` on ``s3a://``
paths, through s3fs, against a moto server on loopback (``s3_support``).

Before, every ``s3a://`` path was refused at planning.  Now the source reads objects by byte
ranges and commits jobs with the protocol the JVM connector uses on S3 (docs/commit-protocol.md
§12): data files written in place under attempt-unique names, versions created only if absent
(a conditional PUT), so both engines can append to one directory at once.  One session for the
module, in its own JVM with hadoop-aws (the JVM connector's side of the race), configured with
the S3A settings that ``register`` hands to the Python source.
"""
from __future__ import annotations

import json
import re
import threading

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import commit
from arrowmm.spark.directory import Directory
from arrowmm.spark.storage import s3_options, storage_for
from tests.support.counting_proxy import CountingProxy
from tests.support.maven_support import s3a_jars
from tests.support.spark_cluster_support import (S3A_FOR_MOTO, frame, new_jvm, rows_of,
                                                 storage_session)

PY, JVM = "arrowmm_python", "arrowmm_jvm"


@pytest.fixture(scope="module")
def spark(tmp_path_factory, s3_server):
    session = storage_session(str(tmp_path_factory.mktemp("spark-s3-py")), jars=s3a_jars(),
                              **s3_server.spark_conf(), **S3A_FOR_MOTO)
    yield session
    new_jvm()


@pytest.fixture
def bucket(s3_server):
    return s3_server.new_bucket("arrowmm-py")


def keys(s3_server, bucket, prefix):
    """The bucket's keys under ``prefix`` (relative to it), listed by boto3."""
    pages = s3_server.client().get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"][len(prefix):] for page in pages for o in page.get("Contents", []))


def data_keys(s3_server, bucket, prefix):
    return [k for k in keys(s3_server, bucket, prefix) if k.endswith(".arrow")]


def test_round_trip_append_overwrite_land_in_the_bucket(spark, s3_server, bucket):
    target = f"s3a://{bucket}/t"
    frame(spark, 0, 1000).write.format(PY).mode("append").save(target)
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 0, 1000))
    first = data_keys(s3_server, bucket, "t/")
    assert first and all(re.fullmatch(r"part-0000[01]-[0-9a-f]{32}-0\.arrow", k) for k in first), \
        first  # (written in place: the attempt's final name)
    names = keys(s3_server, bucket, "t/")  # no temporary, no folder marker: data, log, _SUCCESS
    assert [k for k in names if not k.endswith(".arrow")] == [
        "_SUCCESS", "_arrowmm_log/00000000000000000000.json",
        "_arrowmm_log/00000000000000000001.json"], names
    client = s3_server.client()
    found = []
    for key in first:  # pyarrow reads what landed
        body = client.get_object(Bucket=bucket, Key=f"t/{key}")["Body"].read()
        table = pa.ipc.open_file(pa.BufferReader(body)).read_all()
        found += zip(*(table.column(c).to_pylist() for c in ("id", "x", "s")))
    assert sorted(found) == rows_of(frame(spark, 0, 1000))
    frame(spark, 1000, 500).write.format(PY).mode("append").save(target)
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 0, 1500))
    assert rows_of(spark.read.format(JVM).load(target)) == rows_of(frame(spark, 0, 1500))
    frame(spark, 5000, 200).write.format(PY).mode("overwrite").save(f"s3://{bucket}/t/")
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 5000, 200))
    last = data_keys(s3_server, bucket, "t/")
    assert not set(last) & set(first)  # the overwritten files are gone from the bucket
    listed = json.loads(client.get_object(Bucket=bucket, Key="t/_SUCCESS")["Body"].read())
    assert sorted(listed["files"]) == last and listed["version"] == 3


def test_both_engines_appending_at_once_lose_no_job(spark, bucket):
    target = f"s3a://{bucket}/race"
    frame(spark, 0, 10).write.format(PY).mode("append").save(target)
    errors = []

    def append(fmt, start):
        # (a Python thread is a JVM thread of its own, whose active session Spark's lookup of
        # Python data sources reads)
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        try:
            frame(spark, start, 300).write.format(fmt).mode("append").save(target)
        except Exception as exc:  # noqa: BLE001  (reported below, beside the other writers)
            errors.append((fmt, exc))

    writers = [threading.Thread(target=append, args=args)
               for args in ((PY, 100_000), (PY, 200_000), (JVM, 300_000))]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert errors == [], [(fmt, str(e)[:3000]) for fmt, e in errors]
    expected = rows_of(frame(spark, 0, 10))
    for start in (100_000, 200_000, 300_000):
        expected += rows_of(frame(spark, start, 300))
    assert rows_of(spark.read.format(PY).load(target)) == sorted(expected)
    assert rows_of(spark.read.format(JVM).load(target)) == sorted(expected)
    log = Directory(storage_for(target, s3_options(_s3a(spark))), target)
    assert log.versions() == list(range(5))  # one version per job, none lost, none twice


def _s3a(spark):
    from arrowmm.spark.paths import session_s3a
    return session_s3a(spark)


def test_a_failed_job_is_never_visible_and_leaves_no_object(spark, s3_server, bucket):
    """Task 1 fails once task 0 has uploaded its file (it waits for the object, so the order
    is fixed): the job's abort deletes that file, the failed task's upload makes no object."""
    target = f"s3a://{bucket}/fail"
    frame(spark, 0, 100).write.format(PY).mode("append").save(target)
    before = keys(s3_server, bucket, "fail/")
    options = dict(s3_server.storage_options)

    def fail_after_task_0(index, rows):
        yield from rows
        if index == 1:
            import time
            import s3fs
            fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False, **options)
            for _ in range(600):  # (a bound, not a timing: task 0 uploads in seconds)
                if [k for k in fs.ls(f"{bucket}/fail") if k.rsplit("/", 1)[-1].startswith(
                        "part-00000-") and k.rsplit("/", 1)[-1] not in before]:
                    break
                time.sleep(0.2)
            raise ValueError("task failure on purpose")
    failing = spark.createDataFrame(
        frame(spark, 1000, 2000).rdd.mapPartitionsWithIndex(fail_after_task_0),
        frame(spark, 0, 1).schema)
    with pytest.raises(Exception, match="task failure on purpose"):
        failing.write.format(PY).mode("append").save(target)
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 0, 100))
    assert keys(s3_server, bucket, "fail/") == before  # task 0's file was aborted
    uploads = s3_server.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert uploads == []


def test_a_crash_before_the_commit_point_is_never_seen_and_abort_removes_it(
        spark, s3_server, bucket, monkeypatch):
    """A committer that dies after its tasks wrote (in place, final names) and before its
    version is created: readers never see the files, the next job does not adopt them, and
    the job's abort deletes them."""
    target = f"s3a://{bucket}/crash"
    frame(spark, 0, 10).write.format(PY).mode("append").save(target)
    storage = storage_for(target, s3_options(_s3a(spark)))
    written = []
    for part in range(2):
        name = f"part-{part:05d}-crashed-0.arrow"
        with arrowmm.new_file(storage.sink(f"{target}/{name}"), arrowmm.record_batch(
                {"id": [0]}).schema, **storage.writer_options()) as w:
            w.write(arrowmm.record_batch({"id": [10_000 + part]}))
        written.append(type("Written", (), {"tmp": None, "name": name, "rows": 1})())

    def crash(point):
        if point == "renamed-all":
            raise SystemExit("killed")
    monkeypatch.setattr(commit, "_crash_point", crash)
    with pytest.raises(SystemExit):
        commit.commit_files(target, written, "crashed", overwrite=False, storage=storage)
    monkeypatch.undo()
    assert [k for k in data_keys(s3_server, bucket, "crash/") if "crashed" in k]
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 0, 10))
    frame(spark, 50, 5).write.format(PY).mode("append").save(target)  # does not adopt them
    assert rows_of(spark.read.format(PY).load(target)) == rows_of(frame(spark, 0, 10)) + \
        rows_of(frame(spark, 50, 5))
    assert sorted(commit.abort_job(target, "crashed", storage)) == [w.name for w in written]
    assert not [k for k in keys(s3_server, bucket, "crash/") if "crashed" in k]


def test_reads_fetch_byte_ranges_not_whole_objects(spark, s3_server, bucket):
    """A 1%-selective filter with pushdown reads the footer and one batch of a 60-batch
    object: every GET of it is a range, and together they fetch a small part of it."""
    table = pa.table({"id": pa.array(range(60_000), pa.int64()),
                      "v": pa.array([i * 0.5 for i in range(60_000)], pa.float64())})
    storage = storage_for(f"s3a://{bucket}/r", s3_options(_s3a(spark)))
    with arrowmm.new_file(storage.sink(f"s3a://{bucket}/r/data.arrow"), table.schema,
                          statistics=True, **storage.writer_options()) as w:
        for batch in table.to_batches(max_chunksize=1000):
            w.write(batch)
    size = s3_server.client().head_object(Bucket=bucket, Key="r/data.arrow")["ContentLength"]
    with CountingProxy(s3_server.endpoint_url) as proxy:
        through = json.dumps({"client_kwargs": {"endpoint_url": proxy.endpoint_url}})
        df = (spark.read.format(PY).option("storage_options", through)
              .option("pushdown", "true").load(f"s3a://{bucket}/r").filter("id = 31234"))
        assert [tuple(r) for r in df.collect()] == [(31234, 15617.0)]
        gets = proxy.requests("GET", f"/{bucket}/r/data.arrow")
    assert gets and all(g.range for g in gets), gets  # (the option's endpoint was used)
    fetched = sum(g.body_bytes for g in gets)
    assert fetched < size / 10, (fetched, size, gets)


def test_hadoop_filesystems_are_refused_at_planning_naming_the_jvm_connector(spark):
    for uri in ("hdfs://nn/x", "viewfs://cluster/x"):
        with pytest.raises(Exception, match=r"unsupported scheme.*arrowmm_jvm"):
            spark.range(2).write.format(PY).mode("append").save(uri)
        with pytest.raises(Exception, match=r"unsupported scheme.*arrowmm_jvm"):
            spark.read.format(PY).load(uri).collect()


def test_hadoop_s3a_settings_become_s3fs_options():
    assert s3_options({"fs.s3a.endpoint": "minio:9000", "fs.s3a.connection.ssl.enabled": "false",
                       "fs.s3a.path.style.access": "true", "fs.s3a.access.key": "a",
                       "fs.s3a.secret.key": "s", "fs.s3a.session.token": "t",
                       "fs.s3a.endpoint.region": "eu-west-1"}) == {
        "client_kwargs": {"endpoint_url": "http://minio:9000", "region_name": "eu-west-1"},
        "use_ssl": False, "key": "a", "secret": "s", "token": "t",
        "config_kwargs": {"s3": {"addressing_style": "path"}}}
    assert s3_options({"fs.s3a.endpoint": "s3.example.com"}) == {
        "client_kwargs": {"endpoint_url": "https://s3.example.com"}}
    assert s3_options({}) == {}  # (s3fs then reads the AWS_* variables, as boto does)


def test_an_object_overwritten_since_planning_is_refused(s3_server, bucket):
    # (review, session 43: an object store source had no identity, so a task read the plan's
    # batches in the new object: "x >= 12" planned over [10]..[13] gave [22, 23]; now the plan
    # keeps the object's ETag)
    import io
    from arrowmm.spark.files import describe_file
    from arrowmm.spark.planning import plan_pieces, read_piece

    def data(base):
        buf = io.BytesIO()
        with arrowmm.new_file(buf, arrowmm.schema([("x", arrowmm.int64())]),
                              statistics=True) as w:
            for i in range(4):
                w.write({"x": [base + i]})
        return buf.getvalue()

    client, path, opts = s3_server.client(), f"s3://{bucket}/t/a.arrow", s3_server.storage_options
    client.put_object(Bucket=bucket, Key="t/a.arrow", Body=data(10))
    info = describe_file(path, storage=storage_for(path, opts))
    assert info.identity is not None

    def keep(f, b):
        return info.batches[b].stats["x"]["max"] >= 12
    pieces = [piece for part in plan_pieces([info], keep, 1 << 30, 0) for piece in part]
    assert [b.column("x").to_pylist()[0] for piece in pieces
            for b in read_piece(piece, storage_options=opts)] == [12, 13]
    client.put_object(Bucket=bucket, Key="t/a.arrow", Body=data(20))
    with pytest.raises(arrowmm.ArrowInvalid, match="replaced since this read was planned"):
        [b for piece in pieces for b in read_piece(piece, storage_options=opts)]
