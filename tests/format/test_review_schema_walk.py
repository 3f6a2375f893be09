"""Review of the schema reader's per-walk caches (one Field per repeated child, one type per
repeated nested/dictionary type, metadata fields made in C, the collector paused for wide
schemas): fields or types that differ in anything (metadata, nullability, dictionary encoding,
extension, keys_sorted, union codes, time zone ...) never come out as one, the C walk gives
what the Python reader and pyarrow give, a registered extension on a field with metadata reads
as that extension, and threads opening wide files at once leave the collector as they found it."""
from __future__ import annotations

import gc
import threading

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrowmm
from arrowmm.format import decode
from arrowmm.format._fbs.Field import Field as FbField
from tests.support.helpers import footer_of


def _described(f):
    """Everything a field holds, children included."""
    dtype = f.type
    value = dtype.value_type if isinstance(dtype, arrowmm.DictionaryType) else dtype
    storage = getattr(value, "storage_type", value)
    return (f.name, str(f.type), f.nullable, f.metadata, f.dictionary_id is not None,
            tuple(_described(c) for c in (getattr(storage, "children", None) or ())))


def _pa_described(f):
    dtype = f.type
    value = dtype.value_type if isinstance(dtype, pa.DictionaryType) else dtype
    storage = getattr(value, "storage_type", value)
    kids = [storage.field(i) for i in range(storage.num_fields)] if hasattr(storage, "num_fields") \
        else []
    md = {k.decode(): v.decode() for k, v in f.metadata.items()} if f.metadata else None
    if md and isinstance(dtype, pa.BaseExtensionType):
        md = {k: v for k, v in md.items() if not k.startswith("ARROW:extension:")} or None
    return (f.name, str(f.type), f.nullable, md, isinstance(dtype, pa.DictionaryType),
            tuple(_pa_described(c) for c in kids))


def _by_c(footer: bytes):
    return decode.parse_footer(footer).schema


def _by_python(footer: bytes, monkeypatch):
    def generated(buf, pos):
        f = FbField()
        f.Init(buf, pos)
        return f

    with monkeypatch.context() as m:
        m.setattr(decode, "FastField", generated)
        m.setattr(decode, "_FAST", {})
        m.setattr(decode, "schema_fields", lambda data, start, count, field_cls, types,
                  make_type, other, budget, md_cap: [other(i) for i in range(count)])
        return decode.parse_footer(footer).schema


S = pa.struct


def _variants(child_name="a"):
    """Child fields alike in name, different in one thing each."""
    return [
        pa.field(child_name, pa.int8()),
        pa.field(child_name, pa.int8(), nullable=False),
        pa.field(child_name, pa.int8(), metadata={"k": "v"}),
        pa.field(child_name, pa.int8(), metadata={"k": "w"}),
        pa.field(child_name, pa.int16()),
        pa.field(child_name, pa.dictionary(pa.int8(), pa.string())),
        pa.field(child_name, pa.dictionary(pa.int8(), pa.string(), ordered=True)),
        pa.field(child_name, pa.dictionary(pa.int16(), pa.string())),
        pa.field(child_name, pa.string()),
        pa.field(child_name, pa.uuid()),
        pa.field(child_name, pa.binary(16)),
        pa.field(child_name, pa.json_()),
        pa.field(child_name, pa.timestamp("ms", tz="UTC")),
        pa.field(child_name, pa.timestamp("ms", tz="+01:00")),
        pa.field(child_name, pa.timestamp("ms")),
        pa.field(child_name, pa.decimal128(5, 2)),
        pa.field(child_name, pa.decimal128(5, 3)),
        pa.field(child_name, pa.map_(pa.string(), pa.int8(), keys_sorted=True)),
        pa.field(child_name, pa.map_(pa.string(), pa.int8())),
        pa.field(child_name, pa.sparse_union([pa.field("x", pa.int8()), pa.field("y", pa.int8())])),
        pa.field(child_name, pa.dense_union([pa.field("x", pa.int8()), pa.field("y", pa.int8())])),
        pa.field(child_name, pa.sparse_union([pa.field("x", pa.int8()), pa.field("y", pa.int8())],
                                             type_codes=[3, 9])),
        pa.field(child_name, pa.list_(pa.int8())),
        pa.field(child_name, pa.list_(pa.field("item", pa.int8(), nullable=False))),
        pa.field(child_name, pa.list_(pa.int8(), 2)),
        pa.field(child_name, pa.list_(pa.int8(), 3)),
        pa.field(child_name, pa.large_list(pa.int8())),
        pa.field(child_name, pa.list_(pa.dictionary(pa.int8(), pa.string()))),
        pa.field(child_name, pa.run_end_encoded(pa.int16(), pa.int8())),
        pa.field(child_name, pa.run_end_encoded(pa.int32(), pa.int8())),
    ]


