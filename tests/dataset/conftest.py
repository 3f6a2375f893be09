"""Fixtures of the dataset tests (none beyond the root conftest's yet)."""
