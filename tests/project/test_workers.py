"""How the suite splits over pytest-xdist's workers (``tests/conftest.py``) names real modules:
a ``SHARED`` prefix or a ``SECONDS`` entry left behind by a renamed module would silently put
that module on any worker, beside what it must not overlap, or schedule it last; and
``python -m pytest`` uses them by default (pyproject.toml's ``addopts``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import SECONDS, SHARED, UNLISTED_SECONDS, unit_seconds, xdist_group_of

ROOT = Path(__file__).resolve().parents[2]


def test_every_shared_prefix_names_a_test_module_or_folder():
    for group, prefixes in SHARED.items():
        for prefix in prefixes:
            path = ROOT / prefix
            assert path.is_dir() if prefix.endswith("/") else path.is_file(), (group, prefix)


def test_every_timed_unit_is_a_shared_group_or_a_module_outside_them():
    for unit in SECONDS:
        if unit not in SHARED:
            assert (ROOT / unit).is_file(), f"SECONDS names {unit}: no such test module"
            assert xdist_group_of(unit) == unit, f"{unit} runs in a group: time the group"


def test_a_module_goes_with_its_group_and_the_heaviest_unit_counts_most():
    assert xdist_group_of("tests/shm/test_channel.py") == "shm"
    assert xdist_group_of("tests/spark/test_spark_jvm_hdfs.py") == "hdfs"
    assert xdist_group_of("tests/core/test_bitmap.py") == "tests/core/test_bitmap.py"
    heaviest = max(SECONDS, key=SECONDS.get)
    assert unit_seconds(heaviest, 1) == SECONDS[heaviest] > unit_seconds("tests/x.py", 1000)
    assert unit_seconds("tests/x.py", 10) == 10 * UNLISTED_SECONDS


def test_a_plain_run_uses_two_workers_and_one_test_runs_in_one_process():
    """``python -m pytest -q`` runs on two workers with the module groups (``-n auto --dist
    loadfile`` in pyproject.toml's ``addopts``), and a run of one test starts none (the README
    says both; starting workers would cost more than the test)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS"))}

    def run(*nodes: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                               *nodes], cwd=str(ROOT), env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout

    one = "tests/project/test_workers.py::test_every_shared_prefix_names_a_test_module_or_folder"
    two = run(one, "tests/project/test_packaging.py::test_no_listed_package_is_missing_from_the_tree")
    assert "2 workers [2 items]" in two and "scheduling tests via ModuleGroups" in two, two
    assert "2 passed" in two.splitlines()[-1], two[-3000:]
    alone = run(one)
    assert "created:" not in alone and "[gw" not in alone and "collected 1 item" in alone, alone
    assert "1 passed" in alone.splitlines()[-1], alone[-3000:]
