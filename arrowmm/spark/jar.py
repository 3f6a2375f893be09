"""The JVM connector's jar: where it is, how a session gets it, how it is rebuilt.

The jar ``jvm/arrowmm-spark.jar`` is committed and shipped as package data, so
a machine with only a Java runtime never compiles.  It is built from the Java
sources under ``jvm/src/main`` by ``javac --release 17`` against pyspark's own
jars and packed by ``jar --date=...`` (no Maven, no network); its manifest
records the SHA-256 of those sources (``Arrowmm-Sources-SHA256``), so a test
can tell when the jar is stale::

    python -m arrowmm.spark jar --build
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from typing import Optional

__all__ = ["jar_path", "configure", "sources_digest", "jar_digest", "build_jar", "java_runtime",
           "FORMAT", "JVM_FORMAT", "PYTHON_FORMAT"]

#: What ``arrowmm`` means: the JVM connector in a session with its jar (Spark looks JVM
#: sources' names up before Python sources'), the Python data source in one without.
FORMAT = "arrowmm"
#: The name that always reaches the JVM connector (its jar registers it beside ``arrowmm``).
JVM_FORMAT = "arrowmm_jvm"
#: The name that always reaches the Python data source, in sessions with the jar too.
PYTHON_FORMAT = "arrowmm_python"
JVM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jvm")
SOURCES = os.path.join(JVM_DIR, "src", "main")
JAR = os.path.join(JVM_DIR, "arrowmm-spark.jar")
DIGEST_KEY = "Arrowmm-Sources-SHA256"
#: The fixed timestamp of every jar entry (a reproducible archive).
JAR_DATE = "2026-01-01T00:00:00Z"
REBUILD = "python -m arrowmm.spark jar --build"


def jar_path() -> str:
    """The path of the JVM connector's jar (for ``spark.jars`` or ``spark-submit --jars``)."""
    if not os.path.isfile(JAR):
        raise FileNotFoundError(f"{JAR}: the arrowmm Spark jar is missing (rebuild: {REBUILD})")
    return JAR


def java_runtime() -> Optional[str]:
    """The ``java`` a Spark session would start (``$JAVA_HOME/bin/java``, else the one on
    ``PATH``), or None when there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def configure(builder):
    """Add the JVM connector's jar to a ``SparkSession.builder``'s ``spark.jars`` (appended to
    any jars already set) and return the builder, as delta-spark's
    ``configure_spark_with_delta_pip`` does.

    Examples
    --------
    >>> from pyspark.sql import SparkSession            # doctest: +SKIP
    >>> spark = arrowmm.spark.configure(SparkSession.builder.master("local[2]")).getOrCreate()
    ... # doctest: +SKIP
    >>> spark.read.format("arrowmm").load("data/")      # the JVM connector  # doctest: +SKIP
    """
    path = jar_path()
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote and not remote.startswith("local"):
        # A client cannot put a jar on a running server's class path: setting spark.jars
        # only warns, and format("arrowmm") would quietly stay the Python source.
        raise ValueError(
            f"arrowmm.spark.configure: the builder connects to the Spark Connect server "
            f"{remote!r}, whose class path a client cannot change. Start the server with "
            f"--jars {path} (`python -m arrowmm.spark jar` prints the path), or send the jar "
            f"to your session after getOrCreate() with arrowmm.spark.add_jar(spark)")
    current = options.get("spark.jars", "")
    jars = [j for j in current.split(",") if j.strip()]
    if path not in jars:
        jars.append(path)
    return builder.config("spark.jars", ",".join(jars))


def add_jar(spark) -> None:
    """Add the JVM connector's jar to a running session: a Spark Connect session gets it as a
    session artifact (``spark.addArtifacts``, reads and writes alike), a classic one through
    ``ADD JAR`` (for a classic session, prefer ``configure`` before it starts: a jar added
    later reaches only the threads that load classes after it).

    Examples
    --------
    >>> spark = SparkSession.builder.remote("sc://host:15002").getOrCreate()  # doctest: +SKIP
    >>> arrowmm.spark.add_jar(spark)                                          # doctest: +SKIP
    >>> spark.read.format("arrowmm_jvm").load("hdfs:///data/")                # doctest: +SKIP
    """
    path = jar_path()
    if callable(getattr(spark, "addArtifacts", None)) and _is_connect(spark):
        spark.addArtifacts(path)
    else:
        spark.sql(f"ADD JAR '{path}'")


def _is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (pyspark.sql.connect.session)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _source_files():
    out = []
    for root, _, names in os.walk(SOURCES):
        for name in names:
            full = os.path.join(root, name)
            out.append((os.path.relpath(full, SOURCES).replace(os.sep, "/"), full))
    return sorted(out)


def sources_digest() -> str:
    """SHA-256 over the Java sources and resources (relative path, size and bytes of each)."""
    h = hashlib.sha256()
    for rel, full in _source_files():
        with open(full, "rb") as f:
            data = f.read()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def jar_digest(path: Optional[str] = None) -> Optional[str]:
    """The sources digest the jar's manifest records (None when it records none)."""
    with zipfile.ZipFile(path or jar_path()) as z:
        text = z.read("META-INF/MANIFEST.MF").decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\n ", "")  # unfold the 72-byte lines
    for line in text.splitlines():
        if line.startswith(DIGEST_KEY + ":"):
            return line.split(":", 1)[1].strip()
    return None


def pyspark_jars() -> str:
    """The ``jars`` folder of the installed pyspark (the classpath the jar compiles against)."""
    import pyspark
    folder = os.path.join(os.path.dirname(os.path.abspath(pyspark.__file__)), "jars")
    if not glob.glob(os.path.join(folder, "spark-catalyst*.jar")):
        raise FileNotFoundError(f"{folder}: no Spark jars (is pyspark installed?)")
    return folder


def build_jar(out: Optional[str] = None, verbose: bool = False) -> str:
    """Compile the Java sources with ``javac --release 17`` against pyspark's jars and pack
    them with ``jar`` (needs a JDK; a few seconds). Returns the jar's path."""
    out = out or JAR
    for tool in ("javac", "jar"):
        if shutil.which(tool) is None:
            raise FileNotFoundError(f"{tool}: not found (building the jar needs a JDK 17+)")
    java = [full for rel, full in _source_files() if rel.endswith(".java")]
    classpath = os.path.join(pyspark_jars(), "*")
    with tempfile.TemporaryDirectory(prefix="arrowmm-jar-") as tmp:
        classes = os.path.join(tmp, "classes")
        os.makedirs(classes)
        cmd = ["javac", "--release", "17", "-encoding", "UTF-8", "-Xlint:all,-serial,-options,-path",
               "-cp", classpath, "-d", classes] + java
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or verbose:
            print(done.stdout + done.stderr, end="")
        if done.returncode != 0:
            raise RuntimeError(f"javac failed (exit {done.returncode}); see its output above")
        resources = os.path.join(SOURCES, "resources")
        if os.path.isdir(resources):
            shutil.copytree(resources, classes, dirs_exist_ok=True)
        manifest = os.path.join(tmp, "MANIFEST.MF")
        with open(manifest, "w", encoding="utf-8") as f:
            f.write(f"{DIGEST_KEY}: {sources_digest()}\n"
                    f"Implementation-Title: arrowmm-spark\n")
        tmp_jar = os.path.join(tmp, "out.jar")
        subprocess.run(["jar", "--create", f"--date={JAR_DATE}", "--file", tmp_jar,
                        "--manifest", manifest, "-C", classes, "."], check=True)
        shutil.move(tmp_jar, out)
    return out
