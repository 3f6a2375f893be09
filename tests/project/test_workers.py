"""How the suite splits over pytest-xdist's workers (``tests/conftest.py``) names real modules:
a ``SHARED`` prefix or a ``SECONDS`` entry left behind by a renamed module would silently put
that module on any worker, beside what it must not overlap, or schedule it last."""
from __future__ import annotations

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
