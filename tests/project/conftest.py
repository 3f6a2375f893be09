"""Fixtures of the project tests (none beyond the root conftest's yet)."""
