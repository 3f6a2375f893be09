"""Shared test setup, and session hooks so that no test skips silently.

The tests are packages, one folder per subpackage of arrowmm (``tests/ipc/``, ``tests/spark/``,
...), each with a ``conftest.py`` for its own fixtures; support code is the package
``tests/support/``, imported as ``from tests.support.helpers import ...``.  pytest's
``pythonpath`` (pyproject.toml) puts the repository root first on ``sys.path``, and ``fuzz/``
for the fuzz harness (``fuzz/harness.py``), whose readers the hostile tests drive.

Here: fixtures more than one folder uses (the S3 server), the run's closing line about the
Arrow gold files: tests that need them (``integration_json.GOLD_DIR``) skip when the folder is
absent, and at the end of the run one line says how many did and how to get the files; and
how the suite splits over pytest-xdist's workers (by default: ``-n auto --dist loadfile`` in
pyproject.toml's ``addopts``; ``-n 0`` for one process): two workers for a run of more than
one module, none (the tests in pytest's own process) for one module or test; a module's tests stay on one worker (its module fixtures, a
Spark session above all, start once), modules that share state beyond themselves stay
together (``SHARED``), and the heaviest units start first (``SECONDS``).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.integration_json import GOLD_DIR
from tests.support.s3_support import s3_server  # noqa: F401  (a session fixture: ipc/, spark/)

GOLD_SOURCE = ("apache/arrow-testing (https://github.com/apache/arrow-testing), folder "
               "data/arrow-ipc-stream/integration/cpp-21.0.0")


def gold_files_hint() -> str:
    """How to put the gold files where the tests look for them."""
    return (f"get them from {GOLD_SOURCE}: git clone --depth 1 https://github.com/apache/arrow-testing "
            f"/tmp/arrow-testing && mkdir -p {GOLD_DIR.parent} && cp -r "
            f"/tmp/arrow-testing/data/arrow-ipc-stream/integration/cpp-21.0.0 {GOLD_DIR.parent}/ "
            f"(or set ARROWMM_GOLD_DIR to that folder)")


#: Modules that must not run beside each other on two workers, by what they share: ``shm``,
#: the tests that look at every ``/dev/shm`` entry (``.arrowmm-share-*`` temporaries are any
#: process's: one worker's shares would read as the other's leaks); ``hdfs``, the modules of the
#: MiniDFSCluster (one per worker process: started once, not twice).
SHARED = {
    "shm": ("tests/shm/", "tests/ipc/test_memory.py", "tests/ipc/test_thread_safety.py",
            "tests/cli/test_cli_more.py", "tests/project/test_benchmarks.py"),
    "hdfs": ("tests/spark/test_spark_jvm_hdfs.py", "tests/spark/test_spark_jvm_local_cluster.py"),
}


@pytest.hookimpl(optionalhook=True)  # (an xdist hook: no error without xdist)
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: two workers (each runs its own Spark JVM, HDFS and S3 server: more would
    not fit a 2-core machine), none when the run is one test file or node (starting workers
    would cost more than it saves); ``PYTEST_XDIST_AUTO_NUM_WORKERS`` decides if set."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if given:
        return int(given)
    files = {arg.split("::")[0] for arg in config.args}
    if len(files) == 1 and Path(config.invocation_params.dir, *files).is_file():
        return 0
    return 2 if (os.cpu_count() or 1) > 1 else 0


def xdist_group_of(path: str) -> str:
    """The worker group of a test module (its path from the root): its ``SHARED`` group, else
    the module itself."""
    for group, prefixes in SHARED.items():
        if path.startswith(prefixes):
            return group
    return path


#: The serial seconds of the slowest work units (a module, or a ``SHARED`` group) on the 2-core
#: machine, from the durations of the last runs (a CI rehearsal's slowest tests, an xdist run's
#: per-module sums): a worker that frees up takes the heaviest unit left, so the long ones
#: start first and the run does not end on one worker finishing a Spark module alone. Rough
#: numbers do: only their order matters; a unit not listed counts ``UNLISTED_SECONDS`` a test.
SECONDS = {
    "shm": 300, "tests/project/test_docs.py": 110, "tests/spark/test_spark_jvm_stream.py": 110,
    "tests/spark/test_spark.py": 90, "hdfs": 80, "tests/spark/test_spark_object_store.py": 70,
    "tests/project/test_wheel.py": 60, "tests/spark/test_maven_build.py": 60,
    "tests/project/test_packaging.py": 55, "tests/spark/test_spark_workers.py": 50,
    "tests/hostile/test_hostile.py": 40, "tests/spark/test_spark_jvm_damage.py": 40,
    "tests/spark/test_spark_jvm_s3.py": 40, "tests/spark/test_spark_paths.py": 40,
    "tests/spark/test_spark_connect.py": 35, "tests/cli/test_cli_files.py": 35,
    "tests/cli/test_cli.py": 35, "tests/project/test_typing.py": 30,
}
UNLISTED_SECONDS = 0.05


def unit_seconds(unit: str, tests: int) -> float:
    """What a work unit is expected to take (``SECONDS``, else by its number of tests)."""
    return SECONDS.get(unit, UNLISTED_SECONDS * tests)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the ``SHARED`` groups, the heaviest unit first: a work unit is a
    module or a group of them (xdist's own ``loadgroup`` marks do nothing under pytest 9, which
    no longer reads the node ids xdist rewrites)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid.split("::")[0])

        def _assign_work_unit(self, node) -> None:
            heaviest = max(self.workqueue, key=lambda unit: unit_seconds(
                unit, len(self.workqueue[unit])))
            self.workqueue.move_to_end(heaviest, last=False)  # (the base class takes the first)
            super()._assign_work_unit(node)

    return ModuleGroups(config, log)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "gold files" in _skip_reason(r)]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped because the Arrow gold files are not in {GOLD_DIR}; "
            f"{gold_files_hint()}", yellow=True, bold=True)
