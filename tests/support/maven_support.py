"""Maven for the test suite: the connector's build, and the test-only jars it resolves (the
MiniDFSCluster launcher's class path, hadoop-aws and the AWS SDK for S3A).

Maven runs with the user's own local repository (``~/.m2``), so only a machine's first run
downloads; what a run resolves is kept in ``build/test-support/`` of this checkout under a key
made of the POM's bytes, so later runs start no Maven at all.  Without ``mvn``, or when Maven
Central cannot be reached, the tests that need it skip saying so; any other Maven failure is an
error.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JVM_DIR = ROOT / "arrowmm" / "spark" / "jvm"
POM = JVM_DIR / "pom.xml"
S3A_POM = JVM_DIR / "src" / "test" / "s3a" / "pom.xml"
CACHE = ROOT / "build" / "test-support"

#: What Maven prints when it cannot reach a repository (the tests then skip, saying so).
_OFFLINE = re.compile(r"UnknownHostException|Connection refused|Network is unreachable|"
                      r"connect timed out|Could not transfer artifact|No route to host|"
                      r"repository system is offline|Temporary failure in name resolution")


def mvn(args, cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run ``mvn -B -q ARGS`` in ``cwd``; skip the test when ``mvn`` is missing or Maven
    Central cannot be reached, fail it (with Maven's output) on any other error."""
    exe = shutil.which("mvn")
    if exe is None:
        pytest.skip("mvn is not on PATH: the Maven build and the tests' HDFS and S3A jars need "
                    "Apache Maven 3.8+ (apt-get install maven)")
    done = subprocess.run([exe, "-B", "-q", *args], cwd=str(cwd), capture_output=True, text=True,
                          check=False,
                          timeout=timeout)
    if done.returncode != 0:
        out = done.stdout + done.stderr
        if _OFFLINE.search(out):
            pytest.skip(f"Maven Central cannot be reached (mvn {' '.join(args[:2])}): "
                        f"{_OFFLINE.search(out).group(0)}; the tests needing Maven's artifacts "
                        f"run on a machine that reaches https://repo.maven.apache.org")
        raise AssertionError(f"mvn {' '.join(args)} failed (exit {done.returncode}):\n{out[-6000:]}")
    return done


def key(*files: Path) -> str:
    """A short digest of files' bytes (what a cached resolution depends on)."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def locked(name: str):
    """One process at a time builds an entry of the cache (pytest runs may overlap)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def connector_classpath() -> list[str]:
    """The connector POM's test class path (every scope: Spark and Hadoop's APIs, JUnit,
    hadoop-client-minicluster), resolved once per POM."""
    folder = CACHE / f"classpath-{key(POM)}"
    done = folder / "classpath.txt"
    with locked("classpath"):
        if not done.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            out = folder / "classpath.tmp"
            mvn(["dependency:build-classpath", "-Dmdep.includeScope=test",
                 f"-Dmdep.outputFile={out}", f"-Darrowmm.target={folder / 'target'}"], JVM_DIR)
            out.replace(done)
    return [p for p in done.read_text().strip().split(os.pathsep) if p]


def s3a_jars() -> list[str]:
    """hadoop-aws and the AWS SDK modules S3A uses (``src/test/s3a/pom.xml``), copied once per
    POM into the cache; the paths of the jars."""
    folder = CACHE / f"s3a-{key(S3A_POM)}"
    jars = folder / "jars"
    with locked("s3a"):
        if not (folder / "done").is_file():
            shutil.rmtree(jars, ignore_errors=True)
            mvn(["dependency:copy-dependencies", "-DincludeScope=runtime",
                 f"-DoutputDirectory={jars}", f"-Darrowmm.target={folder / 'target'}"],
                S3A_POM.parent)
            (folder / "done").write_text("")
    return sorted(str(p) for p in jars.glob("*.jar"))
