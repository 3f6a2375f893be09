"""The legacy (pre-0.15) framing: 4-byte length prefixes, no continuation marker, 4-byte EOS.

pyarrow's ``use_legacy_format=True`` output of every type reads equal in arrowmm (alone, with
metadata version V4 as Arrow 0.14 wrote it, and compressed); arrowmm's ``legacy_format=True``
output reads equal in pyarrow.
"""
from __future__ import annotations

import io

import pyarrow as pa
import pytest

from tests.support.writer_support import (CASES, FORMATS, N, assert_batches_equal, messages, to_mm,
                                          write_mm)

import arrowmm

V4 = pa.ipc.MetadataVersion.V4


def table(nulls=True) -> pa.Table:
    return pa.table({name: build(N, nulls) for name, build in CASES.items()})


def pa_legacy(tab, fmt, **options) -> bytes:
    sink = io.BytesIO()
    opener = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    opts = pa.ipc.IpcWriteOptions(use_legacy_format=True, **options)
    with opener(sink, tab.schema, options=opts) as w:
        for b in tab.to_batches(max_chunksize=20):
            w.write_batch(b)
    return sink.getvalue()


def _readers(data, fmt):
    yield arrowmm.open(data)
    yield arrowmm.open_stream(io.BytesIO(data)) if fmt == "stream" else arrowmm.open_file(data)
    if fmt == "stream":
        yield arrowmm.open_stream(data)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("options", [{}, {"metadata_version": V4}, {"compression": "lz4"}],
                         ids=["V5", "V4", "lz4"])
def test_pyarrow_legacy_output_reads_equal(fmt, options):
    tab = table()
    if options.get("metadata_version") == V4:  # pyarrow's own V4 reader refuses V5-only layouts
        tab = tab.drop_columns([c for c in tab.column_names if "view" in c])
    data = pa_legacy(tab, fmt, **options)
    assert all(m.legacy_prefix for m in messages(data))
    want = tab.to_batches(max_chunksize=20)
    for reader in _readers(data, fmt):
        got = list(reader)
        assert len(got) == len(want)
        for mine, theirs in zip(got, want):
            assert_batches_equal(pa.record_batch(mine), theirs)
            mine.validate(full=True)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("options", [{}, {"metadata_version": "V4"}, {"compression": "zstd"}],
                         ids=["V5", "V4", "zstd"])
def test_arrowmm_legacy_output_reads_in_pyarrow(fmt, options):
    tab = table()
    (src,) = to_mm(tab)
    data = write_mm([src, src.slice(4, 11)], src.schema, fmt, legacy_format=True, **options)
    head = data[8:12] if fmt == "file" else data[:4]
    assert head != b"\xff\xff\xff\xff" and all(m.legacy_prefix for m in messages(data))
    got = (pa.ipc.open_file(pa.py_buffer(data)) if fmt == "file" else pa.ipc.open_stream(data)).read_all()
    assert_batches_equal(got.to_batches()[0], tab.to_batches()[0])
    assert_batches_equal(got.to_batches()[1], tab.slice(4, 11).to_batches()[0])
    back = list(arrowmm.open(data))
    assert_batches_equal(pa.record_batch(back[1]), tab.slice(4, 11).to_batches()[0])


def test_legacy_stream_end_of_stream_and_truncation():
    tab = pa.table({"x": [1, 2, 3]})
    data = pa_legacy(tab, "stream")
    assert data.endswith(b"\x00\x00\x00\x00") and not data.endswith(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    assert [b.to_pydict() for b in arrowmm.open_stream(data)] == [{"x": [1, 2, 3]}]
    # a legacy stream without its EOS marker (as a killed writer leaves it) still reads
    assert [b.to_pydict() for b in arrowmm.open_stream(data[:-4])] == [{"x": [1, 2, 3]}]
    with pytest.raises(arrowmm.ArrowInvalid):
        list(arrowmm.open_stream(data[:-9]))
