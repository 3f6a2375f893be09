"""Shared test setup, and session hooks so that no test skips silently.

Test modules import their helpers (``helpers``, ``writer_support``, ``kernel_support``,
``spark_support``, ``integration_json``) by name: pytest puts this folder on ``sys.path``
because it is not a package.  The fuzz harness (``fuzz/harness.py``), whose readers the
differential and regression tests drive, is put there once, here.

Tests that need the Arrow gold files (``integration_json.GOLD_DIR``) skip when the folder is
absent; at the end of the run one line says how many did and how to get the files.
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "fuzz"))

from integration_json import GOLD_DIR  # noqa: E402  (pytest puts tests/ on sys.path)

GOLD_SOURCE = ("apache/arrow-testing (https://github.com/apache/arrow-testing), folder "
               "data/arrow-ipc-stream/integration/cpp-21.0.0")


def gold_files_hint() -> str:
    """How to put the gold files where the tests look for them."""
    return (f"get them from {GOLD_SOURCE}: git clone --depth 1 https://github.com/apache/arrow-testing "
            f"/tmp/arrow-testing && mkdir -p {GOLD_DIR.parent} && cp -r "
            f"/tmp/arrow-testing/data/arrow-ipc-stream/integration/cpp-21.0.0 {GOLD_DIR.parent}/ "
            f"(or set ARROWMM_GOLD_DIR to that folder)")


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