def _alike_schema(repeat: int = 2) -> pa.Schema:
    """Struct fields whose one child differs from the others' in one thing, each twice (the
    caches see every variant again), under structs, lists and dictionaries."""
    fields = []
    for r in range(repeat):
        for k, child in enumerate(_variants()):
            fields.append(pa.field(f"s{r}_{k}", S([child, pa.field("b", pa.int8())])))
            fields.append(pa.field(f"l{r}_{k}", pa.list_(S([child]))))
    return pa.schema(fields)


def _check_against_python_and_pyarrow(schema: pa.Schema, monkeypatch):
    footer = footer_of(schema)
    c, py = _by_c(footer), _by_python(footer, monkeypatch)
    got = [_described(f) for f in c]
    assert got == [_described(f) for f in py]
    assert got == [_pa_described(f) for f in schema]
    return c


def test_children_alike_but_for_one_thing_stay_apart(monkeypatch):
    c = _check_against_python_and_pyarrow(_alike_schema(), monkeypatch)
    # the second round of every variant is the first one's (the caches at work), and no two
    # variants share a type
    n = len(_variants())
    firsts = [c.field(f"s0_{k}").type for k in range(n)]
    assert len({id(t) for t in firsts}) == n
    theirs = [f.type for f in _alike_schema() if f.name.startswith("s0_")]
    for i in range(n):  # (equal only where pyarrow's types are: children's metadata aside)
        for j in range(n):
            assert (firsts[i] == firsts[j]) == (theirs[i] == theirs[j]), (i, j)


def test_a_wide_schema_with_the_collector_paused_reads_the_same(monkeypatch):
    repeat = decode._PAUSE_COLLECTOR_FROM // (2 * len(_variants())) + 1
    schema = _alike_schema(repeat)
    assert len(schema) >= decode._PAUSE_COLLECTOR_FROM
    _check_against_python_and_pyarrow(schema, monkeypatch)
    assert gc.isenabled()


# -- random nested schemas: the C walk, the Python reader and pyarrow agree -------------------

_LEAVES = st.sampled_from([pa.int8(), pa.int32(), pa.uint64(), pa.float32(), pa.bool_(),
                           pa.string(), pa.binary(), pa.binary(16), pa.date32(),
                           pa.timestamp("us", tz="UTC"), pa.timestamp("us"),
                           pa.decimal128(7, 2), pa.uuid(), pa.json_()])
_META = st.one_of(st.none(), st.sampled_from([{"k": "v"}, {"k": "w"}, {"k": "v", "z": ""}]))


def _fields(children):
    return st.lists(st.tuples(st.sampled_from("ab"), children, st.booleans(), _META),
                    min_size=1, max_size=3).map(
        lambda xs: [pa.field(n, t, nullable=nl, metadata=md) for n, t, nl, md in xs])


_TYPES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        _fields(inner).map(S),
        inner.map(pa.list_),
        st.tuples(inner, st.booleans()).map(
            lambda x: pa.list_(pa.field("item", x[0], nullable=x[1]))),
        st.tuples(inner, st.booleans()).map(lambda x: pa.map_(pa.string(), x[0],
                                                              keys_sorted=x[1])),
        _fields(inner).map(lambda fs: pa.sparse_union(
            [pa.field(f"{f.name}{i}", f.type, f.nullable, f.metadata)
             for i, f in enumerate(fs)])),
        st.tuples(st.sampled_from([pa.int8(), pa.int16()]), st.sampled_from(
            [pa.string(), pa.int32()]), st.booleans()).map(lambda x: pa.dictionary(*x)),
    ),
    max_leaves=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["x", "y"]), _TYPES, st.booleans(), _META),
                min_size=1, max_size=8))
