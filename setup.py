"""Build the Cython core of arrowmm.

Every ``arrowmm/<layer>/_*.pyx`` module (the kernels and the C ABI in ``_core/``, the C data
interface in ``interop/``, the export walk over IPC messages in ``ipc/``) is compiled with the project's directives,
set here once.  ``ARROWMM_DEBUG=1`` turns bounds and wraparound checks back on
(the test suite can run under such a build to catch kernel indexing bugs).
``ARROWMM_SANITIZE=1`` does the same and compiles with AddressSanitizer and
UndefinedBehaviorSanitizer (``fuzz/sanitize.sh`` builds it in place and runs the
test suite and the fuzz corpus under it; CPython itself is not instrumented, so
the runtime is preloaded: ``LD_PRELOAD=$(gcc -print-file-name=libasan.so)``).
"""
import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Cores this process may use: Cython translates, and the compiler compiles, that many modules
# at once (``build_ext -j N`` or ARROWMM_BUILD_JOBS=N to choose).
JOBS = int(os.environ.get("ARROWMM_BUILD_JOBS") or
           (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))

SANITIZE = os.environ.get("ARROWMM_SANITIZE", "") not in ("", "0")
DEBUG = SANITIZE or os.environ.get("ARROWMM_DEBUG", "") not in ("", "0")
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                   "-fno-sanitize-recover=undefined"]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

# ARROWMM_ONLY=_bitmap,_offsets builds just those modules (handy while another is mid-edit).
ONLY = {name for name in os.environ.get("ARROWMM_ONLY", "").split(",") if name}

extensions = [
    Extension(
        os.path.splitext(path)[0].replace(os.sep, "."),
        [path],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # release: no debug information (Python's own CFLAGS carry -g; -g0 after it wins)
        extra_compile_args=(["-O1", "-g"] + SANITIZER_FLAGS if SANITIZE
                            else ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]),
        extra_link_args=SANITIZER_FLAGS if SANITIZE else [],
    )
    for path in sorted(glob.glob(os.path.join("arrowmm", "**", "_*.pyx"), recursive=True))
    if not ONLY or os.path.splitext(os.path.basename(path))[0] in ONLY
]

# Cython regenerates a .c only when its .pyx is newer, so a change of flavour (release, debug,
# sanitize: other directives and flags) forces it; the last flavour is kept in build/.
FLAVOUR = "sanitize" if SANITIZE else "debug" if DEBUG else "release"
_STAMP = os.path.join("build", "arrowmm-flavour")
try:
    with open(_STAMP) as f:
        _forced = f.read().strip() != FLAVOUR
except OSError:
    _forced = FLAVOUR != "release"  # no record: the existing .c files are taken as a release build
os.makedirs("build", exist_ok=True)
with open(_STAMP, "w") as f:
    f.write(FLAVOUR)

class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the extensions in parallel by default (setuptools: one at a time)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel and JOBS > 1:
            self.parallel = JOBS


setup(ext_modules=cythonize(extensions, compiler_directives=directives, force=_forced,
                            nthreads=JOBS if JOBS > 1 else 0),
      cmdclass={"build_ext": ParallelBuildExt})
