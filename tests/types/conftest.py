"""Fixtures of the types tests (none beyond the root conftest's yet)."""
