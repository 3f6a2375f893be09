"""The test session: arrowmm's quiet local session with two task attempts (retries testable).

Also the README's Spark blocks in a new process each (``run_readme_block``; this file is the
script that process runs).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def start_session(tmp: str, master: str = "local[2,2]"):
    from arrowmm.spark.session import local_session
    return local_session(master, "arrowmm-tests", tmp, jvm=False,  # "arrowmm": the Python source
                         **{"spark.default.parallelism": "2"})


def start_jvm_session(tmp: str, master: str = "local[2]"):
    """A session with the JVM connector's jar; in a JVM an earlier test module started (the jar
    reaches the class path only at JVM start) the jar is added to this thread's loader."""
    from pyspark import SparkContext
    from arrowmm.spark import jar as jvm_jar
    from arrowmm.spark.session import local_session
    jvm_running = SparkContext._gateway is not None
    session = local_session(master, "arrowmm-jvm-tests", tmp, jvm=True,
                            **{"spark.default.parallelism": "2"})
    if jvm_running:
        session.sql(f"ADD JAR '{jvm_jar.jar_path()}'")
    return session


@pytest.fixture(scope="module", name="spark")
def jvm_spark(tmp_path_factory):
    """A test module's ``spark`` fixture: a session with the JVM connector's jar, one per
    module, stopped after it (the Spark folder's, from ``tests/spark/conftest.py``)."""
    session = start_jvm_session(str(tmp_path_factory.mktemp("spark")))
    yield session
    session.stop()


# --- The README's Spark blocks, each in a new process, on a session with the jar or without ---

#: How every such session's JVM starts (quiet logs, a quick JIT, the UI off, 2 cores).
_SUBMIT_ARGS = ("--master local[2] --conf spark.ui.enabled=false "
                "--conf spark.sql.shuffle.partitions=2 "
                "--driver-java-options '-Dlog4j2.configurationFile=file:{log} "
                "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'")


