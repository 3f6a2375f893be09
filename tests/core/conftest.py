"""Fixtures of the core tests (none beyond the root conftest's yet)."""
