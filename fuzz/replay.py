"""Run every fuzz target over every input of some files or directories, without atheris.

    python fuzz/replay.py [--targets file,stream,...] PATH...

What ``fuzz/sanitize.sh`` runs the corpus with (atheris and an ASan-preloaded
interpreter do not mix), and a quick way to check a finding after a fix.
Prints one line per failure (input, target, exception) and exits 1 if any.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import harness  # noqa: E402


def inputs(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, _dirs, files in os.walk(path):
                for name in sorted(files):
                    yield os.path.join(root, name)
        else:
            yield path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--targets", default=",".join(harness.TARGETS))
    p.add_argument("paths", nargs="+")
    args = p.parse_args(argv)
    names = args.targets.split(",")
    count = failures = 0
    for path in inputs(args.paths):
        with open(path, "rb") as f:
            data = f.read()
        count += 1
        for name in names:
            try:
                harness.run_target(name, data)
            except Exception as exc:  # noqa: BLE001  (anything that escapes is the finding)
                failures += 1
                print(f"FAIL {path} [{name}]: {type(exc).__name__}: {exc}")
                traceback.print_exc(limit=-3)
    print(f"replayed {count} inputs through {len(names)} targets: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
