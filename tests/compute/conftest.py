"""Fixtures of the compute tests (none beyond the root conftest's yet)."""
