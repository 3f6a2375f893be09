#!/bin/sh
# Build arrowmm's Cython extensions with AddressSanitizer + UndefinedBehaviorSanitizer (and
# Cython's bounds checks), in place, then run the fuzz corpus and the whole test suite under it.
# A wild read in our own Cython code aborts with a report here even when every test passes.
#
#   fuzz/sanitize.sh            # build, run corpus + tests, rebuild the normal extensions
#   fuzz/sanitize.sh --keep     # leave the sanitizer build in place afterwards
#   PYTEST_ARGS="tests/hostile/test_hostile.py" fuzz/sanitize.sh   # a subset of the tests
#
# CPython itself is not instrumented: the ASan runtime is preloaded, and leak detection is off
# (the interpreter keeps memory until exit by design).
set -eu
cd "$(dirname "$0")/.."
KEEP=${1:-}

ARROWMM_SANITIZE=1 python setup.py -q build_ext --inplace

ASAN_LIB=$(gcc -print-file-name=libasan.so)
run_sanitized() {
    LD_PRELOAD="$ASAN_LIB" \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}" \
    ARROWMM_SANITIZED=1 "$@"
}

status=0
# (the corpus script imports arrowmm, so it runs under the preloaded runtime too)
[ -d fuzz/corpus/seed ] || run_sanitized python fuzz/make_corpus.py fuzz/corpus/seed
# The seeds, what earlier fuzzing runs kept, and the regression inputs.
run_sanitized python fuzz/replay.py fuzz/corpus tests/hostile/regressions || status=1
# duckdb's tests are left out: under a preloaded ASan runtime, duckdb aborts (a CHECK in ASan's
# __cxa_throw interceptor) whenever it throws, even on pyarrow's own data (decimal256).
# shellcheck disable=SC2086
run_sanitized python -m pytest -q -x -p no:cacheprovider -k "not duckdb" ${PYTEST_ARGS:-tests} || status=1

if [ "$KEEP" != "--keep" ]; then
    python setup.py -q build_ext --inplace  # back to the normal (release) build
fi
exit $status
