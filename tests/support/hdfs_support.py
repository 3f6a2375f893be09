"""A real HDFS for the tests: Hadoop's MiniDFSCluster (a NameNode and a DataNode on
127.0.0.1, ports the system picks) in its own JVM, started once per test run.

The launcher is the test-only ``io.arrowmm.spark.testing.MiniHdfs`` (the connector's
``src/test/java``), compiled with ``javac`` against the class path Maven resolves for the
connector's tests (``maven_support``; cached).  It prints its ``hdfs://`` URI and runs until
its stdin closes, so it ends with the fixture's teardown, and also when pytest dies (the pipe
closes with the process): no orphan.  The Spark tests' conftest (``tests/spark/conftest.py``)
provides the session fixture ``hdfs`` (``hdfs.uri``, e.g. ``hdfs://127.0.0.1:40179``) to that
folder; a test takes it by name.

The fixture gives the cluster as soon as its process starts; ``hdfs.uri`` waits until it is
up, so a module's Spark session starts while the cluster does.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from arrowmm.spark.jar import java_runtime
from tests.support.maven_support import CACHE, JVM_DIR, connector_classpath, key, locked

LAUNCHER = JVM_DIR / "src" / "test" / "java" / "io" / "arrowmm" / "spark" / "testing" / "MiniHdfs.java"
#: How long the cluster may take to come up (measured on a 2-core machine at load 12: 70-180 s,
#: the slowest while a local-cluster session started beside it).
START_TIMEOUT = 300


class MiniHdfs:
    """The launcher's process, started when made; ``uri`` waits until it is up (so a Spark
    session can start meanwhile); ``stop()`` closes its stdin and waits."""

    def __init__(self):
        classpath = connector_classpath()
        classes = _compile_launcher(classpath)
        self.base = tempfile.mkdtemp(prefix="arrowmm-hdfs-")
        self.log = Path(self.base) / "minihdfs.log"
        java = java_runtime()
        if java is None:
            pytest.skip("no Java runtime (JAVA_HOME or java on PATH): the MiniDFSCluster and "
                        "Spark need Java 17+")
        with open(self.log, "w") as log:  # a file, never a pipe nobody reads (it would block)
            self.proc = subprocess.Popen(
                [java, "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                 "-cp", os.pathsep.join([str(classes)] + classpath),
                 "io.arrowmm.spark.testing.MiniHdfs", os.path.join(self.base, "dfs")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        self.started = time.monotonic()
        self._uri = None
        self._http = None

    @property
    def uri(self) -> str:
        """``hdfs://127.0.0.1:<port>``, once the NameNode and the DataNode are up."""
        if self._uri is None:
            self._uri = self._wait_for_uri()
            print(f"\nMiniDFSCluster {self._uri} up in {time.monotonic() - self.started:.0f} s")
        return self._uri

    def _wait_for_uri(self) -> str:
        found = []
        reader = threading.Thread(target=lambda: found.append(self.proc.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        line = found[0] if found else ""
        if not line.startswith("HDFS hdfs://"):
            self.stop()
            raise RuntimeError(f"MiniHdfs did not start in {START_TIMEOUT} s (printed {line!r}); "
                               f"its log: {self.log.read_text()[-4000:]}")
        self._http = line.split()[2]
        return line.split()[1]

    @property
    def webhdfs(self) -> str:
        """``webhdfs://127.0.0.1:<port>``: the NameNode's HTTP address (WebHDFS, which fsspec
        reads without a JVM), once the cluster is up."""
        self.uri  # (waits for it)
        return "webhdfs://" + self._http.split("://", 1)[1]

    def stop(self) -> None:
        """Close the launcher's stdin (it shuts the cluster down and exits) and wait for it."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def _compile_launcher(classpath: list[str]) -> Path:
    """``MiniHdfs.class`` compiled once per launcher source and POM, into the cache."""
    out = CACHE / f"minihdfs-{key(LAUNCHER, JVM_DIR / 'pom.xml')}"
    with locked("minihdfs"):
        if not (out / "io" / "arrowmm" / "spark" / "testing" / "MiniHdfs.class").is_file():
            if shutil.which("javac") is None:
                pytest.skip("no javac on PATH: the MiniDFSCluster launcher is compiled for the "
                            "tests (a JDK 17+, as the connector's build needs)")
            out.mkdir(parents=True, exist_ok=True)
            subprocess.run(["javac", "--release", "17", "-cp", os.pathsep.join(classpath),
                            "-d", str(out), str(LAUNCHER)], check=True)
    return out


_CLUSTER: list[MiniHdfs] = []
_LOCK = threading.Lock()


def mini_hdfs() -> MiniHdfs:
    """The run's one cluster, started on first use without waiting for it (test modules
    importing the fixture each register it, so it is kept here once), stopped at exit if no
    fixture teardown did."""
    with _LOCK:
        if not _CLUSTER or _CLUSTER[0].proc.poll() is not None:
            _CLUSTER[:] = [MiniHdfs()]
            atexit.register(_CLUSTER[0].stop)
        return _CLUSTER[0]


@pytest.fixture(scope="session")
def hdfs():
    """A MiniDFSCluster starting (``.uri``: ``hdfs://127.0.0.1:<port>`` once it is up);
    stopped at the end of the run."""
    cluster = mini_hdfs()
    yield cluster
    cluster.stop()
