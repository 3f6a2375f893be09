"""Fixtures of the arrays tests (none beyond the root conftest's yet)."""
