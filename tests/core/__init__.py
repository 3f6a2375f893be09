"""Tests of arrowmm._core: the Cython kernels (regions, bitmaps, offsets, UTF-8, arenas,
to_pylist, shared-memory sync)."""
