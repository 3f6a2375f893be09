"""Fixtures of the shm tests (none beyond the root conftest's yet)."""
