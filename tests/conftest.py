"""Shared test setup, and session hooks so that no test skips silently.

The tests are packages, one folder per subpackage of arrowmm (``tests/ipc/``, ``tests/spark/``,
...), each with a ``conftest.py`` for its own fixtures; support code is the package
``tests/support/``, imported as ``from tests.support.helpers import ...``.  pytest's
``pythonpath`` (pyproject.toml) puts the repository root first on ``sys.path``, and ``fuzz/``
for the fuzz harness (``fuzz/harness.py``), whose readers the hostile tests drive.

Here: fixtures more than one folder uses (the S3 server), and the run's closing line about the
Arrow gold files: tests that need them (``integration_json.GOLD_DIR``) skip when the folder is
absent, and at the end of the run one line says how many did and how to get the files.
"""
from __future__ import annotations

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
