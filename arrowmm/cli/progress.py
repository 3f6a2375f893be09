"""Progress bars for the commands that can run long (``convert``, ``cat``, ``append``,
``repair``, ``validate``): tqdm on standard error, only when it is a terminal.

Piped or redirected, stderr gets nothing but the commands' own messages, so scripts
that read it are not disturbed.  A bar appears only after ``ARROWMM_PROGRESS_DELAY``
seconds (default 1): quick runs print no bar at all.  ``ARROWMM_PROGRESS=0`` turns the
bars off on a terminal too.
"""
from __future__ import annotations

import os
import sys

from tqdm import tqdm

__all__ = ["bar", "enabled"]


def enabled(stream=None) -> bool:
    """Whether a progress bar goes to ``stream`` (standard error by default)."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("ARROWMM_PROGRESS", "") == "0":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # (closed or replaced by an object without isatty)
        return False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("ARROWMM_PROGRESS_DELAY", "1")))
    except ValueError:
        return 1.0


def bar(total=None, unit: str = "rows", desc=None) -> tqdm:
    """A tqdm bar on standard error (disabled, and silent, when stderr is not a terminal);
    ``update(n)`` it, close it (or use it as a context manager) when done."""
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, file=sys.stderr,
                disable=not enabled(), delay=_delay(), mininterval=0.2, leave=False,
                dynamic_ncols=True)
