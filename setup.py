"""Build the Cython core of arrowmm.

Every ``arrowmm/<layer>/_*.pyx`` module (the kernels and the C ABI in ``_core/``, the C data
interface in ``interop/``, the export walk over IPC messages in ``ipc/read/``) is compiled with the project's directives,
set here once.  ``ARROWMM_DEBUG=1`` turns bounds and wraparound checks back on
(the test suite can run under such a build to catch kernel indexing bugs).
``ARROWMM_SANITIZE=1`` does the same and compiles with AddressSanitizer and
UndefinedBehaviorSanitizer (``fuzz/sanitize.sh`` builds it in place and runs the
test suite and the fuzz corpus under it; CPython itself is not instrumented, so
the runtime is preloaded: ``LD_PRELOAD=$(gcc -print-file-name=libasan.so)``).
"""
import glob
import os
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# What compiling needs, beyond setuptools (pyproject.toml's [build-system]). pip installs these
# into its build environment only when something is to be compiled (``setup_requires``, which
# setuptools' build backend hands to pip): the Quick start's editable install, which follows a
# build of every module, fetched and unpacked numpy and Cython (and ran them) for nothing.
COMPILE_REQUIRES = ["Cython>=3.0", "numpy>=1.24"]
try:
    import numpy
    from Cython import __version__ as cython_version
    from Cython.Build import cythonize
except ImportError:
    numpy = cython_version = cythonize = None

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
        include_dirs=[numpy.get_include()] if numpy else [],  # (no numpy: nothing compiles)
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
    """``build_ext`` compiling the extensions in parallel by default (setuptools: one at a time),
    and an editable install building where a regular one does.

    setuptools skips a module whose built copy is newer than its ``.c`` (and Cython leaves a
    ``.c`` newer than its ``.pyx`` alone), but an editable install builds into a new temporary
    folder each time, so ``pip install -e .`` compiled every module again, even right after
    ``pip install .`` had built them all.  Here it builds into ``build/lib.<platform>`` and
    ``build/temp.<platform>`` as a wheel build does, then copies the modules into the source tree:
    what the last build of either kind made is reused, and only changed modules compile.
    """

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel and JOBS > 1:
            self.parallel = JOBS
        if self.editable_mode:
            regular = self.distribution.get_command_class("build")(self.distribution)
            regular.ensure_finalized()  # a build command with the defaults: where wheels build
            self.build_lib, self.build_temp = regular.build_platlib, regular.build_temp


DECLARATIONS = [path for pattern in ("*.pxd", "*.pxi")
                for path in glob.glob(os.path.join("arrowmm", "**", pattern), recursive=True)]


def _c_is_current(ext) -> bool:
    """Whether the ``.c`` beside this module's ``.pyx`` is up to date: written by the Cython
    running now, after the ``.pyx`` and every ``.pxd``/``.pxi`` of the project.

    Cython's own test also counts the declarations it ships (``libc/``, ``cpython/``), and pip
    installs a new Cython for each isolated build, whose files are newer than any ``.c``: every
    ``pip install`` translated every module again, and then compiled it again.  Those files
    change with Cython's version, which the ``.c`` records in its first line (without Cython at
    hand, a ``.c`` newer than the project's sources is taken as it is).
    """
    pyx = ext.sources[0]
    c = os.path.splitext(pyx)[0] + ".c"
    try:
        with open(c) as f:
            header = f.readline().strip()
        written = os.path.getmtime(c)
    except OSError:
        return False
    return ((cython_version is None or header == f"/* Generated by Cython {cython_version} */")
            and all(os.path.getmtime(dep) < written for dep in [pyx, *DECLARATIONS]))


current = [ext for ext in extensions if not _forced and _c_is_current(ext)]
for ext in current:
    ext.sources = [os.path.splitext(ext.sources[0])[0] + ".c"]
stale = [ext for ext in extensions if ext not in current]

# Where a build of either kind leaves the modules (build_ext's build_lib, ParallelBuildExt).
BUILD_LIB = os.path.join("build", f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}")


def _built_is_current(ext) -> bool:
    """Whether ``build/lib.<platform>`` holds this module, newer than its current ``.c`` (so
    setuptools' build_ext skips it, as up to date)."""
    built = os.path.join(BUILD_LIB, *ext.name.split(".")) + sysconfig.get_config_var("EXT_SUFFIX")
    try:
        return os.path.getmtime(built) > os.path.getmtime(ext.sources[0])
    except OSError:
        return False


if cythonize is None:
    # Without Cython and numpy, only a build that compiles nothing goes on; any other asks for
    # them (pip installs them into its build environment and runs this again, then with them).
    if stale or not all(_built_is_current(ext) for ext in current):
        setup(setup_requires=COMPILE_REQUIRES)
        sys.exit("setup.py: Cython and numpy are needed to compile the extensions: pip install "
                 + " ".join(f"'{requirement}'" for requirement in COMPILE_REQUIRES))
    ext_modules = current
else:
    ext_modules = current + (cythonize(stale, compiler_directives=directives, force=True,
                                       nthreads=JOBS if JOBS > 1 else 0) if stale else [])
# The largest C files first, so that the last module to start compiling is a small one (in path
# order the two largest came last, and compiled one after the other while the other core idled).
ext_modules.sort(key=lambda ext: -os.path.getsize(ext.sources[0]))

setup(ext_modules=ext_modules, cmdclass={"build_ext": ParallelBuildExt})
