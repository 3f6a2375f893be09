"""Ctrl-C while the ``arrowmm`` command starts: exit 130, without a traceback.

Why: the command's ``main`` turns Ctrl-C into exit status 130 (and removes unfinished
output), but the package's imports run before it (numpy, the compiled modules: a second or
more on a busy machine), and Python prints a ``KeyboardInterrupt`` traceback for an interrupt
there.  When this process is the command (``arrowmm ...`` or ``python -m arrowmm ...``),
SIGINT exits 130 until ``main`` takes it back as ``KeyboardInterrupt`` (``command_started``);
a program that imports arrowmm keeps Python's handler.  The package imports this module
first, which sets the handler as it is imported.
"""
from __future__ import annotations

import os
import signal
import sys

__all__ = ["quiet_interrupt_while_starting", "command_started"]


def _leave(signum, frame):
    raise SystemExit(130)


def _is_the_command() -> bool:
    argv = getattr(sys, "argv", None) or [""]  # (an embedded interpreter may have none)
    if os.path.basename(argv[0]) == "arrowmm":  # (the console script)
        return True
    argv = getattr(sys, "orig_argv", [])  # (python -m arrowmm: argv[0] is "-m" while it imports)
    return any(a == "-m" and b == "arrowmm" for a, b in zip(argv, argv[1:]))


def quiet_interrupt_while_starting() -> None:
    """SIGINT exits 130 from here until ``command_started``, in the command's process only."""
    if _is_the_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, _leave)
        except ValueError:  # (not the main thread: signal.signal's rule)
            pass


def command_started() -> None:
    """``main`` takes Ctrl-C back as ``KeyboardInterrupt``, which it turns into 130 itself."""
    if signal.getsignal(signal.SIGINT) is _leave:
        signal.signal(signal.SIGINT, signal.default_int_handler)


quiet_interrupt_while_starting()
