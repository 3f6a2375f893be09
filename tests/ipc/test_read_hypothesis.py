"""Hypothesis-generated schemas and data, written by pyarrow, read by arrowmm through every read
path and compared with pyarrow's reading (see helpers.py).

Types nest list / large_list / list_view / large_list_view / fixed_size_list / struct / map /
dictionary / sparse and dense union / run_end_encoded over primitive leaves; values have random
nulls; arrays and batches are randomly sliced before pyarrow writes them; options pick the IPC
format, compression, metadata version and dictionary deltas.
"""
from __future__ import annotations


import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import (assert_array_matches, assert_numpy_matches, assert_pylist_matches,
                                   assert_same_as_pyarrow, int_pylist, pa_read, write_ipc)

import arrowmm

# Examples per run: every run draws new ones (no fixed seed), so the suite's runs add up; 250
# and 150 keep a run's share of the suite's time small (600 and 300 took a minute at load 3).
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                      HealthCheck.function_scoped_fixture])

# -- types ---------------------------------------------------------------------------------------

_INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
              pa.uint64()]
_TZS = [None, "UTC", "Europe/Paris", "+05:30", "-11:00", "America/New_York"]

leaf_types = st.one_of(
    st.sampled_from(_INT_TYPES + [pa.null(), pa.bool_(), pa.float16(), pa.float32(), pa.float64(),
                                  pa.date32(), pa.date64(), pa.month_day_nano_interval(), pa.binary(),
                                  pa.large_binary(), pa.string(), pa.large_string(), pa.binary_view(),
                                  pa.string_view()]),
    st.builds(pa.binary, st.integers(0, 20)),
    st.sampled_from([pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")]),
    st.builds(pa.timestamp, st.sampled_from(["s", "ms", "us", "ns"]), st.sampled_from(_TZS)),
    st.builds(pa.duration, st.sampled_from(["s", "ms", "us", "ns"])),
    st.integers(1, 76).flatmap(lambda p: st.builds(
        lambda bits, s: _decimal(p, s, bits), st.sampled_from([b for b, m in ((32, 9), (64, 18), (128, 38),
                                                                             (256, 76)) if p <= m]),
        st.integers(-3, p))),
)

# map keys: hashable leaves without nulls
key_types = st.sampled_from(_INT_TYPES + [pa.string(), pa.binary(), pa.large_string(), pa.date32(),
                                          pa.binary(3), pa.string_view()])


def _decimal(precision, scale, bits):
    return {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}[bits](
        precision, scale)


def _fields(kids, prefix):
    return [pa.field(f"{prefix}{i}", t) for i, t in enumerate(kids)]


def _extend(inner):
    return st.one_of(
        st.builds(pa.list_, inner),
        st.builds(pa.large_list, inner),
        st.builds(pa.list_view, inner),
        st.builds(pa.large_list_view, inner),
        st.builds(lambda t, n: pa.list_(t, n), inner, st.integers(0, 3)),
        st.lists(st.tuples(inner, st.booleans()), max_size=3).map(lambda ts: pa.struct(
            [pa.field(f"f{i}", t, nullable or pa.types.is_null(t)) for i, (t, nullable) in enumerate(ts)])),
        st.builds(lambda k, v, s: pa.map_(k, v, s), key_types, inner, st.booleans()),
        # (no dictionary directly of a dictionary: pyarrow 26 writes such files corrupt, and reads
        # them back wrong itself; arrowmm rejects them with ArrowInvalid)
        st.builds(lambda i, v, o: pa.dictionary(i, v, o), st.sampled_from(_INT_TYPES),
                  inner.filter(lambda v: not pa.types.is_dictionary(v)), st.booleans()),
        st.tuples(st.lists(inner, min_size=1, max_size=3), st.sampled_from(["sparse", "dense"]),
                  st.randoms(use_true_random=False)).map(_union),
        st.builds(pa.run_end_encoded, st.sampled_from([pa.int16(), pa.int32(), pa.int64()]), inner),
    )


def _union(args):
    kids, mode, rnd = args
    codes = rnd.sample(range(128), len(kids))
    return (pa.sparse_union if mode == "sparse" else pa.dense_union)(_fields(kids, "u"), codes)


types = st.recursive(leaf_types, _extend, max_leaves=5)

# -- values --------------------------------------------------------------------------------------

_PER_DAY = {"s": 86400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}
_I64 = (-2**63, 2**63 - 1)


def _ints_for(ty):
    """A strategy of stored integers for a temporal or integer type (mostly convertible values,
    sometimes ones Python's datetime cannot hold)."""
    if pa.types.is_integer(ty):
        lo, hi = (-(2 ** (ty.bit_width - 1)), 2 ** (ty.bit_width - 1) - 1) if pa.types.is_signed_integer(ty) \
            else (0, 2 ** ty.bit_width - 1)
        return st.one_of(st.integers(max(lo, -5), min(hi, 5)), st.integers(lo, hi))
    if pa.types.is_time(ty):
        return st.integers(0, _PER_DAY[ty.unit] - 1)
    if pa.types.is_date32(ty):
        return st.one_of(st.integers(-719162, 2932896), st.integers(-2**31, 2**31 - 1))
    if pa.types.is_date64(ty):
        return st.one_of(st.integers(-719162, 2932896), st.integers(-106751991167, 106751991167)).map(
            lambda d: d * 86_400_000)
    if pa.types.is_timestamp(ty) or pa.types.is_duration(ty):
        per = _PER_DAY[ty.unit] // 86400
        lim = (2**63 - 1) // per - 1  # room for the sub-second shift below
        base = st.integers(max(-62135596800 + 86400, -lim), min(253402300799 - 86400, lim)).map(
            lambda s: s * per)
        return st.one_of(base, base.map(lambda v: v + (per // 1000) * 7), st.integers(*_I64))
    raise AssertionError(ty)


def _leaf_values(draw, ty, n, nulls: bool):
    """A pyarrow array of ``n`` values of leaf type ``ty`` (``nulls``: some may be null)."""
    if pa.types.is_null(ty):
        return pa.nulls(n)
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if nulls else [False] * n

    def vals(strategy):
        got = draw(st.lists(strategy, min_size=n, max_size=n))
        return [None if m else v for v, m in zip(got, mask)]

    if pa.types.is_boolean(ty):
        return pa.array(vals(st.booleans()), ty)
    if pa.types.is_integer(ty):
        return pa.array(vals(_ints_for(ty)), ty)
    if pa.types.is_floating(ty):
        width = {16: 16, 32: 32, 64: 64}[ty.bit_width]
        floats = st.floats(width=width, allow_nan=True, allow_infinity=True)
        if ty.bit_width == 16:
            import numpy as np
            raw = vals(floats)
            data = np.array([0 if v is None else v for v in raw], np.float16)
            return pa.array(data, ty, mask=np.array([v is None for v in raw], bool))
        return pa.array(vals(floats), ty)
    if pa.types.is_decimal(ty):
        bound = 10 ** ty.precision - 1
        unscaled = st.one_of(st.integers(-bound, bound), st.sampled_from([bound, -bound, 0]))
        # from the unscaled integers' bytes: pyarrow's Decimal conversion loses digits near 76
        width = ty.bit_width // 8
        got = vals(unscaled)
        data = b"".join((v or 0).to_bytes(width, "little", signed=True) for v in got)
        validity = pa.array([v is not None for v in got]).buffers()[1] if None in got else None
        return pa.Array.from_buffers(ty, n, [validity, pa.py_buffer(data)])
    if pa.types.is_interval(ty):
        return pa.array(vals(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1),
                                       st.integers(*_I64)).map(pa.MonthDayNano)), ty)
    if pa.types.is_fixed_size_binary(ty):
        return pa.array(vals(st.binary(min_size=ty.byte_width, max_size=ty.byte_width)), ty)
    if pa.types.is_binary(ty) or pa.types.is_large_binary(ty) or pa.types.is_binary_view(ty):
        return pa.array(vals(st.binary(max_size=20)), ty)
    if pa.types.is_string(ty) or pa.types.is_large_string(ty) or pa.types.is_string_view(ty):
        return pa.array(vals(st.text(max_size=16)), ty)
    storage = pa.int32() if ty.bit_width == 32 else pa.int64()
    return pa.array(vals(_ints_for(ty)), storage).view(ty)  # dates, times, timestamps, durations


def _mask(draw, n):
    if not draw(st.booleans()):
        return None
    return pa.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), pa.bool_())


def _lengths_to_offsets(lengths, ty=pa.int32()):
    offs = [0]
    for k in lengths:
        offs.append(offs[-1] + k)
    return pa.array(offs, ty)


def _values(draw, ty, n, nulls=True):
    """A pyarrow array of type ``ty`` and length ``n``, sometimes a slice of a longer one."""
    pad_front, pad_back = draw(st.sampled_from([(0, 0), (0, 0), (1, 0), (3, 2), (0, 5)]))
    arr = _build(draw, ty, pad_front + n + pad_back, nulls)
    return arr.slice(pad_front, n) if pad_front or pad_back else arr


def _build(draw, ty, n, nulls):
    small = st.integers(0, 3)
    if pa.types.is_list(ty) or pa.types.is_large_list(ty):
        lengths = draw(st.lists(small, min_size=n, max_size=n))
        offsets = _lengths_to_offsets(lengths, pa.int64() if pa.types.is_large_list(ty) else pa.int32())
        child = _values(draw, ty.value_type, sum(lengths), nulls)
        cls = pa.LargeListArray if pa.types.is_large_list(ty) else pa.ListArray
        return cls.from_arrays(offsets, child, type=ty, mask=_mask(draw, n) if nulls else None)
    if pa.types.is_list_view(ty) or pa.types.is_large_list_view(ty):
        m = draw(small) + draw(small)
        child = _values(draw, ty.value_type, m, nulls)
        starts = draw(st.lists(st.integers(0, m), min_size=n, max_size=n))
        sizes = [draw(st.integers(0, m - s)) for s in starts]
        ity = pa.int64() if pa.types.is_large_list_view(ty) else pa.int32()
        cls = pa.LargeListViewArray if pa.types.is_large_list_view(ty) else pa.ListViewArray
        return cls.from_arrays(pa.array(starts, ity), pa.array(sizes, ity), child, type=ty,
                               mask=_mask(draw, n) if nulls else None)
    if pa.types.is_fixed_size_list(ty):
        mask = _mask(draw, n) if nulls else None
        if ty.list_size == 0:  # pyarrow 26's from_arrays divides by the list size (SIGFPE)
            validity = None if mask is None else pa.compute.invert(mask).buffers()[1]
            return pa.Array.from_buffers(ty, n, [validity], children=[_values(draw, ty.value_type, 0)])
        child = _values(draw, ty.value_type, n * ty.list_size, nulls)
        return pa.FixedSizeListArray.from_arrays(child, type=ty, mask=mask)
    if pa.types.is_struct(ty):
        mask = _mask(draw, n) if nulls else None
        if ty.num_fields == 0:  # from_arrays needs a child to know the length
            return pa.array([{}] * n if mask is None else [None if m else {} for m in mask.to_pylist()], ty)
        kids = [_values(draw, f.type, n, nulls and f.nullable) for f in ty]
        return pa.StructArray.from_arrays(kids, fields=list(ty), mask=mask)
    if pa.types.is_map(ty):
        lengths = draw(st.lists(small, min_size=n, max_size=n))
        keys = _values(draw, ty.key_type, sum(lengths), nulls=False)
        items = _values(draw, ty.item_type, sum(lengths), nulls)
        return pa.MapArray.from_arrays(_lengths_to_offsets(lengths), keys, items, type=ty,
                                       mask=_mask(draw, n) if nulls else None)
    if pa.types.is_dictionary(ty):
        size = draw(st.integers(1, 4))
        dictionary = _values(draw, ty.value_type, size, nulls)
        idx = draw(st.lists(st.integers(0, size - 1), min_size=n, max_size=n))
        if nulls:
            idx = [None if m else i for i, m in zip(idx, draw(st.lists(st.booleans(), min_size=n, max_size=n)))]
        return pa.DictionaryArray.from_arrays(pa.array(idx, ty.index_type), dictionary, ordered=ty.ordered)
    if pa.types.is_union(ty):
        codes = ty.type_codes
        picks = draw(st.lists(st.integers(0, len(codes) - 1), min_size=n, max_size=n))
        type_ids = pa.array([codes[p] for p in picks], pa.int8())
        names = [ty.field(i).name for i in range(ty.num_fields)]
        if ty.mode == "sparse":
            kids = [_values(draw, ty.field(i).type, n, nulls) for i in range(ty.num_fields)]
            return pa.UnionArray.from_sparse(type_ids, kids, names, codes)
        counts = [picks.count(i) + draw(small) for i in range(len(codes))]
        kids = [_values(draw, ty.field(i).type, c, nulls) for i, c in enumerate(counts)]
        # offsets into one child must not decrease (the spec; pyarrow's writer relies on it
        # when it rebases a sliced dense union)
        per_child = {i: sorted(draw(st.lists(st.integers(0, counts[i] - 1), min_size=picks.count(i),
                                             max_size=picks.count(i)))) for i in set(picks)}
        offsets = pa.array([per_child[p].pop(0) for p in picks], pa.int32())
        return pa.UnionArray.from_dense(type_ids, offsets, kids, names, codes)
    if pa.types.is_run_end_encoded(ty):
        runs = draw(st.lists(st.integers(1, 3), max_size=n)) if n else []
        if sum(runs) < n:
            runs.append(n - sum(runs))
        ends, total = [], 0
        for r in runs:
            total += r
            ends.append(total)
        values = _values(draw, ty.value_type, len(ends), nulls)
        arr = pa.RunEndEncodedArray.from_arrays(pa.array(ends, ty.run_end_type), values, type=ty)
        return arr.slice(0, n)
    return _leaf_values(draw, ty, n, nulls)


@st.composite
def batches(draw, max_columns=3, max_batches=3):
    """(schema, [record batch]) with random types, values, nulls and slices."""
    col_types = draw(st.lists(types, min_size=1, max_size=max_columns))
    fields = [pa.field(f"c{i}", t, nullable=draw(st.booleans()) or pa.types.is_null(t))
              for i, t in enumerate(col_types)]
    if draw(st.booleans()):
        fields[0] = fields[0].with_metadata({"k": draw(st.text(max_size=5))})
    schema = pa.schema(fields, metadata={"s": "1"} if draw(st.booleans()) else None)
    out = []
    for _ in range(draw(st.integers(0, max_batches))):
        n = draw(st.integers(0, 9))
        cols = [_values(draw, f.type, n, f.nullable and draw(st.booleans())) for f in fields]
        batch = pa.record_batch(cols, schema=schema)
        off = draw(st.integers(0, n))
        out.append(batch.slice(off, draw(st.integers(0, n - off))) if draw(st.booleans()) else batch)
    return schema, out


def _options(draw):
    v4 = draw(st.integers(0, 3)) == 0
    return v4, pa.ipc.IpcWriteOptions(
        # body compression is a V5 feature (pyarrow writes it under V4 but cannot read it back)
        compression=None if v4 else draw(st.sampled_from([None, None, "lz4", "zstd"])),
        emit_dictionary_deltas=draw(st.booleans()),
        metadata_version=pa.ipc.MetadataVersion.V4 if v4 else pa.ipc.MetadataVersion.V5,
        use_legacy_format=draw(st.booleans()))


def _write(tmp_path, schema, data, fmt, options, batch_metadata):
    """The written path, or None where pyarrow's writer refuses (a dictionary replaced in a file,
    a type V4 metadata cannot describe)."""
    path = tmp_path / f"h.{fmt}"
    try:
        return write_ipc(path, data, schema=schema, fmt=fmt, options=options, batch_metadata=batch_metadata)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        text = str(exc)
        assert ("replacement" in text or "V4" in text or "metadata version" in text.lower()
                or "union" in text.lower()), text
        return None


@settings(max_examples=250, **SETTINGS)
@given(data=batches(), opts=st.data())
def test_random_batches_match_pyarrow(tmp_path_factory, data, opts):
    schema, out = data
    tmp_path = tmp_path_factory.mktemp("h")
    v4, options = _options(opts.draw)
    # (pyarrow 26 cannot read back V4 messages with custom metadata: test_legacy_v4_message_metadata)
    mds = [None if v4 else opts.draw(st.sampled_from([None, {"m": str(i)}])) for i in range(len(out))]
    compressed = options.compression is not None
    for fmt in ("file", "stream"):
        path = _write(tmp_path, schema, out, fmt, options, mds)
        if path is not None:
            assert_same_as_pyarrow(path, seed=len(out), views=not compressed)


@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_random_arrays_slices_match_pyarrow(tmp_path_factory, data):
    """arrowmm's own slices, at every offset, against pyarrow's slices of the same array."""
    ty = data.draw(types)
    n = data.draw(st.integers(0, 12))
    arr = _values(data.draw, ty, n)
    path = write_ipc(tmp_path_factory.mktemp("s") / "a.arrow", pa.record_batch([arr], names=["a"]))
    reader = arrowmm.open_file(path)
    col = reader.get_batch(0).column(0)
    oracle = pa_read(path).batches[0].column(0)  # what the file holds, as pyarrow reads it
    assert_array_matches(col, oracle, str(ty), reader._region)
    oracle_int = int_pylist(oracle)
    for off in range(n + 1):
        length = data.draw(st.integers(0, n - off))
        for piece, label in ((col.slice(off, length), f"slice({off}, {length})"),
                             (col.slice(off).slice(0, length), f"slice({off}).slice(0, {length})")):
            assert len(piece) == length and piece.null_count == oracle.slice(off, length).null_count
            piece.validate(full=True)
            assert_pylist_matches(piece, oracle.slice(off, length), f"{ty} {label}",
                                  oracle_int[off:off + length])


@pytest.mark.parametrize("seed", range(3))
def test_same_batches_through_decoder_chunkings(tmp_path, seed):
    """One fixed mixed stream fed to MessageDecoder in several chunkings."""
    arr = pa.array([[{"a": 1, "b": "x"}], None, [{"a": None, "b": "yy" * 20}]],
                   pa.list_(pa.struct([("a", pa.int64()), ("b", pa.string_view())])))
    d = pa.DictionaryArray.from_arrays(pa.array([0, None, 1], pa.int8()), pa.array(["p", "q"]))
    batch = pa.record_batch([arr, d], names=["l", "d"])
    path = write_ipc(tmp_path / "x.arrows", [batch, batch.slice(1)], fmt="stream")
    assert_same_as_pyarrow(path, deep_all=True, seed=seed)


def test_a_dictionary_of_timestamps_at_year_0_converts_as_pyarrows():
    """The case the random search found: pyarrow's to_pylist cannot hold year 0, its to_numpy
    gives datetime64; the helper expected arrowmm to refuse what pyarrow converts."""
    pa_arr = pa.array([-62167219200, 0, None], pa.timestamp("s")).dictionary_encode()
    assert_numpy_matches(arrowmm.array(pa_arr), pa_arr, where="dictionary<timestamp[s]>")


def test_a_dictionary_of_maps_holding_year_0_refuses_to_numpy_as_to_pylist():
    """Another case the random search found (CI, 28 Nov): a dictionary of map<int8,
    timestamp[s]> whose used entry holds year 0, which neither library converts (pyarrow: no
    cast of such a dictionary, and no Python datetime for year 0); the helper compared
    arrowmm's to_numpy with its to_pylist, and both raise ArrowInvalid."""
    m = pa.MapArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array([0], pa.int8()),
                                pa.array([-62135596801], pa.timestamp("s")))
    pa_arr = pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int8()), m)
    ours = arrowmm.array(pa_arr)
    with pytest.raises(arrowmm.ArrowInvalid, match="outside the range of Python's datetime"):
        ours.to_pylist()
    assert_numpy_matches(ours, pa_arr, where="dictionary<map<int8, timestamp[s]>>")
