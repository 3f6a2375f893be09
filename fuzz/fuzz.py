"""Atheris entry point: ``python fuzz/fuzz.py TARGET [libFuzzer flags] [corpus dirs]``.

TARGET is one of ``harness.TARGETS`` (file, stream, chunks, full, differential).
arrowmm's Python modules (and the flatbuffers runtime that parses its metadata)
are instrumented for coverage; the Cython extensions are not (that needs clang's
``-fsanitize=fuzzer-no-link``; gcc has no libFuzzer coverage), so coverage counts
the Python side and the fuzzer reaches the kernels through it without feedback
from inside them.  Any exception other than the library's errors, and any
``Disagreement``, stops the run and leaves the input in ``-artifact_prefix``.
Use ``fuzz/run.py`` for time budgets and several targets.
"""
import os
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the worktree's arrowmm, not an installed one
sys.path.insert(0, HERE)

import numpy  # noqa: E402,F401  (imported before instrumentation: not ours to cover)

with atheris.instrument_imports(include=["arrowmm", "flatbuffers", "harness"]):
    import arrowmm  # noqa: F401
    import arrowmm.ipc.read.file_reader  # noqa: F401
    import harness


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in harness.TARGETS:
        sys.exit(f"usage: fuzz.py {{{','.join(harness.TARGETS)}}} [libFuzzer flags] [corpus dirs]")
    target = harness.TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
