"""The JVM connector on S3 through S3A (issue 30): a moto server on loopback (``s3_support``),
hadoop-aws 3.5.0 and the AWS SDK modules S3A uses (resolved by Maven, ``maven_support``) on the
class path of one session in its own JVM.

Parquet's round trip proves the endpoint, the jars and the settings; the rest is what the
issue asks of ``format("arrowmm")`` on an object store: writes land in the bucket (listed and
fetched with boto3, parsed by pyarrow), a pyarrow-written object reads as pyarrow reads it,
projection, append, overwrite, and two writers at once losing no row (no rename, no hard link
on S3: the commit protocol's case).  Requests are counted at the server (S3A's statistics do
not see the GETs of its analytics stream, the default since Hadoop 3.5): a scan asks for the
selected columns' bytes and the batches' metadata, no other column's.  An object overwritten
after the query was planned fails the scan (its ETag is not the planned one) instead of
reading the new object's batches at the old footer's offsets.
"""
from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from tests.support.maven_support import s3a_jars
from tests.support.spark_cluster_support import (S3A_FOR_MOTO, frame, new_jvm, rows_of,
                                                 storage_session)


@pytest.fixture(scope="module")
def spark(tmp_path_factory, s3_server):
    session = storage_session(str(tmp_path_factory.mktemp("spark-s3")), jars=s3a_jars(),
                              **s3_server.spark_conf(), **S3A_FOR_MOTO)
    yield session
    new_jvm()


@pytest.fixture
def bucket(s3_server):
    return s3_server.new_bucket("arrowmm-jvm")


def objects(s3_server, bucket, prefix):
    """The bucket's keys under ``prefix`` and their sizes, listed by boto3."""
    pages = s3_server.client().get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=prefix)
    return {o["Key"][len(prefix):]: o["Size"] for page in pages for o in page.get("Contents", [])}


def test_parquet_round_trip_proves_the_endpoint(spark, s3_server, bucket):
    frame(spark).write.parquet(f"s3a://{bucket}/p")
    assert rows_of(spark.read.parquet(f"s3a://{bucket}/p")) == rows_of(frame(spark))
    assert [k for k in objects(s3_server, bucket, "p/") if k.endswith(".parquet")]


def test_arrowmm_write_lands_in_the_bucket_and_reads_back(spark, s3_server, bucket):
    frame(spark).write.format("arrowmm").save(f"s3a://{bucket}/a")
    assert rows_of(spark.read.format("arrowmm").load(f"s3a://{bucket}/a")) == rows_of(frame(spark))
    keys = sorted(k for k in objects(s3_server, bucket, "a/") if k.endswith(".arrow"))
    assert keys, objects(s3_server, bucket, "a/")
    client = s3_server.client()
    found = []
    for key in keys:
        body = client.get_object(Bucket=bucket, Key=f"a/{key}")["Body"].read()
        table = pa.ipc.open_file(pa.BufferReader(body)).read_all()
        found += zip(*(table.column(c).to_pylist() for c in ("id", "x", "s")))
    assert sorted(found) == rows_of(frame(spark))


def test_pyarrow_object_reads_as_pyarrow_reads_it(spark, s3_server, bucket):
    table = pa.table({"k": pa.array(range(1000), pa.int64()),
                      "v": pa.array([i / 4 for i in range(1000)], pa.float64()),
                      "t": pa.array([None if i % 5 == 0 else f"t{i}" for i in range(1000)]),
                      "small": pa.array([i % 100 for i in range(1000)], pa.int32())})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=300):
            w.write_batch(batch)
    s3_server.client().put_object(Bucket=bucket, Key="in/pyarrow.arrow",
                                  Body=sink.getvalue().to_pybytes())
    for path in (f"s3a://{bucket}/in/pyarrow.arrow", f"s3a://{bucket}/in"):
        df = spark.read.format("arrowmm").load(path)
        assert df.columns == ["k", "v", "t", "small"]
        expected = sorted(zip(*(table.column(c).to_pylist() for c in df.columns)))
        assert sorted(tuple(r) for r in df.collect()) == expected


def test_projection_reads_the_selected_column(spark, bucket):
    target = f"s3a://{bucket}/proj"
    frame(spark).write.format("arrowmm").save(target)
    df = spark.read.format("arrowmm").load(target).select("x")
    assert df.columns == ["x"]
    assert sorted(r.x for r in df.collect()) == sorted(r.x for r in frame(spark).collect())
    assert "columns struct<x:double>" in df._jdf.queryExecution().executedPlan().toString()


