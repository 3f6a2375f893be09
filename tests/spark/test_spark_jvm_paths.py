"""Where the JVM connector's paths point (``PathResolver``): Spark's rules, and a refusal by
scheme, at planning, of every filesystem Hadoop has no class for (issue 30, item 1), as the
Python source's (test_spark_paths.py).

Before, ``s3a://bucket/x`` (``hdfs://``, ``viewfs://``, any scheme) was written into the
folder ``s3a:/bucket/x`` of the driver's working directory and reported success, reads of it
read that folder or said "does not exist", ``file://localhost/abs`` read ``localhost/abs``
relative to that directory, and ``fs.defaultFS`` was never asked.  Then every scheme but
``file:`` was refused; now a scheme is served through Hadoop's FileSystem when Hadoop has a
class for it (test_spark_jvm_hadoop_fs.py), and refused, naming what provides one, when not.
One session for the module.
"""
from __future__ import annotations

import os
import shutil
import uuid

import pytest

from arrowmm.spark import jar as jvm_jar
from tests.support.spark_support import NothingNew, driver_dir

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.FORMAT  # the JVM connector in a session with its jar
#: URIs of schemes without a Hadoop FileSystem class in pyspark's jars, and what provides one
UNSERVED = {"s3a://bucket/x": "hadoop-aws", "myfs://x": "spark.hadoop.fs.myfs.impl"}
#: URIs of filesystems Hadoop has a class for, that cannot be reached here (no such host, no
#: mount table): they are tried, and fail at planning naming the filesystem
UNREACHABLE = ["hdfs://no-such-namenode.invalid/x", "viewfs://c/x"]


def test_writes_to_other_filesystems_raise_at_planning_and_write_nothing(spark):
    df = spark.range(3)
    for uri, provider in UNSERVED.items():
        scheme = uri.split(":")[0]
        for mode in ("append", "overwrite", "errorifexists"):
            with NothingNew(spark):
                with pytest.raises(Exception, match=f"unsupported scheme '{scheme}'") as info:
                    df.write.format(FMT).mode(mode).save(uri)
            text = str(info.value)
            assert provider in text and "FileSystem" in text, text
    for uri in UNREACHABLE:
        scheme = uri.split(":")[0]
        with NothingNew(spark):
            with pytest.raises(Exception, match=rf"its filesystem \({scheme}\) cannot be reached"):
                df.write.format(FMT).mode("append").save(uri)
    with NothingNew(spark):
        with pytest.raises(Exception, match="names host 'otherhost'"):
            df.write.format(FMT).mode("append").save("file://otherhost/tmp/x")


def test_reads_of_other_filesystems_say_unsupported_not_missing(spark):
    for uri in list(UNSERVED) + UNREACHABLE + ["file://otherhost/tmp/x"]:
        for read in (spark.read.format(FMT), spark.read.format(FMT).schema("id long")):
            with pytest.raises(Exception) as info:
                read.load(uri).collect()
            text = str(info.value)
            assert ("unsupported scheme" in text or "names host 'otherhost'" in text
                    or "cannot be reached" in text), text
            assert "does not exist" not in text, text
    with pytest.raises(Exception, match="unsupported scheme 's3a'.*hadoop-aws"):  # one of a list
        spark.read.format(FMT).load(["file:///tmp", "s3a://bucket/x"]).collect()


def test_file_uri_spellings_globs_lists_and_relative_paths(spark, tmp_path):
    target = tmp_path / "x"
    with NothingNew(spark):
        spark.range(5).write.format(FMT).mode("overwrite").save(f"file://localhost{target}")
    assert sorted(os.listdir(target))[-1].endswith(".arrow") and (target / "_arrowmm_log").is_dir()
    spark.range(5, 7).write.format(FMT).mode("append").save(f"file:{target}")
    for spelling in (f"file:{target}", f"file://{target}", f"file://localhost{target}",
                     f"file://LOCALHOST{target}/", str(target) + "//", f"{target}/../x"):
        got = spark.read.format(FMT).load(spelling).collect()
        assert sorted(r.id for r in got) == list(range(7)), spelling
    assert sorted(r.id for r in spark.read.format(FMT).load(f"file://localhost{target}/*.arrow")
                  .collect()) == list(range(7))
    both = spark.read.format(FMT).load([f"file:{target}", f"file:///{target}"]).collect()
    assert sorted(r.id for r in both) == list(range(7))  # (a file named twice is read once)
    # relative paths: against the driver's working directory, where Parquet puts them too
    rel = f"arrowmm-rel-{uuid.uuid4().hex[:8]}"
    here = driver_dir(spark)
    try:
        spark.range(4).write.format(FMT).mode("overwrite").save(f"{rel}/a")
        spark.range(4).write.format(FMT).mode("append").save(f"file:{rel}/a")
        spark.range(2).write.mode("overwrite").parquet(f"{rel}/p")
        assert sorted(os.listdir(os.path.join(here, rel))) == ["a", "p"]
        assert spark.read.format(FMT).load(f"{rel}/a").count() == 8
        assert spark.read.format(FMT).load(f"./{rel}/a/*.arrow").count() == 8
    finally:
        shutil.rmtree(os.path.join(here, rel), ignore_errors=True)


def test_a_default_filesystem_other_than_the_local_one_takes_plain_paths(spark, tmp_path):
    """``fs.defaultFS`` of another filesystem (the session's Hadoop configuration, or a
    load's or save's option, as Spark's file sources take them): a plain path means it (here
    one that cannot be reached, so planning fails naming it, and nothing is written locally);
    a ``file:`` URI still names a local folder."""
    plain = tmp_path / "plain"
    nn = "hdfs://no-such-namenode.invalid:8020"
    spark.conf.set("fs.defaultFS", nn)
    try:
        with pytest.raises(Exception, match=rf"fs.defaultFS, {nn}\): its filesystem \(hdfs\)"):
            spark.range(2).write.format(FMT).mode("append").save(str(plain))
        with pytest.raises(Exception, match=rf"fs.defaultFS, {nn}\): its filesystem \(hdfs\)"):
            spark.read.format(FMT).load(str(tmp_path)).collect()
        assert not plain.exists()
        spark.range(2).write.format(FMT).mode("append").save(f"file://{plain}")
        assert spark.read.format(FMT).load(f"file:{plain}").count() == 2
    finally:
        spark.conf.unset("fs.defaultFS")
    assert spark.read.format(FMT).load(str(plain)).count() == 2
    with pytest.raises(Exception, match=r"fs.defaultFS, viewfs://c/\): its filesystem \(viewfs"):
        spark.read.format(FMT).option("fs.defaultFS", "viewfs://c/").load(str(plain)).collect()
    with pytest.raises(Exception, match=r"fs.defaultFS, viewfs://c/\): its filesystem \(viewfs"):
        spark.range(2).write.format(FMT).option("fs.defaultFS", "viewfs://c/") \
            .mode("append").save(str(plain))
    assert spark.read.format(FMT).load(str(plain)).count() == 2
