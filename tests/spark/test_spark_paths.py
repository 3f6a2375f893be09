"""Where the Python data source's paths point (``arrowmm.spark.paths``): Spark's rules, and a
refusal by scheme, at planning, of every filesystem it cannot serve (issue 30, items 1 and 6).

Before, ``s3a://bucket/x`` (``hdfs://``, ``viewfs://``, any scheme) was written into the
folder ``s3a:/bucket/x`` of the driver's working directory and reported success, reads of it
said "does not exist", and ``file://localhost/abs`` wrote into ``/localhost/abs``.  Now S3
paths are served through s3fs (``test_spark_object_store.py``), and HDFS, ``viewfs://`` and
unknown schemes are refused naming the JVM connector.  One session for the module
(``arrowmm_python`` is the Python source with the jar or without).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import types
import uuid

import pytest

import arrowmm
import arrowmm.spark
from tests.support.spark_support import NothingNew, driver_dir, start_session

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

PY = "arrowmm_python"
#: URIs of filesystems the Python source cannot serve (the old code made a local folder of each)
FOREIGN = ["hdfs://nn/x", "viewfs://c/x", "myfs://x"]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_session(str(tmp_path_factory.mktemp("spark")), "local[2]")
    yield session
    session.stop()


def test_writes_to_other_filesystems_raise_at_planning_and_write_nothing(spark):
    df = spark.range(3)
    for uri in FOREIGN:
        scheme = uri.split(":")[0]
        for mode in ("append", "overwrite"):
            with NothingNew(spark):
                with pytest.raises(Exception, match=f"unsupported scheme '{scheme}'") as info:
                    df.write.format(PY).mode(mode).save(uri)
            assert "mount" in str(info.value) and "arrowmm_jvm" in str(info.value)
    with NothingNew(spark):
        with pytest.raises(Exception, match="names host 'otherhost'"):
            df.write.format(PY).mode("append").save("file://otherhost/tmp/x")


def test_reads_of_other_filesystems_say_unsupported_not_missing(spark):
    for uri in FOREIGN + ["file://otherhost/tmp/x"]:
        for read in (spark.read.format(PY), spark.read.format(PY).schema("id long")):
            with pytest.raises(Exception) as info:
                read.load(uri).collect()
            text = str(info.value)
            assert "unsupported scheme" in text or "names host 'otherhost'" in text, text
            assert "does not exist" not in text, text
    with pytest.raises(Exception, match="unsupported scheme 'hdfs'"):  # one of a list
        spark.read.format(PY).load(["file:///tmp", "hdfs://nn/x"]).collect()


def test_file_uri_spellings_globs_lists_and_relative_paths(spark, tmp_path):
    target = tmp_path / "x"
    with NothingNew(spark):
        spark.range(5).write.format(PY).mode("overwrite").save(f"file://localhost{target}")
    assert sorted(os.listdir(target))[-1].endswith(".arrow") and (target / "_arrowmm_log").is_dir()
    spark.range(5, 7).write.format(PY).mode("append").save(f"file:{target}")
    for spelling in (f"file:{target}", f"file://{target}", f"file://localhost{target}",
                     f"file://LOCALHOST{target}/", str(target) + "//", f"{target}/../x"):
        assert sorted(r.id for r in spark.read.format(PY).load(spelling).collect()) == list(range(7))
    assert sorted(r.id for r in spark.read.format(PY).load(f"file://{target}/*.arrow")
                  .collect()) == list(range(7))
    both = spark.read.format(PY).load([f"file:{target}", f"file:///{target}"]).collect()
    assert sorted(r.id for r in both) == list(range(7))  # (a file named twice is read once)
    # relative paths: against the driver's working directory, where Parquet puts them too
    rel = f"arrowmm-rel-{uuid.uuid4().hex[:8]}"
    here = driver_dir(spark)
    try:
        spark.range(4).write.format(PY).mode("overwrite").save(f"{rel}/a")
        spark.range(4).write.format(PY).mode("append").save(f"file:{rel}/a")
        spark.range(2).write.mode("overwrite").parquet(f"{rel}/p")
        assert sorted(os.listdir(os.path.join(here, rel))) == ["a", "p"]
        assert spark.read.format(PY).load(f"{rel}/a").count() == 8
        assert spark.read.format(PY).load(f"./{rel}/a/*.arrow").count() == 8
    finally:
        shutil.rmtree(os.path.join(here, rel), ignore_errors=True)


def test_a_session_whose_default_filesystem_is_another_refuses_plain_paths(spark, tmp_path):
    """``fs.defaultFS`` of another filesystem: a plain path means it (Spark's rules), so it is
    refused; a ``file:`` URI still names a local folder."""
    other = spark.newSession()
    other.conf.set("fs.defaultFS", "hdfs://nn:8020")  # (what Spark's file sources then use)
    arrowmm.spark.register(other)
    plain = tmp_path / "plain"
    with pytest.raises(Exception, match=r"unsupported scheme 'hdfs'.*fs.defaultFS"):
        other.range(2).write.format(PY).mode("append").save(str(plain))
    with pytest.raises(Exception, match=r"unsupported scheme 'hdfs'.*fs.defaultFS"):
        other.read.format(PY).load(str(tmp_path)).collect()
    assert not plain.exists()
    other.range(2).write.format(PY).mode("append").save(f"file://{plain}")
    assert other.read.format(PY).load(f"file:{plain}").count() == 2


# -- without a session: the planning the workers run, driven directly ------------------------------
def test_a_default_filesystem_from_register_or_core_site_refuses_plain_paths(tmp_path, monkeypatch):
    """What ``register`` records of a session's ``fs.defaultFS`` and what a worker finds in
    ``$HADOOP_CONF_DIR/core-site.xml`` both reach the write's planning, which then writes
    nothing."""
    from pyspark.sql.types import LongType, StructField, StructType
    from arrowmm.spark.source import ArrowmmPythonDataSource
    schema = StructType([StructField("id", LongType())])
    monkeypatch.chdir(tmp_path)
    registered = {}
    session = types.SimpleNamespace(
        dataSource=types.SimpleNamespace(register=lambda s: registered.setdefault(s.name(), s)),
        conf=types.SimpleNamespace(set=lambda k, v: None,
                                   get=lambda k, d=None: {"fs.defaultFS": "viewfs://cluster/"}.get(k, d)))
    arrowmm.spark.register(session)
    source = registered[PY]
    assert issubclass(source, ArrowmmPythonDataSource)
    for path in ("rel", str(tmp_path / "abs")):
        with pytest.raises(arrowmm.ArrowNotImplementedError, match="unsupported scheme 'viewfs'"):
            source({"path": path}).writer(schema, False)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>hdfs://nn:8020</value>"
        "</property></configuration>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path / "conf"))
    with pytest.raises(arrowmm.ArrowNotImplementedError, match="unsupported scheme 'hdfs'"):
        ArrowmmPythonDataSource({"path": "rel"}).writer(schema, False)
    assert sorted(os.listdir(tmp_path)) == ["conf"]
    ArrowmmPythonDataSource({"path": f"file:{tmp_path}/local"}).writer(schema, False)
    assert (tmp_path / "local" / "_arrowmm_log").is_dir()


def test_object_store_urls_resolve_and_stores_that_cannot_commit_refuse_writes(tmp_path):
    """``s3a://``, ``s3://`` and ``s3n://`` resolve to URLs (served through s3fs), also as
    what a plain path means under an S3 ``fs.defaultFS``; a store without the package fsspec
    needs for it is refused naming the package, and one without a conditional create (GCS
    here) is refused for writes, at planning, before anything is written."""
    from pyspark.sql.types import LongType, StructField, StructType
    from arrowmm.spark.paths import resolve_path
    from arrowmm.spark.source import ArrowmmPythonDataSource
    assert resolve_path("s3a://bucket/a/../b/") == "s3a://bucket/b"
    assert resolve_path("s3n://bucket") == "s3n://bucket"
    assert resolve_path("/x/y", "s3a://bucket/") == "s3a://bucket/x/y"
    with pytest.raises(arrowmm.ArrowInvalid, match="names no bucket"):
        resolve_path("s3a:///x")
    with pytest.raises(arrowmm.ArrowInvalid, match="relative path on fs.defaultFS"):
        resolve_path("x", "s3a://bucket/")
    schema = StructType([StructField("id", LongType())])
    if importlib.util.find_spec("gcsfs") is None:
        with pytest.raises(arrowmm.ArrowNotImplementedError, match="unsupported scheme 'gs'.*gcsfs"):
            ArrowmmPythonDataSource({"path": "gs://bucket/x"}).writer(schema, False)
    else:
        with pytest.raises(arrowmm.ArrowNotImplementedError, match="writes to local paths and S3"):
            ArrowmmPythonDataSource({"path": "gs://bucket/x"}).writer(schema, False)
    with pytest.raises(arrowmm.ArrowNotImplementedError, match="unsupported scheme 'memory'"):
        ArrowmmPythonDataSource({"path": "memory://x"}).writer(schema, False)