def test_append_then_overwrite(spark, bucket):
    target = f"s3a://{bucket}/grow"
    frame(spark, 0, 1000).write.format("arrowmm").save(target)
    frame(spark, 1000, 500).write.format("arrowmm").mode("append").save(target)
    assert rows_of(spark.read.format("arrowmm").load(target)) == rows_of(frame(spark, 0, 1500))
    frame(spark, 5000, 200).write.format("arrowmm").mode("overwrite").save(target)
    assert rows_of(spark.read.format("arrowmm").load(target)) == rows_of(frame(spark, 5000, 200))


def test_two_writers_at_once_lose_no_row(spark, bucket):
    target = f"s3a://{bucket}/race"
    frame(spark, 0, 10).write.format("arrowmm").save(target)
    errors = []

    def append(start):
        try:
            frame(spark, start, 2000).write.format("arrowmm").mode("append").save(target)
        except Exception as exc:  # noqa: BLE001  (reported below, beside the other writer)
            errors.append(exc)

    writers = [threading.Thread(target=append, args=(start,)) for start in (100_000, 200_000)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert errors == []
    expected = rows_of(frame(spark, 0, 10)) + rows_of(frame(spark, 100_000, 2000)) + rows_of(
        frame(spark, 200_000, 2000))
    assert rows_of(spark.read.format("arrowmm").load(target)) == sorted(expected)



@pytest.fixture
def served(monkeypatch):
    """Every object request the moto server answers from now on, as (method, key, first byte,
    bytes) with the byte range its Range header asks for (the whole object without one):
    counted at the server, whatever S3A's input stream (classic or the analytics
    accelerator, whose GETs S3A's own statistics do not count) sends."""
    from moto.s3.responses import S3Response
    seen = []
    answer = S3Response.key_response

    def key_response(self, request, full_url, headers):
        out = answer(self, request, full_url, headers)
        wanted = request.headers.get("range") or ""
        first, _, last = wanted.partition("=")[2].partition("-")
        body = out[2] if isinstance(out[2], (bytes, str)) else b""
        seen.append((request.method, request.path, int(first or 0), len(body)))
        return out

    monkeypatch.setattr(S3Response, "key_response", key_response)
    return seen


def _floats(batches, rows):
    """k int64 and a, b, c, d float64, in ``batches`` batches of ``rows`` rows (IPC bytes)."""
    import numpy as np
    rng = np.random.default_rng(30)
    table = pa.table({"k": pa.array(np.arange(batches * rows)),
                      **{c: pa.array(rng.random(batches * rows)) for c in "abcd"}})
    return table, _ipc_bytes(table, rows)


def test_scans_ask_the_server_for_the_selected_bytes(spark, s3_server, bucket, served):
    from pyspark.sql import functions as F
    batches, rows = 8, 131_072  # 1 MiB per column and batch
    table, data = _floats(batches, rows)
    column = 8 * rows
    for aggs, selected in (([F.sum(c) for c in "abcd"] + [F.count("*")], "abcd"),
                           ([F.sum("a")], "a"), ([F.sum("k")], "k")):
        # an object per query: S3A's analytics stream keeps what it read for later streams
        key = f"scan/{selected}.arrow"
        s3_server.client().put_object(Bucket=bucket, Key=key, Body=data)
        del served[:]
        got = spark.read.format("arrowmm").load(f"s3a://{bucket}/{key}").agg(*aggs).first()
        assert all(abs(got[i] - sum(table.column(c).to_pylist())) < 1e-6
                   for i, c in enumerate(selected))
        gets = [r for r in served if r[0] == "GET" and r[1].endswith(key)]
        sent = sum(r[3] for r in gets)
        print(f"\n{selected}: {len(gets)} GETs, {sent} bytes of {len(data)}: "
              f"{[(r[2], r[3]) for r in gets]}")
        # the selected columns' buffers, each batch's metadata block and the footer (a few
        # hundred bytes each, which S3A's analytics stream rounds up to blocks of 128 KiB)
        if selected != "k":
            assert sent <= batches * len(selected) * column + (batches + 2) * (256 << 10), (
                sent, len(data))
            continue
        # the first column follows each batch's metadata block: both come in one GET, read
        # with the batch before at the places of its own column (17 GETs and 31.6 MB before,
        # 12 and 15.9 MB now: a block and the column right after it read apart made the
        # analytics stream see a sequential read and fetch 4 MiB ahead, after every block;
        # now only after the first block of each of the two tasks)
        assert len(gets) <= batches + 4, [(r[2], r[3]) for r in gets]
        assert sent <= 2 * batches * column, (sent, len(data))


def test_a_batch_laid_out_unlike_the_one_before_reads_its_own_bytes(spark, s3_server, bucket):
    # each batch reads the next one's metadata block and, at its own buffers' places, the
    # next one's selected buffers: batches of one size whose strings split otherwise between
    # the columns put the selected buffers elsewhere; the read must take what their own
    # header says, never the bytes at the places predicted
    short, long_ = "x" * 8, "y" * 4096
    rows = [(short, long_), (long_, short), (short, long_)]
    table = pa.table({"s1": [r[0] for r in rows for _ in range(50)],
                      "s2": [r[1] for r in rows for _ in range(50)]})
    data = _ipc_bytes(table, 50)
    batches = pa.ipc.open_file(pa.BufferReader(data))
    sizes = {pa.ipc.get_record_batch_size(batches.get_batch(i)) for i in range(2)}
    assert len(sizes) == 1  # (batches 0 and 1 of one shape: the prediction is tried)
    s3_server.client().put_object(Bucket=bucket, Key="shape/t.arrow", Body=data)
    got = spark.read.format("arrowmm").load(f"s3a://{bucket}/shape/t.arrow").select("s2")
    assert [r[0] for r in got.collect()] == table.column("s2").to_pylist()


def _ipc_bytes(table, rows) -> bytes:
    """``table`` as an IPC file of ``rows``-row batches (pyarrow's writer)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=rows):
            w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def test_an_object_overwritten_after_planning_fails_the_scan(spark, s3_server, bucket):
    # planned against one object, read after another of the same length and layout took its
    # key: its batches parse, so the old connector read the new values under the old plan
    # (a query whose tasks straddle the overwrite mixes both); the ETag taken at planning
    # now goes with each task, and an object of another ETag fails the scan
    import numpy as np
    old = pa.table({"k": pa.array(np.arange(4000)), "v": pa.array(np.arange(4000) / 4)})
    new = pa.table({"k": pa.array(np.arange(4000)), "v": pa.array(np.arange(4000) / 2)})
    old_bytes, new_bytes = _ipc_bytes(old, 1000), _ipc_bytes(new, 1000)
    assert len(old_bytes) == len(new_bytes) and old_bytes != new_bytes
    client = s3_server.client()
    client.put_object(Bucket=bucket, Key="moved/t.arrow", Body=old_bytes)
    df = spark.read.format("arrowmm").load(f"s3a://{bucket}/moved/t.arrow")
    assert sorted(tuple(r) for r in df.collect()) == sorted(zip(range(4000),
                                                                 old.column("v").to_pylist()))
    df = spark.read.format("arrowmm").load(f"s3a://{bucket}/moved/t.arrow")
    df._jdf.queryExecution().toRdd()  # planned: the footer read, the partitions made
    client.put_object(Bucket=bucket, Key="moved/t.arrow", Body=new_bytes)
    with pytest.raises(Exception, match="changed since the query was planned"):
        df.collect()  # (the same query execution: no new plan)
    # a new query plans against the new object and reads it
    again = spark.read.format("arrowmm").load(f"s3a://{bucket}/moved/t.arrow")
    assert sorted(tuple(r) for r in again.collect()) == sorted(
        zip(range(4000), new.column("v").to_pylist()))


def test_a_folder_holding_a_name_with_a_colon_is_read(spark, s3_server, bucket):
    # a ':' in an object's name (a timestamp: events-2026-11-27T21:00:00.arrow) failed
    # planning with a bare URISyntaxException ("Relative path in absolute URI: a:b.arrow"):
    # each file's path was made from its name, which Hadoop's Path parsed as scheme "a";
    # the listing's own paths are taken now
    client = s3_server.client()
    for k, name in enumerate(["a:b.arrow", "events-2026-11-27T21:00:00.arrow", "plain.arrow"]):
        table = pa.table({"k": pa.array([k] * 3, pa.int64())})
        client.put_object(Bucket=bucket, Key=f"colon/{name}", Body=_ipc_bytes(table, 3))
    got = spark.read.format("arrowmm").load(f"s3a://{bucket}/colon")
    assert sorted(r.k for r in got.collect()) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
