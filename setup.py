"""Build the Cython core of arrowmm.

Every ``arrowmm/_*.pyx`` module is compiled with the project's directives,
set here once.  ``ARROWMM_DEBUG=1`` turns bounds and wraparound checks back on
(the test suite can run under such a build to catch kernel indexing bugs).
"""
import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ARROWMM_DEBUG", "") not in ("", "0")

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
        "arrowmm." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
    )
    for path in sorted(glob.glob(os.path.join("arrowmm", "_*.pyx")))
    if not ONLY or os.path.splitext(os.path.basename(path))[0] in ONLY
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
