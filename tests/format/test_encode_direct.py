"""The messages every batch sends (record batch and dictionary batch Messages, the Footer, the
schema Message around its cached table) are written by ``encode._Back``, not by the generic
``flatbuffers.Builder``: the bytes must be the Builder's, for every shape (vector lengths,
zero scalars left out, compression, variadic counts, deltas, metadata whose KeyValue tables
share a vtable with the schema's)."""
from __future__ import annotations

import copy
import random

import flatbuffers
import numpy as np
import pytest

import arrowmm.types as t
from arrowmm.format import BLOCK, MessageHeader, MetadataVersion, encode
from arrowmm.format._fbs import (BodyCompression as _BodyCompression,
                                 DictionaryBatch as _DictionaryBatch, Footer as _Footer,
                                 RecordBatch as _RecordBatch)


# -- the generic Builder's encoding (what encode.py did before _Back), the reference ---------

def _builder_with_schema(size: int, schema, features) -> tuple:
    """A builder holding only ``schema``'s table (from ``encode``'s cache, as the writers used
    it), and that table's offset."""
    tail, sch, minalign, vtables = encode._schema_tail(schema, features)
    b = flatbuffers.Builder(max(size, 2 * len(tail)))
    b.head = len(b.Bytes) - len(tail)
    b.Bytes[b.head:] = tail
    b.minalign = minalign
    b.vtables = copy.copy(vtables)
    return b, sch


def _raw_vector(b, payload: bytes, elem_size: int, count: int, alignment: int = 8) -> int:
    """A vector of ``count`` structs whose little-endian bytes are ``payload``; an empty one
    aligned as its length alone (4), as Arrow C++'s builder leaves it."""
    b.StartVector(elem_size, count, alignment if count else 4)
    b.head = b.head - len(payload)
    b.Bytes[b.head:b.head + len(payload)] = payload
    return b.EndVector()


