"""Three ways of reading the same bytes agree: the file reader, the stream reader over the bytes
after the 8-byte file magic (zero-copy), and the stream reader fed those bytes in random chunks.

"Agree" is ``harness.outcome``: the same schema, then batch by batch the same rows (each batch
fully validated first), ending with an error of the same kind at the same batch, or not at all.

* every file of the fuzz seed corpus (``fuzz/make_corpus.py``: every type, compressed or not,
  big-endian, legacy framing, dictionary deltas, no batches) reads the same three ways, with
  the values pyarrow reads; every stream of it reads the same zero-copy and chunked;
* seeded corruptions of the message bodies of files (where all three read the same bytes)
  give the same batches and fail at the same batch;
* seeded corruptions anywhere in streams give the same outcome zero-copy and chunked.
"""
from __future__ import annotations

import functools
import io
import random

import pyarrow as pa
import pytest

import arrowmm
from tests.hostile.test_hostile import SAMPLE_KEYS, layout

import harness  # fuzz/harness.py (pytest's pythonpath holds fuzz/)
import make_corpus  # fuzz/make_corpus.py (pytest's pythonpath holds fuzz/)



@functools.lru_cache(maxsize=None)
def corpus() -> dict:
    return make_corpus.corpus()


def _ways(data: bytes):
    """Outcomes of the file reader, the stream after the magic, and that stream in chunks."""
    inner = data[8:]
    return (harness.outcome(lambda: arrowmm.open_file(data), file_reader=True),
            harness.outcome(lambda: arrowmm.open_stream(inner)),
            harness.outcome(lambda: arrowmm.open_stream(harness.ChunkedSource(inner))))


def _pyarrow_rows(data: bytes, fmt: str):
    reader = pa.ipc.open_file(data) if fmt == "file" else pa.ipc.open_stream(data)
    if fmt == "file":
        return [reader.get_batch(i).to_pylist() for i in range(reader.num_record_batches)]
    return [b.to_pylist() for b in reader]


def test_corpus_covers_the_forms():
    names = sorted(corpus())
    assert len(names) > 150
    for needle in ("bigendian", "legacy", "lz4", "zstd", "dict_deltas", "views", "list_views",
                   "unions", "ree", "intervals", "no_batches", "no_columns"):
        assert any(needle in n for n in names), needle


@pytest.mark.parametrize("name", sorted(n for n in corpus() if n.endswith(".arrow")))
def test_valid_files_read_alike_three_ways(name):
    data = corpus()[name]
    whole, inner, chunked = _ways(data)
    assert all(kind != "error" for kind, _ in whole), whole[-1]
    assert repr(whole) == repr(inner) == repr(chunked)
    if "bigendian" not in name:  # pyarrow reads big-endian files only by swapping, not as-is
        assert repr([rows for kind, rows in whole if kind == "batch"]) == \
            repr(_pyarrow_rows(data, "file"))


@pytest.mark.parametrize("name", sorted(n for n in corpus() if n.endswith(".arrows")))
def test_valid_streams_read_alike_zero_copy_and_chunked(name):
    data = corpus()[name]
    zero_copy, chunked = harness.stream_outcomes(data)
    assert all(kind != "error" for kind, _ in zero_copy), zero_copy[-1]
    assert repr(zero_copy) == repr(chunked)
    if "bigendian" not in name:
        assert repr([rows for kind, rows in zero_copy if kind == "batch"]) == \
            repr(_pyarrow_rows(data, "stream"))


def test_chunked_source_really_chunks():
    """The chunked reader sees short reads (else the comparison compares nothing new)."""
    src = harness.ChunkedSource(bytes(range(256)) * 16, seed=1)
    sizes = []
    while True:
        got = src.read(4096)
        if not got:
            break
        sizes.append(len(got))
    assert sum(sizes) == 4096 and len(sizes) > 5 and min(sizes) < 8


def _mutate(data: bytes, spans, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        lo, hi = rng.choice(spans)
        pos = rng.randrange(lo, hi)
        out[pos] = rng.choice((0x00, 0xFF, 0x80, rng.randrange(256), out[pos] ^ 0x01))
    return bytes(out)


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_file_body_corruptions_agree(key):
    lay = layout(key, "file")
    spans = [(m.body_start, m.end) for m in lay.messages if m.body_len]
    rng = random.Random(key)
    for case in range(25):
        data = _mutate(lay.data, spans, rng)
        whole, inner, chunked = _ways(data)
        assert repr(whole) == repr(inner) == repr(chunked), (
            f"case {case}:\nfile    {whole!r}\nstream  {inner!r}\nchunked {chunked!r}")


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_stream_corruptions_agree(key):
    lay = layout(key, "stream")
    rng = random.Random(key)
    for case in range(25):
        spans = lay.metadata_spans() if case % 2 else [(0, len(lay.data))]
        data = _mutate(lay.data, spans, rng)
        try:
            harness.target_differential(data)
        except harness.Disagreement as exc:
            raise AssertionError(f"case {case}: {exc}") from None


def test_replaced_dictionary_reads_alike():
    """A stream whose dictionary is replaced between batches: zero-copy and chunked alike."""
    a = pa.record_batch({"d": pa.array(["x", "y"]).dictionary_encode()})
    b = pa.record_batch({"d": pa.array(["z"]).dictionary_encode()})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, a.schema) as w:
        w.write_batch(a)
        w.write_batch(b)
    zero_copy, chunked = harness.stream_outcomes(sink.getvalue())
    assert zero_copy == chunked == [("schema", zero_copy[0][1]), ("batch", a.to_pylist()),
                                    ("batch", b.to_pylist())]
