"""arrowmm._core._offsets against straightforward Python reference checks."""
import contextlib
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrowmm._core import _offsets
from arrowmm.errors import ArrowInvalid
from tests.support.kernel_support import guarded

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
SETTINGS = settings(deadline=None, max_examples=150)
INT64_MAX = 2**63 - 1


def ro(arr):
    """A read-only contiguous copy (file buffers are read-only)."""
    arr = np.array(arr, copy=True, order="C")
    arr.setflags(write=False)
    return arr


def make_validity(valid, off, seed=0):
    """Bitmap with ``valid`` starting at bit ``off`` (bits before it random)."""
    pre = np.random.default_rng(seed).integers(0, 2, off).astype(bool)
    return ro(np.packbits(np.concatenate([pre, np.asarray(valid, bool)]), bitorder="little"))


@st.composite
def validities(draw, n):
    """(validity-or-None, bit_offset, valid flags) for n slots."""
    if draw(st.booleans()):
        return None, 0, [True] * n
    off = draw(st.integers(0, 70))
    valid = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return make_validity(valid, off, off), off, valid


def raises_at(fn, *args, index_text):
    with pytest.raises(ArrowInvalid) as info:
        fn(*args)
    assert index_text in str(info.value), (index_text, str(info.value))
    return str(info.value)


# ---------------------------------------------------------------- check_offsets

def ref_offsets(o, length, data_size):
    """Text the error must contain, or None if valid."""
    if o[0] < 0:
        return f"offset[0]={o[0]} < 0"
    for i in range(1, length + 1):
        if o[i] < o[i - 1]:
            return f"offset[{i}]={o[i]} < offset[{i - 1}]={o[i - 1]}"
    if o[length] > data_size:
        return f"offset[{length}]={o[length]} > data size {data_size}"
    return None


@SETTINGS
@given(st.sampled_from([np.int32, np.int64]), st.integers(-2, 4),
       st.lists(st.integers(-2, 9).map(lambda d: max(d, 0) if d != -2 else -1), max_size=300),
       st.integers(0, 300), st.integers(-2, 2), st.integers(0, 3))
def test_check_offsets_matches_reference(dtype, start, diffs, cut, slack, extra):
    o = np.cumsum([start] + diffs).astype(dtype)
    length = min(cut, len(o) - 1)
    data_size = max(int(o[length]) + slack, 0)
    want = ref_offsets(o.tolist(), length, data_size)
    arr = ro(o[:length + 1 + min(extra, len(o) - length - 1)])
    if want is None:
        _offsets.check_offsets(arr, length, data_size, "col.a")
    else:
        msg = raises_at(_offsets.check_offsets, arr, length, data_size, "col.a", index_text=want)
        assert msg.startswith("offsets of 'col.a': ")


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("pos", [1, 2, 4095, 4096, 4097, 8192, 10_000])
def test_check_offsets_single_decrease_in_long_array(dtype, pos):
    o = np.arange(10_001, dtype=dtype)
    _offsets.check_offsets(ro(o), 10_000, 10_000, "x")
    o[pos] = o[pos - 1] - 1
    raises_at(_offsets.check_offsets, ro(o), 10_000, 10_000, "x",
              index_text=f"offset[{pos}]={o[pos]} < offset[{pos - 1}]={o[pos - 1]}")


def test_check_offsets_message_format():
    o = np.array([0, 9, 9, 5, 9], np.int32)
    msg = raises_at(_offsets.check_offsets, o, 4, 10, "col.a", index_text="offset[3]=5")
    assert msg == "offsets of 'col.a': offset[3]=5 < offset[2]=9 (offsets must not decrease)"