def _builder_batch_message(length, nodes, buffers, body_length, compression=None, variadic=None,
                           metadata=None, dictionary_id=None, is_delta=False,
                           version=MetadataVersion.V5) -> bytes:
    b = flatbuffers.Builder(256)
    node_vec = _raw_vector(b, nodes.astype("<i8").tobytes(), 16, len(nodes) // 2)
    buffer_vec = _raw_vector(b, buffers.astype("<i8").tobytes(), 16, len(buffers) // 2)
    variadic_vec = None
    if variadic is not None and len(variadic):
        variadic_vec = b.CreateNumpyVector(np.asarray(variadic, dtype="<i8"))
    comp = None
    if compression is not None:
        comp = encode._table(b, _BodyCompression, ("Method", 0),
                             ("Codec", encode._CODEC_CODE[compression]))
    rb = encode._table(b, _RecordBatch, ("Length", length), ("VariadicBufferCounts", variadic_vec),
                       ("Compression", comp), ("Buffers", buffer_vec), ("Nodes", node_vec))
    if dictionary_id is None:
        return encode.finish_message(b, MessageHeader.RecordBatch, rb, body_length, metadata,
                                     version)
    header = encode._table(b, _DictionaryBatch, ("Id", dictionary_id), ("Data", rb),
                           ("IsDelta", is_delta))
    return encode.finish_message(b, MessageHeader.DictionaryBatch, header, body_length, metadata,
                                 version)


def _builder_footer(schema, dictionaries, record_batches, metadata=None,
                    version=MetadataVersion.V5, features=()) -> bytes:
    b, sch = _builder_with_schema(1024, schema, features)
    dict_vec = _raw_vector(b, dictionaries.tobytes(), 24, len(dictionaries))
    batch_vec = _raw_vector(b, record_batches.tobytes(), 24, len(record_batches))
    md = encode._encode_key_values(b, metadata)
    b.Finish(encode._table(b, _Footer, ("CustomMetadata", md), ("RecordBatches", batch_vec),
                           ("Dictionaries", dict_vec), ("Schema", sch), ("Version", version)))
    return bytes(b.Output())


def _builder_schema_message(schema, version=MetadataVersion.V5, features=()) -> bytes:
    b, sch = _builder_with_schema(1024, schema, features)
    return encode.finish_message(b, MessageHeader.Schema, sch, 0, None, version)


# -- random shapes ---------------------------------------------------------------------------

def _metadata(rng: random.Random):
    pick = rng.random()
    if pick < 0.3:
        return None
    if pick < 0.4:
        return {}
    words = ["", "k", "ARROW:extension:name", "é", "ключ", "\udcff", "x" * 37, "🦆" * 5]
    return {rng.choice(words) + str(i): rng.choice(words) * rng.randint(0, 3)
            for i in range(rng.randint(1, 6))}


def _scalar(rng: random.Random, big: int) -> int:
    return rng.choice([0, 1, rng.randint(0, big), rng.randint(0, 1 << 62)])


_SCHEMAS = [
    t.Schema([]),
    t.Schema([t.Field("a", t.int64())]),
    t.Schema([t.Field("a", t.int64(), metadata={"k": "v"}), t.Field("s", t.string())],
             metadata={"owner": "me", "é": "ü"}),
    t.Schema([t.Field("d", t.dictionary(t.int32(), t.string()), dictionary_id=0),
              t.Field("l", t.list_(t.struct([t.Field("x", t.float64())]))),
              t.Field("ts", t.timestamp("us", "Europe/Paris"))], endianness="big"),
]


def _same_shape(rng: random.Random, value: int, big: int) -> int:
    """Another value that a message leaves out, or writes, as it does ``value``."""
    return 0 if value == 0 else rng.randint(1, big)


@pytest.mark.parametrize("seed", range(400))
def test_batch_messages_equal_the_builders(seed):
    rng = random.Random(seed)
    n_nodes, n_buffers = rng.randint(0, 50), rng.randint(0, 50)
    variadic = rng.choice([None, [], [rng.randint(0, 9) for _ in range(rng.randint(1, 8))]])
    kwargs = dict(compression=rng.choice([None, "lz4", "zstd"]), variadic=variadic,
                  metadata=_metadata(rng), is_delta=rng.random() < 0.5,
                  version=rng.choice([MetadataVersion.V4, MetadataVersion.V5]))
    dictionary_id = rng.choice([None, 0, _scalar(rng, 100)])
    length, body_length = _scalar(rng, 1000), _scalar(rng, 1 << 20)
    encode._TEMPLATES.clear()
    for _ in range(2):  # (built, then patched into the first one's template)
        nodes = np.array([rng.randint(0, 1 << 40) for _ in range(2 * n_nodes)], np.int64)
        buffers = np.array([rng.randint(0, 1 << 40) for _ in range(2 * n_buffers)], np.int64)
        got = encode.encode_batch_message(length, nodes, buffers, body_length,
                                          dictionary_id=dictionary_id, **kwargs)
        assert got == _builder_batch_message(length, nodes, buffers, body_length,
                                             dictionary_id=dictionary_id, **kwargs)
        length, body_length = _same_shape(rng, length, 1000), _same_shape(rng, body_length, 1 << 40)
        if dictionary_id is not None:
            dictionary_id = _same_shape(rng, dictionary_id, 1 << 40)


def _blocks(rng: random.Random, count: int) -> np.ndarray:
    rows = np.zeros(count, BLOCK)
    for name in ("offset", "metadata_length", "body_length"):
        top = (1 << 31) - 1 if name == "metadata_length" else 1 << 62
        rows[name] = [rng.choice([0, rng.randint(0, top)]) for _ in range(count)]
    return rows


@pytest.mark.parametrize("seed", range(200))
def test_footers_and_schema_messages_equal_the_builders(seed):
    rng = random.Random(seed)
    schema = rng.choice(_SCHEMAS)
    features = rng.choice([(), ("COMPRESSED_BODY",),
                           ("DICTIONARY_REPLACEMENT", "COMPRESSED_BODY")])
    version = rng.choice([MetadataVersion.V4, MetadataVersion.V5])
    counts = rng.randint(0, 50), rng.randint(0, 50)
    metadata = _metadata(rng)
    encode._SCHEMA_TAILS.clear()
    encode._TEMPLATES.clear()
    for _ in range(2):  # (the schema's table encoded afresh, then both from the caches)
        blocks = [_blocks(rng, n) for n in counts]
        assert (encode.encode_footer(schema, *blocks, metadata, version, features)
                == _builder_footer(schema, *blocks, metadata, version, features))
        assert (encode.encode_schema_message(schema, version, features)
                == _builder_schema_message(schema, version, features))


def test_metadata_tables_share_the_schemas_keyvalue_vtable():
    """A footer's KeyValue table points at the vtable the schema's own metadata wrote (the
    Builder shares equal vtables), where a schema without metadata makes it write one (8 bytes:
    4 entries of 2)."""
    no_blocks, blocks = np.zeros(0, BLOCK), np.zeros(1, BLOCK)
    growth = {}
    for schema in (_SCHEMAS[1], _SCHEMAS[2]):
        with_md = encode.encode_footer(schema, no_blocks, blocks, {"a": "b"})
        assert with_md == _builder_footer(schema, no_blocks, blocks, {"a": "b"})
        growth[schema] = len(with_md) - len(encode.encode_footer(schema, no_blocks, blocks))
    assert growth[_SCHEMAS[1]] - growth[_SCHEMAS[2]] == 8


def test_batch_messages_and_footers_need_no_builder(monkeypatch):
    """Once the schema's table is cached, nothing a writer sends per batch or per file goes
    through the generic Builder (~0.1 ms of Python calls per message)."""
    schema = _SCHEMAS[2]
    encode.encode_schema_message(schema)  # (caches its table)

    def refused(*args, **kwargs):
        raise AssertionError("flatbuffers.Builder used")

    monkeypatch.setattr(encode.flatbuffers, "Builder", refused)
    encode.encode_schema_message(schema)
    encode.encode_batch_message(3, np.array([3, 0], np.int64), np.array([0, 8, 8, 24], np.int64),
                                32, "zstd", [1], {"k": "v"})
    encode.encode_batch_message(2, np.array([2, 0], np.int64), np.array([0, 0, 0, 16], np.int64),
                                16, dictionary_id=4, is_delta=True)
    encode.encode_footer(schema, np.zeros(1, BLOCK), np.zeros(2, BLOCK), {"k": "v"})


def test_big_messages_are_not_kept_as_templates():
    """A footer of many batches (or the header of a very wide batch) is built once a file:
    kept, 256 of them would hold gigabytes; small ones are kept."""
    schema = _SCHEMAS[0]
    encode._TEMPLATES.clear()
    rng = random.Random(7)
    encode.encode_footer(schema, np.zeros(0, BLOCK), _blocks(rng, 10))
    assert len(encode._TEMPLATES) == 1
    big = _blocks(rng, 10_000)  # (240 KB of blocks)
    assert encode.encode_footer(schema, np.zeros(0, BLOCK), big) == _builder_footer(
        schema, np.zeros(0, BLOCK), big, None, MetadataVersion.V5, ())
    nodes = np.arange(2 * 5_000, dtype=np.int64)
    encode.encode_batch_message(3, nodes, nodes, 64)
    assert len(encode._TEMPLATES) == 1
