"""Fixtures of the types tests: none shared yet (a fixture that two modules of this folder use
goes here; one that other folders use too goes to tests/conftest.py)."""
