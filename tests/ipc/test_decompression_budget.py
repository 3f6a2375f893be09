"""The per-reader decompression budget: ``max_decompressed_bytes=`` on ``open_file`` /
``open_stream`` / ``open``, and the default tied to the source's size (``limits``): beyond it
``ArrowInvalid`` names the budget, the total and how to raise it, on every read path; a
buffer decoded again (a file's batch asked for again) is not counted again."""
from __future__ import annotations

import io
import os
import threading

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid, limits
from tests.support.helpers import ipc_bytes

ROWS = 1 << 17  # 1 MiB of int64 zeros per batch: no validity bitmap, one compressed buffer
MIB = 1 << 20


@pytest.fixture(autouse=True)
def _defaults():
    limits.reset()
    yield
    limits.reset()


def _zeros(fmt: str, codec: str = "zstd", batches: int = 4, rows: int = ROWS) -> bytes:
    batch = pa.record_batch({"x": pa.array(np.zeros(rows, np.int64))})
    return ipc_bytes([batch] * batches, fmt=fmt, compression=codec)


class _NoFileno(io.BufferedReader):
    """A seekable file object without a descriptor: ``open_file`` reads it by byte ranges."""

    def fileno(self):
        raise io.UnsupportedOperation("fileno")


def _readers(data: bytes, fmt: str, tmp_path, **kw):
    """``data`` opened on each read path that decompresses, with ``kw``."""
    path = tmp_path / f"data.{fmt}"
    path.write_bytes(data)
    if fmt == "file":
        yield "mapped", arrowmm.open_file(str(path), **kw)
        yield "bytes", arrowmm.open_file(data, **kw)
        yield "mmap=False", arrowmm.open_file(str(path), mmap=False, **kw)
        yield "ranged", arrowmm.open_file(_NoFileno(io.BytesIO(data)), **kw)
    else:
        yield "mapped", arrowmm.open_stream(str(path), **kw)
        yield "file object", arrowmm.open_stream(io.BufferedReader(io.FileIO(str(path))), **kw)
        yield "mmap=False", arrowmm.open_stream(str(path), mmap=False, **kw)
    yield "open", arrowmm.open(str(path), **kw)


