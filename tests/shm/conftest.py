"""Fixtures of the shm tests (a fixture that two modules of this folder use goes here; one
that other folders use too goes to tests/conftest.py)."""
import itertools
import os

import pytest

_counter = itertools.count()


@pytest.fixture
def name(request):
    """A fresh segment name for the test (its module's ``PREFIX`` and a counter), unlinked
    after it.  Modules that keep their own ``name`` fixture override this one."""
    n = f"{request.module.PREFIX}{next(_counter)}"
    yield n
    try:
        os.unlink(f"/dev/shm/{n}")
    except FileNotFoundError:
        pass
