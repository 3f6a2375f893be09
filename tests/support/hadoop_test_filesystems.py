"""Hadoop filesystems for the JVM connector's tests, without servers (issue 30, items 1-4).

``lfs:`` is Hadoop's own ``RawLocalFileSystem`` under another scheme: every read and write of
an ``lfs:///abs`` path goes through ``org.apache.hadoop.fs.FileSystem`` (the connector's
``HadoopStorage``), on the local disk where the test can check the bytes.  ``nofs:`` wraps the
local filesystem in a ``FilterFileSystem`` that resolves paths to itself, so it offers neither
an atomic no-replace rename nor a conditional create: writes to it must be refused.  Both are
compiled here against pyspark's jars into a jar for the test session, never shipped.
"""
from __future__ import annotations

import os
import subprocess
import tempfile

from arrowmm.spark import jar as jvm_jar

LFS = "io.arrowmm.testfs.LocalUnderOtherScheme"
NOFS = "io.arrowmm.testfs.NoAtomicCreate"

_SOURCES = {
    "LocalUnderOtherScheme.java": """
package io.arrowmm.testfs;

import java.net.URI;

/** The local filesystem under the scheme lfs: (a Hadoop filesystem that is not file:). */
public class LocalUnderOtherScheme extends org.apache.hadoop.fs.RawLocalFileSystem {
  @Override
  public URI getUri() {
    return URI.create("lfs:///");
  }

  @Override
  public String getScheme() {
    return "lfs";
  }
}
""",
    "NoAtomicCreate.java": """
package io.arrowmm.testfs;

import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/** Local files under nofs:, resolving to themselves: no atomic create-if-absent known. */
public class NoAtomicCreate extends org.apache.hadoop.fs.FilterFileSystem {
  public NoAtomicCreate() {
    super(new LocalUnderOtherScheme() {
      @Override
      public URI getUri() {
        return URI.create("nofs:///");
      }

      @Override
      public String getScheme() {
        return "nofs";
      }
    });
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(URI.create("nofs:///"), conf);
  }

  @Override
  public String getScheme() {
    return "nofs";
  }

  @Override
  public Path resolvePath(Path p) throws IOException {
    getFileStatus(p);
    return makeQualified(p);
  }

  @Override
  public boolean hasPathCapability(Path p, String capability) {
    return false;
  }
}
""",
}


def build_test_jar(folder: str) -> str:
    """Compile the test filesystems into ``folder/arrowmm-testfs.jar`` and return its path."""
    src = os.path.join(folder, "src")
    classes = os.path.join(folder, "classes")
    os.makedirs(os.path.join(src, "io", "arrowmm", "testfs"), exist_ok=True)
    os.makedirs(classes, exist_ok=True)
    files = []
    for name, text in _SOURCES.items():
        path = os.path.join(src, "io", "arrowmm", "testfs", name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        files.append(path)
    subprocess.run(["javac", "--release", "17", "-nowarn", "-cp",
                    os.path.join(jvm_jar.pyspark_jars(), "*"), "-d", classes] + files,
                   check=True, capture_output=True)
    out = os.path.join(folder, "arrowmm-testfs.jar")
    subprocess.run(["jar", "--create", "--file", out, "-C", classes, "."], check=True)
    return out


def session_conf(test_jar: str, view_root: str) -> dict:
    """``local_session`` keyword settings: the test jar on the driver and executors, ``lfs:``
    and ``nofs:`` registered (uncached: each ``get`` a new instance, as the issue's probe),
    and a ``viewfs://cluster/`` mount table whose ``/data`` is the local ``view_root``."""
    return {
        "spark__jars": test_jar,
        "spark__driver__extraClassPath": test_jar,
        "spark__executor__extraClassPath": test_jar,
        "spark__hadoop__fs__lfs__impl": LFS,
        "spark__hadoop__fs__lfs__impl__disable__cache": "true",
        "spark__hadoop__fs__nofs__impl": NOFS,
        "spark__hadoop__fs__nofs__impl__disable__cache": "true",
        "spark__hadoop__fs__viewfs__mounttable__cluster__link__/data": f"file://{view_root}",
    }


def bytes_read(spark, scheme: str) -> int:
    """Bytes read so far through the Hadoop filesystems of ``scheme`` in the driver's JVM (the
    executors' too under local[N]): Hadoop's per-scheme FileSystem statistics."""
    total = 0
    for stats in spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.getAllStatistics():
        if stats.getScheme() == scheme:
            total += stats.getBytesRead()
    return total


def new_folder(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)