def test_check_offsets_argument_errors():
    o = ro(np.array([0, 1, 2], np.int64))
    raises_at(_offsets.check_offsets, o, 3, 10, "w", index_text="3 offsets for length 3")
    raises_at(_offsets.check_offsets, o, -1, 10, "w", index_text="length=-1 < 0")
    raises_at(_offsets.check_offsets, o, 2, -5, "w", index_text="data size=-5 < 0")
    raises_at(_offsets.check_offsets, o, 2, 1, "w", index_text="offset[2]=2 > data size 1")
    raises_at(_offsets.check_offsets, o[:1] - 3, 0, 1, "w", index_text="offset[0]=-3 < 0")
    _offsets.check_offsets(o[:0], 0, 0, "w")  # empty array may omit offsets
    raises_at(_offsets.check_offsets, o[:0], 1, 0, "w", index_text="0 offsets for length 1")
    _offsets.check_offsets(o[::2], 1, 2, "w")  # strided input is copied, not misread
    raises_at(_offsets.check_offsets, o[::-1], 2, 2, "w", index_text="offset[1]=1 < offset[0]=2")
    with pytest.raises(TypeError):
        _offsets.check_offsets(o.astype(np.uint32), 2, 2, "w")
    with pytest.raises(TypeError):
        _offsets.check_offsets([0, 1], 1, 2, "w")


# ---------------------------------------------------------------- check_list_view

