"""fbfields, the lean Field/Int readers: schemas read through them equal schemas read through
the generated FlatBuffers code, for every type and for corrupted footers (same schema or same
error)."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from writer_support import CASES, N  # noqa: E402

from arrowmm.format import metadata  # noqa: E402
from arrowmm.format._fbs.Field import Field as FbField  # noqa: E402
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError  # noqa: E402


def generated_field(buf, pos):
    f = FbField()
    f.Init(buf, pos)
    return f


def footer_of(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue()
    n = int.from_bytes(data[-10:-6], "little")
    return data[len(data) - 10 - n:len(data) - 10]


def described(f):
    """Everything a field holds, children included (``==`` on fields may skip metadata)."""
    value_type = f.type.value_type if hasattr(f.type, "value_type") else f.type
    return (f.name, str(f.type), f.nullable, f.metadata, f.dictionary_id,
            tuple(described(c) for c in value_type.children))


def outcome(footer: bytes):
    try:
        schema = metadata.parse_footer(footer).schema
        return schema.metadata, schema.endianness, tuple(described(f) for f in schema)
    except (ArrowInvalid, ArrowNotImplementedError) as exc:
        return type(exc), str(exc)


def both(footer: bytes, monkeypatch):
    fast = outcome(footer)
    with monkeypatch.context() as m:
        m.setattr(metadata, "FastField", generated_field)
        m.setattr(metadata, "_FAST", {})
        slow = outcome(footer)
    return fast, slow


def every_type_table() -> pa.Table:
    table = pa.table({name: build(N, True) for name, build in CASES.items()})
    fields = [f.with_metadata({"k": f"v{i}"}) if i % 3 == 0 else f for i, f in enumerate(table.schema)]
    schema = pa.schema(fields, metadata={"origin": "test"})
    table = table.cast(schema)
    dictionary = pa.array(["a", "b", "a", None] * (N // 4) + ["a"] * (N % 4)).dictionary_encode()
    return table.append_column(pa.field("dict", dictionary.type), pa.chunked_array([dictionary]))


def test_every_type_reads_the_same(monkeypatch):
    fast, slow = both(footer_of(every_type_table()), monkeypatch)
    assert fast == slow
    schema_metadata, _, fields = fast
    assert schema_metadata == {"origin": "test"} and len(fields) == len(CASES) + 1
    assert any(f[3] for f in fields) and fields[-1][4] is not None  # field metadata, dictionary id


def test_corrupted_footers_give_the_same_schema_or_error(monkeypatch):
    footer = footer_of(every_type_table())
    rng = np.random.default_rng(11)
    differing, errors = [], 0
    for trial in range(600):
        buf = bytearray(footer)
        for pos in rng.integers(0, len(buf), int(rng.integers(1, 4))):
            buf[pos] = int(rng.integers(0, 256))
        fast, slow = both(bytes(buf), monkeypatch)
        errors += isinstance(fast[0], type)
        if fast != slow:
            differing.append((trial, fast, slow))
    assert not differing, differing[:3]
    assert errors > 50  # the corruptions did reach the field tables' checks
