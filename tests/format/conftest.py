"""Fixtures of the format tests (none beyond the root conftest's yet)."""
