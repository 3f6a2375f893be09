"""Parsed footers are kept by their bytes (``format.footer_cache``): reopening a file skips
the parse, and nothing a reader could tell apart from a fresh parse leaks through: a file
rewritten reads its new footer, a lowered limit is enforced again, metadata dicts are the
reader's own, and a footer too big to keep is parsed every time."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.format import footer_cache


def _table(n_cols: int, rows: int = 3) -> pa.Table:
    return pa.table({f"c{i}": pa.array(range(rows), pa.int64()) for i in range(n_cols)})


def _write(path, table, metadata=None, batches=1):
    with pa.ipc.new_file(str(path), table.schema, metadata=metadata) as w:
        for _ in range(batches):
            w.write_table(table)
    return path


def test_a_reopened_file_is_served_from_the_cache_and_matches_a_fresh_parse(tmp_path):
    footer_cache.clear()
    path = _write(tmp_path / "t.arrow", _table(20), metadata={"k": "v"})
    with arrowmm.open_file(path) as r1:
        schema1, meta1 = r1.schema, r1.metadata
    with arrowmm.open_file(path) as r2:
        assert r2.schema is schema1  # (the same parse, kept)
        assert r2.metadata == {"k": "v"} and r2.metadata is not meta1
        r2.metadata["k"] = "changed by a user"
        assert r2.get_batch(0).column(19).to_pylist() == [0, 1, 2]
    with arrowmm.open_file(path) as r3:
        assert r3.metadata == {"k": "v"}  # (one reader's dict is its own)
        assert len(footer_cache._CACHE) == 1


def test_a_file_rewritten_in_place_reads_its_new_footer(tmp_path):
    footer_cache.clear()
    path = _write(tmp_path / "t.arrow", _table(5))
    st = os.stat(path)
    with arrowmm.open_file(path) as r:
        assert r.schema.names == [f"c{i}" for i in range(5)]
    other = pa.table({f"d{i}": pa.array(range(3), pa.int64()) for i in range(5)})
    _write(path, other)  # same size, new names
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size
    with arrowmm.open_file(path) as r:
        assert r.schema.names == [f"d{i}" for i in range(5)]
        assert r.get_batch(0).column("d4").to_pylist() == [0, 1, 2]


def test_a_lowered_limit_is_enforced_on_a_footer_parsed_before(tmp_path):
    footer_cache.clear()
    path = _write(tmp_path / "t.arrow", _table(50))
    with arrowmm.open_file(path) as r:
        assert len(r.schema) == 50
    with arrowmm.limits.override(max_fields=10):
        with pytest.raises(arrowmm.ArrowInvalid, match="max_fields"):
            arrowmm.open_file(path)
    with arrowmm.open_file(path) as r:
        assert len(r.schema) == 50


def test_a_footer_over_the_size_kept_is_parsed_every_time(tmp_path, monkeypatch):
    footer_cache.clear()
    monkeypatch.setattr(footer_cache, "MAX_FOOTER_BYTES", 64)
    path = _write(tmp_path / "t.arrow", _table(20))
    with arrowmm.open_file(path) as r1, arrowmm.open_file(path) as r2:
        assert r1.schema == r2.schema and r1.schema is not r2.schema
    assert len(footer_cache._CACHE) == 0


def test_the_cache_keeps_at_most_max_entries(tmp_path, monkeypatch):
    footer_cache.clear()
    monkeypatch.setattr(footer_cache, "MAX_ENTRIES", 3)
    for i in range(6):
        with arrowmm.open_file(_write(tmp_path / f"t{i}.arrow", _table(i + 1))) as r:
            assert len(r.schema) == i + 1
    assert len(footer_cache._CACHE) == 3


def test_changing_a_readers_schema_metadata_changes_no_other_reader(tmp_path):
    # the cache hands every open of one footer the same Schema and Fields: their metadata is
    # a dict of its own for each caller, as pyarrow's (it was the shared one: a change showed
    # in every later open of the file)
    footer_cache.clear()
    path = tmp_path / "md.arrow"
    schema = pa.schema([pa.field("a", pa.int32(), metadata={"k": "v"})], metadata={"s": "1"})
    with pa.ipc.new_file(path, schema):
        pass
    first = arrowmm.open_file(path)
    first.schema.field(0).metadata["k"] = "CHANGED"
    first.schema.metadata["s"] = "CHANGED"
    second = arrowmm.open_file(path)
    assert second.schema is first.schema  # (served from the cache)
    assert second.schema.field(0).metadata == {"k": "v"}
    assert second.schema.metadata == {"s": "1"} and second.metadata == {"s": "1"}