def _decode_all(reader) -> int:
    return sum(len(b.column(0).to_numpy()) for b in reader)


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_a_budget_of_the_readers_own_counts_every_batch(fmt, codec, tmp_path):
    """Four batches of 1 MiB each: a budget of 3.5 MiB reads three and refuses the fourth's
    buffer before decoding it, naming the budget, the total and how to raise it."""
    data = _zeros(fmt, codec)
    for way, reader in _readers(data, fmt, tmp_path, max_decompressed_bytes=7 * MIB // 2):
        with reader:
            batches = list(reader)
            for b in batches[:3]:
                assert not b.column(0).to_numpy().any(), way
            with pytest.raises(ArrowInvalid, match=r"column 0 \('x'\).*decompressed bytes of "
                                                   r"the reader, this buffer included: 4,194,304 "
                                                   r"is beyond its budget max_decompressed_bytes"
                                                   r"=3,670,016 \(open the source with a larger "
                                                   r"max_decompressed_bytes=...\)"):
                batches[3].column(0)
    for way, reader in _readers(data, fmt, tmp_path, max_decompressed_bytes=4 * MIB):
        with reader:
            assert _decode_all(reader) == 4 * ROWS, way


def test_a_batch_read_again_is_not_counted_again(tmp_path):
    """A file's batches decoded over and over (``get_batch`` makes a new batch each time) cost
    the budget once: exactly the file's uncompressed bytes are enough for any number of
    reads."""
    data = _zeros("file")
    for way, reader in _readers(data, "file", tmp_path, max_decompressed_bytes=4 * MIB):
        with reader:
            for _ in range(3):
                assert _decode_all(reader) == 4 * ROWS, way
                assert reader.read_all().to_pydict()["x"][:1] == [0]
            assert reader.get_batch(-1).column(0).to_numpy().size == ROWS


def test_batches_decoded_on_many_threads_share_one_budget():
    data = _zeros("file", batches=8)
    reader = arrowmm.open_file(data, max_decompressed_bytes=6 * MIB)
    errors = []

    def decode(i):
        try:
            reader.get_batch(i).column(0)
        except ArrowInvalid as exc:
            errors.append(exc)
    threads = [threading.Thread(target=decode, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(errors) == 2 and all("max_decompressed_bytes=6,291,456" in str(e) for e in errors)


def test_the_default_budget_is_a_multiple_of_the_source_with_a_floor(tmp_path):
    """The default: ``max_reader_decompression_ratio`` times the source's bytes, at least
    ``min_reader_decompression_budget``.  All-zero int64 compresses ~9,000:1 with zstd at
    8 MiB (32,000:1 at 1 GiB: see ``limits``), so it reads under the default ratio of 65,536
    and is refused under a ratio of 1,024 once the floor is lowered."""
    assert limits.DEFAULTS["max_reader_decompression_ratio"] == 1 << 16
    assert limits.DEFAULTS["min_reader_decompression_budget"] == 64 << 20
    data = _zeros("file", batches=1, rows=8 * ROWS)  # 8 MiB of zeros
    assert len(data) * 4096 < 8 * MIB < len(data) * 65536
    with limits.override(min_reader_decompression_budget=1):
        for way, reader in _readers(data, "file", tmp_path):
            with reader:
                assert _decode_all(reader) == 8 * ROWS, way
    with limits.override(min_reader_decompression_budget=1, max_reader_decompression_ratio=1024):
        for way, reader in _readers(data, "file", tmp_path):
            with reader, pytest.raises(ArrowInvalid, match=(
                    rf"decompressed bytes of the reader, this buffer included: 8,388,608 is "
                    rf"beyond its default budget of {len(data) * 1024:,} bytes, max\(limits."
                    rf"min_reader_decompression_budget=1, limits.max_reader_decompression_ratio"
                    rf"=1,024 x the {len(data):,} bytes of the source\) \(open the source with "
                    rf"max_decompressed_bytes=..., or raise the ratio with arrowmm.set_limits"
                    rf"\(max_reader_decompression_ratio=...\)\)")):
                _decode_all(reader)
        # the floor: what a small source may always decompress to
        arrowmm.set_limits(min_reader_decompression_budget=8 * MIB)
        with arrowmm.open_file(data) as reader:
            assert _decode_all(reader) == 8 * ROWS
        # a budget given when opening replaces the default
        with arrowmm.open_file(data, max_decompressed_bytes=8 * MIB) as reader:
            assert _decode_all(reader) == 8 * ROWS


def test_the_default_budget_of_a_pipe_grows_with_the_bytes_read():
    """A stream read from a pipe has no size: its default budget is a multiple of the bytes
    read so far, which always include the compressed bytes of the buffer being decoded."""
    data = _zeros("stream", batches=3)
    rfd, wfd = os.pipe()

    def write():
        view = memoryview(data)
        while view:
            view = view[os.write(wfd, view):]
        os.close(wfd)
    writer = threading.Thread(target=write)
    writer.start()
    ratio = (MIB // (len(data) // 3)) + 64  # one batch's buffer fits the bytes of one batch
    try:
        with limits.override(min_reader_decompression_budget=1,
                             max_reader_decompression_ratio=ratio), \
                arrowmm.open_stream(os.fdopen(rfd, "rb")) as reader:
            assert _decode_all(reader) == 3 * ROWS
    finally:
        writer.join()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "1"])
def test_a_budget_that_is_not_a_positive_integer_is_refused(bad):
    data = _zeros("file", batches=1)
    for opener in (arrowmm.open_file, arrowmm.open_stream, arrowmm.open):
        with pytest.raises(ArrowInvalid, match="max_decompressed_bytes must be a positive "
                                               "integer or None"):
            opener(data, max_decompressed_bytes=bad)


def test_uncompressed_files_are_not_counted():
    data = ipc_bytes([pa.record_batch({"x": pa.array(np.zeros(ROWS, np.int64))})] * 4)
    with arrowmm.open_file(data, max_decompressed_bytes=1) as reader:
        assert _decode_all(reader) == 4 * ROWS
