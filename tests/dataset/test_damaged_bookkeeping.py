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


def _unsuffixed_parts(write) -> None:
    """Two IPC files named as Hive or MapReduce jobs name them (no extension), the second's
    first eight bytes damaged (zeroed by a crash, or a flipped bit in its magic); its footer
    and batches whole."""
    import pyarrow as pa
    for k, head in enumerate([None, bytes(8)]):
        sink = pa.BufferOutputStream()
        t = pa.table({"x": [k * 10 + 1, k * 10 + 2]})
        with pa.ipc.new_file(sink, t.schema) as w:
            w.write_table(t)
        data = bytearray(sink.getvalue().to_pybytes())
        if head is not None:
            data[:8] = head
        write(f"part-{k}", bytes(data))


def _never_silently_fewer(ds) -> None:
    # (the damaged file is in the dataset: reading says what is wrong, naming it; before, it
    # was not a data file, and to_table gave the other file's 2 rows without a word)
    assert any(f.endswith("part-1") for f in ds.files)
    with pytest.raises(arrowmm.ArrowInvalid, match="part-1"):
        ds.to_table()


def test_a_file_whose_head_is_damaged_stays_in_the_dataset(tmp_path):
    _unsuffixed_parts(lambda name, data: (tmp_path / name).write_bytes(data))
    _never_silently_fewer(arrowmm.dataset(str(tmp_path)))


def test_a_file_whose_head_is_damaged_stays_in_a_dataset_on_a_filesystem():
    fsspec = pytest.importorskip("fsspec", reason="fsspec is in the test extras")
    mem = fsspec.filesystem("memory")
    try:
        _unsuffixed_parts(lambda name, data: mem.pipe_file(f"/damaged-head/{name}", data))
        _never_silently_fewer(arrowmm.dataset("memory://damaged-head"))
    finally:
        mem.rm("/damaged-head", recursive=True)
