"""Fixtures of the cli tests (none beyond the root conftest's yet)."""