@SETTINGS
@given(st.sampled_from([np.int32, np.int64]), st.integers(0, 20), st.data())
def test_check_list_view_matches_reference(dtype, child, data):
    n = data.draw(st.integers(0, 120))
    offs = data.draw(st.lists(st.integers(-2, child + 2), min_size=n, max_size=n))
    sizes = data.draw(st.lists(st.integers(-2, child + 2).map(lambda s: s if s < 3 else s // 3),
                               min_size=n, max_size=n))
    validity, bit_off, valid = data.draw(validities(n))
    want = None
    for i in range(n):
        o, s = offs[i], sizes[i]
        if valid[i] and (o < 0 or s < 0 or o + s > child):
            want = f"offset[{i}]={o}" if o < 0 else f"size[{i}]={s}" if s < 0 else \
                f"offset[{i}]={o} + size[{i}]={s} = {o + s} > child length {child}"
            break
    args = (ro(np.array(offs, dtype)), ro(np.array(sizes, dtype)), n, child, validity, bit_off, "lv")
    if want is None:
        _offsets.check_list_view(*args)
    else:
        raises_at(_offsets.check_list_view, *args, index_text=want)


def test_check_list_view_overflow_and_arguments():
    big = np.array([0, INT64_MAX], np.int64)
    one = np.array([0, 1], np.int64)
    raises_at(_offsets.check_list_view, big, one, 2, 10, None, 0, "lv",
              index_text=f"offset[1]={INT64_MAX} + size[1]=1")
    raises_at(_offsets.check_list_view, one, big, 2, 10, None, 0, "lv",
              index_text=f"size[1]={INT64_MAX}")
    raises_at(_offsets.check_list_view, one, one, 3, 10, None, 0, "lv", index_text="need 3 of each")
    raises_at(_offsets.check_list_view, one, one, 2, -1, None, 0, "lv", index_text="child length=-1")
    raises_at(_offsets.check_list_view, one, one, 2, 10, b"\x03", 7, "lv",
              index_text="bit_offset 7 + length 2 = 9 bits needed")
    with pytest.raises(TypeError):
        _offsets.check_list_view(one, one.astype(np.int32), 2, 10, None, 0, "lv")


# ---------------------------------------------------------------- check_run_ends

def ref_run_ends(r, needed):
    if not r:
        return "0 runs" if needed > 0 else None
    if r[0] <= 0:
        return f"run_end[0]={r[0]} <= 0"
    for i in range(1, len(r)):
        if r[i] <= r[i - 1]:
            return f"run_end[{i}]={r[i]} <= run_end[{i - 1}]={r[i - 1]}"
    if r[-1] < needed:
        return f"run_end[{len(r) - 1}]={r[-1]} < {needed}"
    return None


@SETTINGS
@given(st.sampled_from([np.int16, np.int32, np.int64]), st.integers(-1, 3),
       st.lists(st.integers(-1, 6).map(lambda d: min(d, 1) if d < 2 else d), max_size=200),
       st.integers(-3, 3))
def test_check_run_ends_matches_reference(dtype, start, diffs, slack):
    r = np.cumsum([start] + diffs).astype(dtype) if diffs or start else np.zeros(0, dtype)
    needed = max((int(r[-1]) if len(r) else 0) + slack, 0)
    want = ref_run_ends(r.tolist(), needed)
    if want is None:
        _offsets.check_run_ends(ro(r), needed, "ree")
    else:
        raises_at(_offsets.check_run_ends, ro(r), needed, "ree", index_text=want)


def test_check_run_ends_edges():
    _offsets.check_run_ends(np.zeros(0, np.int32), 0, "r")
    raises_at(_offsets.check_run_ends, np.zeros(0, np.int32), 1, "r", index_text="0 runs")
    raises_at(_offsets.check_run_ends, np.array([5], np.int16), -1, "r", index_text="needed end=-1")
    r = np.arange(1, 10_001, dtype=np.int32)
    _offsets.check_run_ends(ro(r), 10_000, "r")
    r[5000] = r[4999]
    raises_at(_offsets.check_run_ends, ro(r), 10_000, "r", index_text="run_end[5000]=5000 <= run_end[4999]=5000")
    with pytest.raises(TypeError):
        _offsets.check_run_ends(np.array([1], np.int8), 1, "r")


# ---------------------------------------------------------------- unions

@SETTINGS
@given(st.lists(st.integers(-128, 127), max_size=200), st.sets(st.integers(0, 127), max_size=8))
def test_check_union_type_ids(ids, codes):
    allowed = np.zeros(128, np.uint8)
    allowed[list(codes)] = 1
    bad = next((i for i, t in enumerate(ids) if t < 0 or t not in codes), None)
    args = (ro(np.array(ids, np.int8)), ro(allowed), "u")
    if bad is None:
        _offsets.check_union_type_ids(*args)
    else:
        msg = raises_at(_offsets.check_union_type_ids, *args,
                        index_text=f"type_id[{bad}]={ids[bad]} is not a type code")
        assert f"allowed codes: {sorted(codes)}" in msg


def test_check_union_type_ids_arguments():
    raises_at(_offsets.check_union_type_ids, np.zeros(1, np.int8), np.ones(127, np.uint8), "u",
              index_text="need 128 entries, got 127")
    _offsets.check_union_type_ids(np.array([3], np.int8), np.arange(128) == 3, "u")  # bool mask ok
    with pytest.raises(TypeError):
        _offsets.check_union_type_ids(np.zeros(1, np.uint8), np.ones(128, np.uint8), "u")


def ref_dense(ids, offs, lens):
    last = {}
    for i, (t, o) in enumerate(zip(ids, offs)):
        if t < 0:
            return f"type_id[{i}]={t} < 0"
        if o < 0:
            return f"offset[{i}]={o} < 0"
        if o >= lens[t]:
            return f"offset[{i}]={o} >= length {lens[t]} of the child for type code {t}"
        if t in last and o < offs[last[t]]:
            return f"offset[{i}]={o} < offset[{last[t]}]={offs[last[t]]}, both type code {t}"
        last[t] = i
    return None


@SETTINGS
@given(st.data())
def test_check_dense_union_offsets(data):
    n = data.draw(st.integers(0, 150))
    ids = data.draw(st.lists(st.sampled_from([-1, 0, 1, 5, 127]), min_size=n, max_size=n))
    offs = data.draw(st.lists(st.integers(-1, 12), min_size=n, max_size=n))
    if data.draw(st.booleans()):  # mostly-valid case: per-code running offsets
        ids = [abs(t) for t in ids]
        seen = {}
        offs = [seen.setdefault(t, []).append(0) or len(seen[t]) - 1 for t in ids]
    lens = np.zeros(128, np.int64)
    lens[[0, 1, 5, 127]] = data.draw(st.lists(st.integers(0, 60), min_size=4, max_size=4))
    want = ref_dense(ids, offs, lens.tolist())
    args = (ro(np.array(ids, np.int8)), ro(np.array(offs + [99], np.int32)), ro(lens), "du")
    if want is None:
        _offsets.check_dense_union_offsets(*args)
    else:
        raises_at(_offsets.check_dense_union_offsets, *args, index_text=want)


def test_check_dense_union_offsets_exact_limits():
    lens = np.zeros(128, np.int64)
    lens[[0, 3]] = [4, 2]
    ids = np.array([0, 3, 0, 3, 0], np.int8)
    _offsets.check_dense_union_offsets(ids, np.array([2, 0, 2, 1, 3], np.int32), lens, "du")
    raises_at(_offsets.check_dense_union_offsets, ids, np.array([2, 0, 1, 1, 3], np.int32), lens, "du",
              index_text="offset[2]=1 < offset[0]=2, both type code 0 (offsets into one child must not decrease)")
    raises_at(_offsets.check_dense_union_offsets, ids, np.array([2, 0, 2, 2, 3], np.int32), lens, "du",
              index_text="offset[3]=2 >= length 2 of the child for type code 3")
    raises_at(_offsets.check_dense_union_offsets, ids, np.array([2, 0, 2, 1, -1], np.int32), lens, "du",
              index_text="offset[4]=-1 < 0")


def test_check_dense_union_offsets_arguments():
    ids, offs = np.zeros(3, np.int8), np.zeros(2, np.int32)
    raises_at(_offsets.check_dense_union_offsets, ids, offs, np.ones(128, np.int64), "du",
              index_text="2 offsets for 3 type ids")
    raises_at(_offsets.check_dense_union_offsets, ids, offs, np.ones(12, np.int64), "du",
              index_text="need 128 entries, got 12")


# ---------------------------------------------------------------- dictionary indices

INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@SETTINGS
@given(st.sampled_from(INDEX_DTYPES), st.integers(0, 10), st.data())
def test_check_dictionary_indices(dtype, dict_len, data):
    info = np.iinfo(dtype)
    n = data.draw(st.integers(0, 150))
    vals = data.draw(st.lists(st.one_of(st.integers(max(info.min, -2), dict_len + 1),
                                        st.sampled_from([int(info.min), int(info.max)])),
                              min_size=n, max_size=n))
    validity, bit_off, valid = data.draw(validities(n))
    bad = next((i for i, v in enumerate(vals) if valid[i] and not 0 <= v < dict_len), None)
    args = (ro(np.array(vals, dtype)), validity, bit_off, dict_len, "dict")
    if bad is None:
        _offsets.check_dictionary_indices(*args)
    else:
        raises_at(_offsets.check_dictionary_indices, *args,
                  index_text=f"index[{bad}]={vals[bad]} out of range for dictionary of length "
                             f"{dict_len} (must be in [0, {dict_len}))")


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
def test_check_dictionary_indices_long_and_extreme(dtype):
    idx = np.zeros(9000, dtype)
    _offsets.check_dictionary_indices(ro(idx), None, 0, 1, "d")
    idx[8191] = np.iinfo(dtype).max
    raises_at(_offsets.check_dictionary_indices, ro(idx), None, 0, 100, "d",
              index_text=f"index[8191]={np.iinfo(dtype).max}")
    raises_at(_offsets.check_dictionary_indices, ro(idx[:1]), None, 0, 0, "d",
              index_text="index[0]=0 out of range for dictionary of length 0")


def test_check_dictionary_indices_arguments():
    idx = np.zeros(4, np.int32)
    raises_at(_offsets.check_dictionary_indices, idx, None, 0, -1, "d",
              index_text="dictionary length=-1 < 0")
    raises_at(_offsets.check_dictionary_indices, idx, b"\xff", 5, 3, "d",
              index_text="validity bitmap of 'd': bit_offset 5 + length 4 = 9 bits needed")
    with pytest.raises(TypeError):
        _offsets.check_dictionary_indices(idx.astype(np.float32), None, 0, 3, "d")


# ---------------------------------------------------------------- binary views

def build_views(values, nbuf=2):
    """Arrow BinaryView layout for ``values`` (bytes, or None for a null slot)."""
    bufs = [bytearray() for _ in range(nbuf)]
    views = bytearray()
    for k, v in enumerate(values):
        if v is None:
            views += bytes(range(16))  # garbage under a null slot must be ignored
        elif len(v) <= 12:
            views += struct.pack("<i", len(v)) + v.ljust(12, b"\0")
        else:
            b = k % nbuf
            bufs[b] += b"#"  # so offsets are not all zero
            views += struct.pack("<i4sii", len(v), v[:4], b, len(bufs[b]))
            bufs[b] += v
    return bytes(views), [bytes(b) for b in bufs]


def set_field(views, slot, field, value):
    """Overwrite int32 field 0 (size), 2 (buffer index) or 3 (offset) of one view."""
    out = bytearray(views)
    struct.pack_into("<i", out, 16 * slot + 4 * field, value)
    return bytes(out)


values_st = st.lists(st.one_of(st.none(), st.binary(max_size=30),
                               st.text(max_size=12).map(str.encode)), max_size=60)


@SETTINGS
@given(values_st, st.integers(1, 3), st.integers(0, 70))
def test_check_binary_views_accepts_valid_layout(values, nbuf, off):
    views, bufs = build_views(values, nbuf)
    valid = [v is not None for v in values]
    validity = make_validity(valid, off) if None in values else None
    utf8 = all(v is None or _decodes(v) for v in values)
    _offsets.check_binary_views(views, len(values), validity, off if validity is not None else 0,
                                bufs, utf8, "bv")
    if not utf8:
        bad = next(i for i, v in enumerate(values) if v is not None and not _decodes(v))
        raises_at(_offsets.check_binary_views, views, len(values), validity,
                  off if validity is not None else 0, bufs, True, "bv",
                  index_text=f"view[{bad}]")


def _decodes(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


LONG = [b"short", b"0123456789abcdef", None, "naïve text long enough".encode(), b"x" * 40]
LONG_VALID = make_validity([v is not None for v in LONG], 0)  # slot 2 holds garbage


@pytest.mark.parametrize("slot,field,value,text", [
    (0, 0, -1, "view[0] size=-1 < 0"),
    (1, 0, -(2**31), f"view[1] size={-(2**31)} < 0"),
    (1, 2, 2, "view[1] buffer_index=2 out of range for 2 variadic buffers (must be in [0, 2))"),
    (1, 2, -1, "view[1] buffer_index=-1 out of range"),
    (3, 3, -4, "view[3] offset=-4 < 0"),
    (4, 3, 2**31 - 1, f"view[4] offset={2**31 - 1} + size=40 = {2**31 + 39} > length 41 of variadic buffer 0"),
    (1, 0, 2**31 - 1, f"view[1] offset=1 + size={2**31 - 1}"),
    (4, 0, 41, "view[4] offset=1 + size=41 = 42 > length 41"),
])
def test_check_binary_views_hostile_headers(slot, field, value, text):
    views, bufs = build_views(LONG)
    validity = make_validity([v is not None for v in LONG], 0)
    _offsets.check_binary_views(views, 5, validity, 0, bufs, True, "bv")
    bad = set_field(views, slot, field, value)
    msg = raises_at(_offsets.check_binary_views, bad, 5, validity, 0, bufs, False, "bv", index_text=text)
    assert msg.startswith("binary views of 'bv': ")
    _offsets.check_binary_views(set_field(views, 2, field, value), 5, validity, 0, bufs, True, "bv")


def test_check_binary_views_prefix_utf8_and_padding():
    views, bufs = build_views(LONG)
    bad = bytearray(views)
    bad[16 + 4] ^= 1
    raises_at(_offsets.check_binary_views, bytes(bad), 5, None, 0, bufs, False, "bv",
              index_text="view[1] prefix b'1123' != first 4 data bytes b'0123'")
    inline, _ = build_views([b"ok", b"\xff\xfe"])
    raises_at(_offsets.check_binary_views, inline, 2, None, 0, [], True, "bv",
              index_text="view[1] inline value b'\\xff\\xfe' (size=2) is not valid UTF-8")
    _offsets.check_binary_views(inline, 2, None, 0, [], False, "bv")
    assert bufs[1][18:22] == "naïv".encode()[:4]
    bufs_bad = [bufs[0], bufs[1][:30] + b"\xff" + bufs[1][31:]]  # inside slot 3's bytes
    raises_at(_offsets.check_binary_views, views, 5, LONG_VALID, 0, bufs_bad, True, "bv",
              index_text="view[3] value (size=23, variadic buffer 1 at offset 18) is not valid UTF-8")
    _offsets.check_binary_views(views, 5, LONG_VALID, 0, bufs_bad, False, "bv")
    padded = bytearray(views)
    padded[4 + 5:16] = b"\x01" * 7  # nonzero bytes past an inline value's size: a size cut
    raises_at(_offsets.check_binary_views, bytes(padded), 5, LONG_VALID, 0, bufs, True, "bv",
              index_text="view[0] inline value of size=5 is followed by non-zero padding")
    nulled = bytearray(padded)  # (a null slot's bytes are not looked at, as in pyarrow)
    first_null = bytes([int(LONG_VALID[0]) & 0xFE])
    _offsets.check_binary_views(bytes(nulled), 5, first_null, 0, bufs, True, "bv")


def test_check_binary_views_buffers_and_arguments():
    views, bufs = build_views(LONG)
    raises_at(_offsets.check_binary_views, views[:-1], 5, None, 0, bufs, False, "bv",
              index_text="views buffer holds 79 bytes, length 5 needs 16*5 = 80")
    raises_at(_offsets.check_binary_views, views, -1, None, 0, bufs, False, "bv", index_text="length=-1")
    raises_at(_offsets.check_binary_views, views, 5, b"\x1f", 4, bufs, False, "bv",
              index_text="bit_offset 4 + length 5 = 9 bits needed")
    raises_at(_offsets.check_binary_views, views, 5, None, 0, bufs[:1], False, "bv",
              index_text="view[1] buffer_index=1 out of range for 1 variadic buffers")
    # read-only numpy views and buffers work too
    _offsets.check_binary_views(ro(np.frombuffer(views, np.uint8)), 5, LONG_VALID, 0,
                                [ro(np.frombuffer(b, np.uint8)) for b in bufs], True, "bv")
    with pytest.raises(ArrowInvalid, match=r"view\[2\] buffer_index=185207048"):
        _offsets.check_binary_views(views, 5, None, 0, bufs, False, "bv")  # garbage if not null
    with pytest.raises(TypeError):
        _offsets.check_binary_views(views, 5, LONG_VALID, 0, [object()], False, "bv")


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=40), st.integers(1, 3))
def test_kernels_never_read_past_the_buffers(values, nbuf):
    views, bufs = build_views(values, nbuf)
    valid = [v is not None for v in values]
    with contextlib.ExitStack() as stack:
        g_views = stack.enter_context(guarded(views))
        g_bufs = [stack.enter_context(guarded(b)) for b in bufs]
        g_valid = stack.enter_context(guarded(make_validity(valid, 0).tobytes()[:(len(values) + 7) // 8]))
        _offsets.check_binary_views(g_views, len(values), g_valid, 0, g_bufs, False, "g")
        if values and values[-1] is not None and len(values[-1]) > 12:
            cut = [*g_bufs[:(len(values) - 1) % nbuf], memoryview(bufs[(len(values) - 1) % nbuf])[:-1]]
            with pytest.raises(ArrowInvalid, match=rf"view\[{len(values) - 1}\] offset=\d+ \+ size"):
                _offsets.check_binary_views(g_views, len(values), g_valid, 0,
                                            cut + g_bufs[len(cut):], False, "g")
        offs = np.cumsum([0] + [len(v or b"") for v in values]).astype(np.int32)
        g_offs = np.frombuffer(stack.enter_context(guarded(offs.tobytes())), np.int32)
        _offsets.check_offsets(g_offs, len(values), int(offs[-1]), "g")
        idx = np.frombuffer(stack.enter_context(guarded(bytes(len(values)))), np.uint8)
        _offsets.check_dictionary_indices(idx, g_valid, 0, 1, "g")
        del g_offs, idx  # release exports before the guarded maps close


def test_check_binary_views_matches_pyarrow_layout():
    pa = pytest.importorskip("pyarrow")
    vals = ["a", None, "hello world, long enough", "x" * 13, "é" * 9, ""] * 5
    for typ, utf8 in ((pa.string_view(), True), (pa.binary_view(), False)):
        arr = pa.array(vals if utf8 else [None if v is None else v.encode() for v in vals], typ).slice(3, 20)
        validity, views, *bufs = arr.buffers()
        off = arr.offset
        assert off == 3
        _offsets.check_binary_views(memoryview(views)[16 * off:], len(arr), validity, off,
                                    bufs, utf8, "pa")
        with pytest.raises(ArrowInvalid, match="bits needed"):
            _offsets.check_binary_views(memoryview(views)[16 * off:], len(arr), validity, 32,
                                        bufs, utf8, "pa")


def test_first_partial_day_finds_the_first_non_null_partial_day():
    day = 86_400_000
    values = ro(np.array([day, -3 * day, 5, 2 * day, day + 1], np.int64))
    assert _offsets.first_partial_day(values, None, 0, "d") == 2
    null_at_2 = ro(np.array([0b11011], np.uint8))
    assert _offsets.first_partial_day(values, null_at_2, 0, "d") == 4
    assert _offsets.first_partial_day(values[:4], null_at_2, 0, "d") == -1
    shifted = ro(np.array([0b110110], np.uint8))  # the same bits one slot on (an array offset)
    assert _offsets.first_partial_day(values, shifted, 1, "d") == 4
    assert _offsets.first_partial_day(ro(np.zeros(0, np.int64)), None, 0, "d") == -1
    with pytest.raises(ArrowInvalid, match="validity bitmap"):
        _offsets.first_partial_day(values, ro(np.zeros(0, np.uint8)), 0, "d")
    with pytest.raises(TypeError, match="dtype"):
        _offsets.first_partial_day(ro(np.zeros(3, np.int32)), None, 0, "d")


@pytest.mark.parametrize("size", range(13))
def test_inline_views_padding_and_utf8_at_every_size(size):
    """The inline bytes are judged as two words: every padding byte after a value of each size
    is seen, ASCII skips the UTF-8 check, and a non-ASCII value still gets it."""
    value = b"a" * size
    views, bufs = build_views([value])
    _offsets.check_binary_views(views, 1, None, 0, bufs, True, "bv")
    for pad in range(4 + size, 16):
        bad = bytearray(views)
        bad[pad] = 0x20
        with pytest.raises(ArrowInvalid, match="view\\[0\\]"):
            _offsets.check_binary_views(bytes(bad), 1, None, 0, bufs, False, "bv")
    if size:
        for at in range(size):  # a lone continuation byte anywhere in the value
            bad = bytearray(views)
            bad[4 + at] = 0x80
            _offsets.check_binary_views(bytes(bad), 1, None, 0, bufs, False, "bv")
            with pytest.raises(ArrowInvalid, match="view\\[0\\]"):
                _offsets.check_binary_views(bytes(bad), 1, None, 0, bufs, True, "bv")
    if size >= 2:
        ok, bufs = build_views(["é".encode() + b"a" * (size - 2)])
        _offsets.check_binary_views(ok, 1, None, 0, bufs, True, "bv")
