"""The test session: arrowmm's quiet local session with two task attempts (retries testable).

Also the README's and the manual's Spark blocks, a page's in one new process per session kind
(``run_readme_blocks``; this file is the script that process runs).
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


# --- Spark blocks of the README and the manual: a page's in one new process per session kind ---

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
    """Run one README Spark block in a new Python process from ``folder`` and return what it
    found (``run_readme_blocks`` with one block; its error, if any, fails here)."""
    report, = run_readme_blocks([(line, code, folder)], jar, folder)
    assert report["error"] is None, f"README.md:{line}: {report['error']}"
    return report


def run_readme_blocks(found: list, jar: bool, folder: Path, where: str = "README.md") -> list:
    """Run Spark blocks (``(line, code, folder)`` each) in order in one new Python process
    started in ``folder``, as a reader runs a page's blocks one after the other, and return
    what each found (``readme_block_main``).  ``jar``: the session has the JVM connector's jar.

    A block's ``/data/`` is its own ``folder/data/`` (what one block writes is not another's).
    The process runs as a user's would: this Python as ``PYSPARK_PYTHON``, the source folder
    not on ``PYTHONPATH`` (so an editable install's ``pyspark_arrowmm`` modules are invisible to
    Spark's own lookup: issue 35's case).  The first block that needs a session starts the
    JVM, as the README makes sessions: a block that uses ``spark`` gets one made by
    ``configure(builder)`` with the jar, a plain builder without; a block that makes its own
    session gets the jar from ``PYSPARK_SUBMIT_ARGS="--jars ..."`` (the README's third way)
    unless it adds it itself; without the jar, such a block meets a session already running
    (a notebook's, made ready by ``register(spark)``), which its ``getOrCreate()`` returns.
    Later blocks meet the session the first one started (a block's ``getOrCreate()`` returns
    it).  A block that raises is reported (``error``: its traceback) and the next one runs.
    """
    import arrowmm
    from arrowmm.spark import jar as jvm_jar
    from arrowmm.spark.session import LOG_CONFIG

    specs = []
    for line, code, block_folder in found:
        _write_readme_data(block_folder)
        adds_jar = "arrowmm.spark.configure(" in code
        given = re.search(r"^spark\s*=", code, re.M) is None
        specs.append({"line": line, "code": code.replace('"/data/', f'"{block_folder}/data/'),
                      "jar": jar, "given": given, "adds_jar": adds_jar,
                      "running": not jar and not given and adds_jar,
                      "folder": str(block_folder), "name": f"{where}:{line}"})
    spec_path = folder / ("spec-jar.json" if jar else "spec-no-jar.json")
    report_path = spec_path.with_name(spec_path.name.replace("spec", "report"))
    spec_path.write_text(json.dumps({"where": where, "blocks": specs,
                                     "report": str(report_path)}))
    # the source folder, which local_session puts on PYTHONPATH (a user's would not have it)
    root = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(arrowmm.__file__))))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.realpath(p) != root]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    submit = _SUBMIT_ARGS.format(log=LOG_CONFIG)
    first = specs[0]  # the block that starts the JVM
    if jar and not first["given"] and not first["adds_jar"]:
        submit += f" --jars {jvm_jar.jar_path()}"
    env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS=submit + " pyspark-shell")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(spec_path)],
                          cwd=str(folder), env=env, capture_output=True, text=True, timeout=900)
    kind = "with" if jar else "without"
    assert proc.returncode == 0, f"{where} ({kind} the jar): {proc.stderr[-4000:]}"
    return json.loads(report_path.read_text())


def readme_block_main(spec_path: str) -> None:
    """The new process of ``run_readme_blocks``: make the session the first block asks for,
    run each block, then report which engine each name reaches before and after
    ``register(spark)`` (called twice), and the ``k`` of the block's ``data/out`` as each name
    reads it, beside the rows the block meant to write (``data/events`` through the block's
    ``.filter(...)``, if any)."""
    import traceback

    from pyspark.sql import SparkSession

    spec = json.loads(Path(spec_path).read_text())
    reports = []
    spark = None
    for block in spec["blocks"]:
        folder = Path(block["folder"])
        os.chdir(folder)
        try:
            spark = _run_block(block, spark)
            reports.append({"line": block["line"], "error": None,
                            **_engines_and_out(spark, block, folder)})
        except Exception:  # noqa: BLE001  (reported under the block's name; the next one runs)
            reports.append({"line": block["line"], "error": traceback.format_exc()[-4000:]})
    Path(spec["report"]).write_text(json.dumps(reports))
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def _run_block(block: dict, spark):
    """Run one block in a new namespace (with the session it is given, if any) and return the
    session it leaves."""
    from pyspark.sql import SparkSession

    import arrowmm.spark

    namespace = {"__name__": "__readme__"}
    if block["given"] or block["running"]:
        builder = SparkSession.builder
        spark = (arrowmm.spark.configure(builder) if block["jar"] else builder).getOrCreate()
        if block["given"]:
            namespace["spark"] = spark
        else:
            arrowmm.spark.register(spark)
    exec(compile(block["code"], block["name"], "exec"), namespace)
    return namespace["spark"]


def _engines_and_out(spark, block: dict, folder: Path) -> dict:
    """Which engine each name reaches before and after ``register(spark)``, and what the
    block's ``data/out`` holds as each name reads it."""
    import arrowmm.spark

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
    report: dict = {"before": {n: engine(n) for n in names}}
    arrowmm.spark.register(spark)
    arrowmm.spark.register(spark)
    report["after"] = {n: engine(n) for n in names}
    out = folder / "data" / "out"
    if out.is_dir():
        meant = spark.read.format("arrowmm_python").load(str(folder / "data" / "events"))
        found = re.search(r'\.filter\("([^"]*)"\)', block["code"])
        if found:
            meant = meant.filter(found.group(1))
        report["expected"] = sorted(r.k for r in meant.collect())
        report["out"] = {n: sorted(r.k for r in spark.read.format(n).load(str(out)).collect())
                         for n in ("arrowmm", "arrowmm_python")}
    return report


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
