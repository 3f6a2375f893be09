"""``python -m arrowmm.spark jar``: print the JVM connector's jar path (for ``--jars``);
``python -m arrowmm.spark jar --build``: rebuild it from the Java sources (needs a JDK)."""
from __future__ import annotations

import argparse
import sys

from .jar import build_jar, jar_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arrowmm.spark")
    sub = parser.add_subparsers(dest="command", required=True)
    jar = sub.add_parser("jar", help="print the path of the JVM connector's jar")
    jar.add_argument("--build", action="store_true",
                     help="rebuild the jar from jvm/src with javac and jar (needs a JDK 17+)")
    jar.add_argument("--verbose", action="store_true", help="show javac's output")
    args = parser.parse_args(argv)
    if args.build:
        print(build_jar(verbose=args.verbose))
    else:
        print(jar_path())
    return 0


if __name__ == "__main__":
    sys.exit(main())
