"""Tests of arrowmm.shm: shared-memory segments and channels, with real processes."""
