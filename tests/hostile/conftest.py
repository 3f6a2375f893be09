"""Fixtures of the hostile tests (none beyond the root conftest's yet)."""
