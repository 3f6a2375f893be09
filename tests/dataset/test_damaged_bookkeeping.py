"""A dataset folder whose bookkeeping is damaged past what ``json`` can parse (nested deeper
than Python's recursion limit) says so as ``ArrowInvalid`` naming the file, never a raw
``RecursionError``."""
import os

import pytest

import arrowmm


def _folder(tmp_path):
    with arrowmm.new_file(tmp_path / "a.arrow", arrowmm.schema([("x", arrowmm.int64())])) as w:
        w.write({"x": [1, 2]})
    return tmp_path


def test_a_success_manifest_nested_too_deep_is_arrow_invalid(tmp_path):
    folder = _folder(tmp_path)
    (folder / "_SUCCESS").write_text("[" * 100_000)
    with pytest.raises(arrowmm.ArrowInvalid, match="_SUCCESS"):
        arrowmm.dataset(str(folder)).to_table()


def test_a_log_manifest_nested_too_deep_is_arrow_invalid(tmp_path):
    folder = _folder(tmp_path)
    os.makedirs(folder / "_arrowmm_log")
    (folder / "_arrowmm_log" / f"{1:020d}.json").write_text("{\"a\":" * 100_000)
    with pytest.raises(arrowmm.ArrowInvalid, match="_arrowmm_log"):
        arrowmm.dataset(str(folder)).to_table()
