"""Fixtures of the interop tests (none beyond the root conftest's yet)."""
