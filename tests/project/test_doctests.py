"""The Examples in arrowmm's docstrings run and give what they show."""
import doctest
import sys

import pytest

import arrowmm._core._region
import arrowmm.ipc.read.file_reader
from arrowmm.arrays import chunked, table
from arrowmm.dataset import scan

MODULES = [arrowmm.ipc.read.file_reader, sys.modules["arrowmm.ipc.write.repair"],  # (ipc.write.repair is the function)
           arrowmm._core._region, table, chunked, scan]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0