def test_random_nested_schemas_read_alike_in_c_python_and_pyarrow(fields):
    schema = pa.schema([pa.field(n, t, nullable=nl, metadata=md) for n, t, nl, md in fields])
    with pytest.MonkeyPatch.context() as monkeypatch:
        _check_against_python_and_pyarrow(schema, monkeypatch)


# -- registered extension types on fields with metadata -----------------------------------------

class _Rational(arrowmm.ExtensionType):
    def __init__(self):
        super().__init__(arrowmm.struct([("n", arrowmm.int64()), ("d", arrowmm.int64())]),
                         "review.rational")

    def __arrow_ext_serialize__(self):
        return b"v1"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


def _rational_field(name, extra=None):
    md = {"ARROW:extension:name": "review.rational", "ARROW:extension:metadata": "v1",
          **(extra or {})}
    return pa.field(name, S([("n", pa.int64()), ("d", pa.int64())]), metadata=md)


@pytest.mark.parametrize("wide", [False, True])
def test_a_registered_extension_on_a_field_with_metadata_is_that_extension(tmp_path, wide):
    fields = [_rational_field("r", {"note": "kept"}),
              pa.field("s", S([_rational_field("inner", {"note": "inner"}),
                               _rational_field("plain")]))]
    if wide:
        fields += [pa.field(f"p{i}", S([pa.field("a", pa.int8(), metadata={"i": str(i % 7)})]))
                   for i in range(decode._PAUSE_COLLECTOR_FROM)]
    path = str(tmp_path / "ext.arrow")
    with pa.ipc.new_file(path, pa.schema(fields)):
        pass
    arrowmm.register_extension_type(_Rational())
    try:
        with arrowmm.open_file(path) as reader:
            schema = reader.schema
        top = schema.field("r")
        inner, plain = schema.field("s").type.field(0), schema.field("s").type.field(1)
        for f, note in ((top, "kept"), (inner, "inner"), (plain, None)):
            assert isinstance(f.type, _Rational), f
            assert f.metadata == ({"note": note} if note else None)
        assert gc.isenabled()
    finally:
        arrowmm.unregister_extension_type("review.rational")
    with arrowmm.open_file(path) as reader:  # unregistered: the storage, metadata kept
        f = reader.schema.field("r")
        assert f.extension_type is None and f.metadata["note"] == "kept"


# -- threads and the collector --------------------------------------------------------------

def test_threads_opening_wide_files_at_once_leave_the_collector_on(tmp_path):
    n = decode._PAUSE_COLLECTOR_FROM + 10
    path = str(tmp_path / "wide.arrow")
    schema = pa.schema([pa.field(f"c{i}", S([pa.field("a", pa.int8(), metadata={"k": str(i % 3)}),
                                            pa.field("b", pa.int8())])) for i in range(n)])
    with pa.ipc.new_file(path, schema):
        pass
    want = [_pa_described(schema.field(i)) for i in range(50)]
    errors, barrier = [], threading.Barrier(4)

    def opener():
        try:
            barrier.wait()
            for _ in range(2):
                with arrowmm.open_file(path) as reader:
                    got = reader.schema
                assert len(got) == n
                assert [_described(f) for f in list(got)[:50]] == want
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert gc.isenabled()
    gc.disable()  # a program that turned the collector off keeps it off
    try:
        with arrowmm.open_file(path) as reader:
            assert len(reader.schema) == n
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_program_turning_the_collector_off_during_a_wide_read_keeps_it_off():
    assert gc.isenabled()
    try:
        with decode._collector_paused(True):
            gc.disable()  # (what another thread of the program does meanwhile)
        assert not gc.isenabled()
    finally:
        gc.enable()
