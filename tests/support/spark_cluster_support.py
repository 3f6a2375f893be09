"""Spark sessions that reach real storage: HDFS (``hdfs_support``), S3 through S3A (a moto
server), and executors in their own JVMs (``local-cluster``).

Jars a session needs on the driver's class path (hadoop-aws and the AWS SDK, for Hadoop to
find ``S3AFileSystem`` while planning) get there only when its JVM starts: ``spark.jars`` on a
JVM an earlier test module started reaches tasks, not the driver's FileSystem lookups.  So each
session here starts in a new JVM (``new_jvm``), as ``spark-submit --jars`` starts one on a
cluster, with the connector's jar from ``arrowmm.spark.configure`` beside them.
"""
from __future__ import annotations

import os
import time

#: S3A settings a moto server needs beyond where it is and how to sign
#: (``s3_support.S3Server.spark_conf()``: endpoint, path-style, plain HTTP, credentials,
#: region).  The AWS SDK v2 (2.30 on) computes CRC checksums for every upload and validates
#: them on every download unless told to do so only where S3 requires it; hadoop-aws 3.5.0
#: tells it so while ``fs.s3a.checksum.generation`` and ``fs.s3a.checksum.validation`` are
#: false (their defaults; ``fs.s3a.create.checksum.algorithm`` stays NONE), set here so that
#: a changed default shows up as these lines.
S3A_FOR_MOTO = {"spark.hadoop.fs.s3a.checksum.generation": "false",
                "spark.hadoop.fs.s3a.checksum.validation": "false"}


def frame(spark, start: int = 0, rows: int = 3000):
    """``rows`` rows from ``start``: a long, a double and a string with nulls, in 2 tasks."""
    return spark.range(start, start + rows, numPartitions=2).selectExpr(
        "id", "id / 2 AS x", "CASE WHEN id % 7 = 0 THEN NULL ELSE concat('s', id) END AS s")


def rows_of(df, columns=("id", "x", "s")) -> list[tuple]:
    """A DataFrame's rows as sorted tuples of ``columns`` (order-free comparison)."""
    return sorted(tuple(r[c] for c in columns) for r in df.collect())


def new_jvm() -> None:
    """Stop the running session and the JVM pyspark started (closing its stdin, as pyspark's
    own shutdown does), so that the next session starts a JVM with its own class path."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    finally:
        if proc is not None:
            proc.stdin.close()
            proc.wait(120)
        SparkContext._gateway = None
        SparkContext._jvm = None


def storage_session(tmp: str, *, master: str = "local[2]", jars: list[str] = (), **conf):
    """A session with the JVM connector's jar in a new JVM, ``jars`` beside it (for S3A:
    ``maven_support.s3a_jars()``) and ``conf`` (for S3A: ``s3_server.spark_conf()`` and
    ``S3A_FOR_MOTO``).  HDFS needs no setting: its URIs name the NameNode
    (``dfs.replication`` 1: there is one DataNode)."""
    from arrowmm.spark.session import local_session
    new_jvm()
    settings = {"spark.default.parallelism": "2", "spark.hadoop.dfs.replication": "1"}
    if jars:
        settings["spark.jars"] = ",".join(jars)
    settings.update(conf)
    started = time.monotonic()
    spark = local_session(master, "arrowmm-storage-tests", tmp, jvm=True, **settings)
    print(f"\n{master} session up in {time.monotonic() - started:.0f} s")
    return spark


def hadoop_fs(spark, uri: str):
    """The Hadoop ``FileSystem`` of ``uri`` in the session's JVM, with its Hadoop settings
    (the real HDFS or S3A client, not arrowmm's)."""
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark._jsc.hadoopConfiguration())


def list_files(spark, uri: str) -> dict[str, int]:
    """Every file under ``uri`` (recursively), as its path relative to ``uri`` and its size,
    listed by the filesystem's own client."""
    jvm = spark._jvm
    fs = hadoop_fs(spark, uri)
    root = fs.makeQualified(jvm.org.apache.hadoop.fs.Path(uri)).toString().rstrip("/")
    found = {}
    it = fs.listFiles(jvm.org.apache.hadoop.fs.Path(uri), True)
    while it.hasNext():
        status = it.next()
        name = status.getPath().toString()
        found[name[len(root) + 1:] if name.startswith(root + "/") else name] = status.getLen()
    return found


def read_bytes(spark, uri: str) -> bytes:
    """A file's bytes read through the filesystem's own client."""
    jvm = spark._jvm
    fs = hadoop_fs(spark, uri)
    path = jvm.org.apache.hadoop.fs.Path(uri)
    out = jvm.java.io.ByteArrayOutputStream()
    stream = fs.open(path)
    try:
        jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, out, 65536, False)
    finally:
        stream.close()
    return bytes(out.toByteArray())


def upload(spark, local: str, uri: str) -> None:
    """Copy a local file to ``uri`` with the filesystem's own client."""
    jvm = spark._jvm
    fs = hadoop_fs(spark, uri)
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(os.path.abspath(local)),
                         jvm.org.apache.hadoop.fs.Path(uri))
