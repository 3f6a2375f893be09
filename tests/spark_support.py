"""The test session: arrowmm's quiet local session with two task attempts (retries testable)."""
from __future__ import annotations


def start_session(tmp: str, master: str = "local[2,2]"):
    from arrowmm.spark.session import local_session
    return local_session(master, "arrowmm-tests", tmp, **{"spark.default.parallelism": "2"})