def _write_readme_data(folder: Path) -> None:
    """``data/events`` (``k`` 0..1999 and ``v`` in two files) and ``probe.arrow`` (a uint32
    column: the JVM connector reads it, the Python source asks for ``cast``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    events = folder / "data" / "events"
    events.mkdir(parents=True)
    for part in range(2):
        k = pa.array(range(part * 1000, (part + 1) * 1000), pa.int64())
        table = pa.table({"k": k, "v": pc.multiply(k, 0.5)})
        with pa.ipc.new_file(events / f"part-{part}.arrow", table.schema) as w:
            w.write_table(table)
    probe = pa.table({"u": pa.array([1, 2], pa.uint32())})
    with pa.ipc.new_file(folder / "probe.arrow", probe.schema) as w:
        w.write_table(probe)


def run_readme_block(line: int, code: str, folder: Path, jar: bool) -> dict:
    """Run a README Spark block in a new Python process from ``folder`` and return what it
    found (``readme_block_main``).  ``jar``: the session has the JVM connector's jar.

    The block's ``/data/`` is ``folder/data/``.  The process runs as a user's would: this
    Python as ``PYSPARK_PYTHON``, the source folder not on ``PYTHONPATH`` (so an editable
    install's ``pyspark_arrowmm`` modules are invisible to Spark's own lookup: issue 35's case).
    A block that uses ``spark`` gets one made as the README makes them: ``configure(builder)``
    with the jar, a plain builder without.  A block that makes its own session gets the jar
    from ``PYSPARK_SUBMIT_ARGS="--jars ..."`` (the README's third way) unless it adds it
    itself; without the jar, such a block meets a session already running (a notebook's, made
    ready by ``register(spark)``), which its ``getOrCreate()`` returns.
    """
    import arrowmm
    from arrowmm.spark import jar as jvm_jar
    from arrowmm.spark.session import LOG_CONFIG

    _write_readme_data(folder)
    adds_jar = "arrowmm.spark.configure(" in code
    given = re.search(r"^spark\s*=", code, re.M) is None
    spec = {"line": line, "code": code.replace('"/data/', f'"{folder}/data/'), "jar": jar,
            "given": given, "running": not jar and not given and adds_jar,
            "folder": str(folder)}
    (folder / "spec.json").write_text(json.dumps(spec))
    # the source folder, which local_session puts on PYTHONPATH (a user's would not have it)
    root = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(arrowmm.__file__))))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.realpath(p) != root]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    submit = _SUBMIT_ARGS.format(log=LOG_CONFIG)
    if jar and not given and not adds_jar:
        submit += f" --jars {jvm_jar.jar_path()}"
    env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS=submit + " pyspark-shell")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(folder / "spec.json")],
                          cwd=str(folder), env=env, capture_output=True, text=True, timeout=600)
    kind = "with" if jar else "without"
    assert proc.returncode == 0, f"README.md:{line} ({kind} the jar): {proc.stderr[-4000:]}"
    return json.loads((folder / "report.json").read_text())


def readme_block_main(spec_path: str) -> None:
    """The new process of ``run_readme_block``: make the session the spec asks for, run the
    block, then report which engine each name reaches before and after ``register(spark)``
    (called twice), and the ``k`` of ``data/out`` as each name reads it, beside the rows the
    block meant to write (``data/events`` through the block's ``.filter(...)``, if any)."""
    from pyspark.sql import SparkSession

    import arrowmm.spark

    spec = json.loads(Path(spec_path).read_text())
    folder = Path(spec["folder"])
    namespace = {"__name__": "__readme__"}
    if spec["given"] or spec["running"]:
        builder = SparkSession.builder
        spark = (arrowmm.spark.configure(builder) if spec["jar"] else builder).getOrCreate()
        if spec["given"]:
            namespace["spark"] = spark
        else:
            arrowmm.spark.register(spark)
    exec(compile(spec["code"], f"README.md:{spec['line']}", "exec"), namespace)
    spark = namespace["spark"]

    def engine(name: str) -> str:
        try:
            spark.read.format(name).load(str(folder / "probe.arrow")).collect()
            return "jvm"
        except Exception as exc:  # noqa: BLE001  (the error says which engine answered)
            text = str(exc)
            if "option('cast', 'true')" in text:
                return "python"
            return "none" if "DATA_SOURCE_NOT_FOUND" in text else text[:2000]

    names = ("arrowmm", "arrowmm_python", "arrowmm_jvm")
    report = {"before": {n: engine(n) for n in names}}
    arrowmm.spark.register(spark)
    arrowmm.spark.register(spark)
    report["after"] = {n: engine(n) for n in names}
    out = folder / "data" / "out"
    if out.is_dir():
        meant = spark.read.format("arrowmm_python").load(str(folder / "data" / "events"))
        found = re.search(r'\.filter\("([^"]*)"\)', spec["code"])
        if found:
            meant = meant.filter(found.group(1))
        report["expected"] = sorted(r.k for r in meant.collect())
        report["out"] = {n: sorted(r.k for r in spark.read.format(n).load(str(out)).collect())
                         for n in ("arrowmm", "arrowmm_python")}
    (folder / "report.json").write_text(json.dumps(report))
    spark.stop()


if __name__ == "__main__":
    readme_block_main(sys.argv[1])


def driver_dir(spark) -> str:
    """The driver's working directory (the JVM's, which Spark's file sources resolve against)."""
    return str(spark._jvm.System.getProperty("user.dir"))


class NothingNew:
    """Checks that the driver's working directory and ``/`` get no new entry; removes the
    entries the old code made (``<scheme>:`` folders, ``/localhost``) if it does."""

    def __init__(self, spark, made=("s3a:", "hdfs:", "viewfs:", "myfs:", "localhost")):
        self.folders = [driver_dir(spark), "/"]
        self.made = made

    def __enter__(self):
        self.before = [set(os.listdir(f)) for f in self.folders]
        return self

    def __exit__(self, *exc):
        new = [sorted(set(os.listdir(f)) - b) for f, b in zip(self.folders, self.before)]
        for folder, names in zip(self.folders, new):
            for name in names:
                if name in self.made:
                    shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
        if exc[0] is None:
            assert [n for names in new for n in names if n in self.made] == [], new
