"""arrowmm._core._utf8 against Python's own strict UTF-8 decoder."""
import mmap
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrowmm._core import _utf8
from arrowmm.errors import ArrowInvalid
from tests.support.kernel_support import guarded

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
SETTINGS = settings(deadline=None, max_examples=200)


def first_error(b):
    """Python's verdict: None if valid, else the index where decoding fails."""
    try:
        b.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        return exc.start


def mutated(text_bytes, edits):
    out = bytearray(text_bytes)
    for pos, byte in edits:
        if out:
            out[pos % len(out)] = byte
    return bytes(out)


# Mostly valid text with a few random byte edits: exercises the interesting
# near-valid sequences that uniform random bytes rarely produce.
near_valid = st.builds(
    mutated, st.text(max_size=60).map(str.encode),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3))


@SETTINGS
@given(st.one_of(st.binary(max_size=80), near_valid))
def test_validate_matches_python(b):
    assert _utf8.validate_utf8(b) == (first_error(b) is None)


@SETTINGS
@given(st.one_of(st.binary(min_size=1, max_size=80), near_valid.filter(bool)))
def test_reported_byte_matches_python_error_start(b):
    """check_utf8_offsets names the same byte Python's decoder stops at."""
    want = first_error(b)
    offsets = np.array([0, len(b)], np.int32)
    if want is None:
        _utf8.check_utf8_offsets(b, offsets, 1, None, 0, "s")
    else:
        with pytest.raises(ArrowInvalid, match=rf"value\[0\] .* at byte {want} of the value "
                                               rf"\(byte 0x{b[want]:02x}\)"):
            _utf8.check_utf8_offsets(b, offsets, 1, None, 0, "s")


@SETTINGS
@given(st.one_of(st.binary(max_size=40), near_valid, st.integers(0, 30).map(lambda n: b"a" * n)))
def test_kernels_never_read_past_the_buffer(b):
    want = first_error(b) is None
    with guarded(b) as buf:
        assert _utf8.validate_utf8(buf) == want
        offsets = np.array([0, len(b)])
        if want:
            _utf8.check_utf8_offsets(buf, offsets, 1, None, 0, "g")
        else:
            with pytest.raises(ArrowInvalid, match=r"value\[0\]"):
                _utf8.check_utf8_offsets(buf, offsets, 1, None, 0, "g")


def test_all_two_byte_sequences():
    for b0 in range(256):
        for b1 in range(256):
            b = bytes([b0, b1])
            assert _utf8.validate_utf8(b) == (first_error(b) is None), b


@pytest.mark.parametrize("lead", range(0xE0, 0x100))
def test_three_and_four_byte_leads(lead):
    tails = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
    for b1 in range(256):
        for b2 in tails:
            for b3 in (None, 0x7F, 0x80, 0xBF, 0xC0):
                b = bytes([lead, b1, b2] + ([] if b3 is None else [b3]))
                assert _utf8.validate_utf8(b) == (first_error(b) is None), b


@pytest.mark.parametrize("b,ok", [
    (b"", True), (b"\x00", True), ("\U0010FFFF".encode(), True), ("\uFFFF".encode(), True),
    (b"\xc0\x80", False),            # overlong NUL
    (b"\xe0\x80\x80", False),        # overlong 3-byte
    (b"\xf0\x80\x80\x80", False),    # overlong 4-byte
    (b"\xed\xa0\x80", False),        # UTF-16 surrogate U+D800
    (b"\xed\xbf\xbf", False),        # surrogate U+DFFF
    (b"\xf4\x90\x80\x80", False),    # U+110000
    (b"\xf5\x80\x80\x80", False), (b"\xff", False), (b"\x80", False),
    (b"\xe2\x82", False),            # truncated euro sign
    (b"abc\xf0\x9f\x98", False),     # truncated emoji
])
def test_edge_cases(b, ok):
    assert (first_error(b) is None) == ok  # the reference agrees with the table
    assert _utf8.validate_utf8(b) == ok


@pytest.mark.parametrize("bad", [b"\xff", b"\xc3", "é".encode()])
def test_ascii_fast_path_sees_every_position(bad):
    for n in range(0, 40):
        for pos in range(n + 1):
            b = b"a" * pos + bad + b"b" * (n - pos)
            assert _utf8.validate_utf8(b) == (first_error(b) is None), (n, pos)


def test_read_only_inputs():
    text = ("ascii and ünïcödé " * 50).encode()
    arr = np.frombuffer(text, np.uint8)  # read-only view of bytes
    assert _utf8.validate_utf8(arr) and _utf8.validate_utf8(memoryview(text))
    assert not _utf8.validate_utf8(np.frombuffer(text[:-2] + b"\xc3", np.uint8))
    with tempfile.TemporaryFile() as f:
        f.write(text)
        f.flush()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert _utf8.validate_utf8(m)
            offsets = np.array([0, 6, len(text)], np.int64)
            _utf8.check_utf8_offsets(m, offsets, 2, None, 0, "mm")


# ---------------------------------------------------------------- check_utf8_offsets

def validity_for(valid, off):
    bits = np.concatenate([np.ones(off, bool), np.asarray(valid, bool)])
    v = np.packbits(bits, bitorder="little")
    v.setflags(write=False)
    return v


@st.composite
def string_columns(draw):
    """(data, offsets, valid flags, bit offset): cut points anywhere in (mostly) valid text,
    so values often split a multi-byte character."""
    data = draw(st.one_of(st.text(max_size=80).map(str.encode), near_valid, st.binary(max_size=40)))
    n = draw(st.integers(0, 40))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), min_size=n + 1, max_size=n + 1)))
    valid = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if draw(st.booleans()) else None
    return data, cuts, valid, draw(st.integers(0, 70))


@SETTINGS
@given(string_columns(), st.sampled_from([np.int32, np.int64]))
def test_check_utf8_offsets_matches_per_value_decode(col, dtype):
    data, cuts, valid, off = col
    n = len(cuts) - 1
    validity = None if valid is None else validity_for(valid, off)
    bad = next((i for i in range(n) if (valid is None or valid[i])
                and first_error(data[cuts[i]:cuts[i + 1]]) is not None), None)
    offsets = np.array(cuts, dtype)
    offsets.setflags(write=False)
    args = (data, offsets, n, validity, off if validity is not None else 0, "col.s")
    if bad is None:
        _utf8.check_utf8_offsets(*args)
    else:
        with pytest.raises(ArrowInvalid) as info:
            _utf8.check_utf8_offsets(*args)
        msg = str(info.value)
        assert msg.startswith(f"UTF-8 of 'col.s': value[{bad}] (data[{cuts[bad]}:{cuts[bad + 1]}])"), msg
        assert f"at byte {first_error(data[cuts[bad]:cuts[bad + 1]])} of the value" in msg


def test_split_code_point_is_caught_unless_null():
    data = "aé".encode()  # 61 c3 a9
    offsets = np.array([0, 2, 3], np.int32)  # "a\xc3" | "\xa9"
    with pytest.raises(ArrowInvalid, match=r"value\[0\] \(data\[0:2\]\)"):
        _utf8.check_utf8_offsets(data, offsets, 2, None, 0, "s")
    with pytest.raises(ArrowInvalid, match=r"value\[1\] \(data\[2:3\]\)"):
        _utf8.check_utf8_offsets(data, offsets, 2, validity_for([False, True], 3), 3, "s")
    _utf8.check_utf8_offsets(data, offsets, 2, validity_for([False, False], 3), 3, "s")
    # invalid bytes under a null slot are ignored, as pyarrow does
    _utf8.check_utf8_offsets(b"ok\xffok", np.array([0, 2, 3, 5]), 3, validity_for([1, 0, 1], 0), 0, "s")


def test_check_utf8_offsets_defends_against_bad_offsets():
    data = b"hello"
    cases = [
        ([0, 3, 9], "offset[0]=0, offset[2]=9 outside data of 5 bytes"),
        ([-1, 3, 5], "offset[0]=-1, offset[2]=5 outside data of 5 bytes"),
        ([3, 4, 2], "offset[0]=3, offset[2]=2 outside data"),
        ([0, 4, 2, 5], "offset[1]=4, offset[2]=2 (need 0 <= offset[1] <= offset[2] <= data size 5)"),
        ([0, 9, 5], "offset[0]=0, offset[1]=9 (need"),
        ([0, -3, 5], "offset[0]=0, offset[1]=-3 (need"),
    ]
    for offs, text in cases:
        for dtype in (np.int32, np.int64):
            with pytest.raises(ArrowInvalid) as info:
                _utf8.check_utf8_offsets(data, np.array(offs, dtype), len(offs) - 1, None, 0, "o")
            assert text in str(info.value) and "'o'" in str(info.value)
    with pytest.raises(ArrowInvalid, match=r"2 offsets for length 2 \(need length\+1=3\)"):
        _utf8.check_utf8_offsets(data, np.array([0, 5]), 2, None, 0, "o")
    with pytest.raises(ArrowInvalid, match=r"length=-1 < 0"):
        _utf8.check_utf8_offsets(data, np.array([0, 5]), -1, None, 0, "o")
    with pytest.raises(ArrowInvalid, match=r"validity bitmap of 'o': bit_offset 7 \+ length 2 = 9 bits"):
        _utf8.check_utf8_offsets(data, np.array([0, 2, 5]), 2, b"\xff", 7, "o")
    _utf8.check_utf8_offsets(b"", np.zeros(0, np.int32), 0, None, 0, "o")
    with pytest.raises(TypeError):
        _utf8.check_utf8_offsets(data, np.array([0, 5], np.uint32), 1, None, 0, "o")


def test_long_column_with_one_bad_value():
    words = [("wörd%d" % i).encode() for i in range(5000)]
    offsets = np.cumsum([0] + [len(w) for w in words])
    data = bytearray(b"".join(words))
    _utf8.check_utf8_offsets(bytes(data), offsets, len(words), None, 0, "w")
    data[offsets[4321] + 1] = 0xC3  # first byte of ö -> a lone lead byte inside value 4321
    data[offsets[4321] + 2] = 0x41
    with pytest.raises(ArrowInvalid, match=r"value\[4321\] .* at byte 1 of the value \(byte 0xc3\)"):
        _utf8.check_utf8_offsets(bytes(data), offsets, len(words), None, 0, "w")


@pytest.mark.parametrize("length", [1, 7, 63, 64, 65, 200])
def test_ascii_run_still_needs_offsets_in_order(length):
    """An all-ASCII run skips the per-value boundary scan; offsets that go back in the middle
    must still be caught (they would read other bytes as a value)."""
    data = np.frombuffer(b"a" * length * 2, np.uint8)
    offs = np.arange(length + 1, dtype=np.int32) * 2
    _utf8.check_utf8_offsets(data, offs, length, None, 0, "col")
    if length > 1:
        offs[length // 2] = offs[length // 2 + 1] + 1  # one offset past its successor
        with pytest.raises(ArrowInvalid, match="offset"):
            _utf8.check_utf8_offsets(data, offs, length, None, 0, "col")


@pytest.mark.parametrize("at", [0, 1, 62, 63, 64, 65, 127, 128, 199])
def test_one_non_ascii_byte_anywhere_takes_the_full_check(at):
    """The 64-byte ASCII blocks and the tail: a continuation byte at any position is seen."""
    raw = bytearray(b"a" * 200)
    raw[at] = 0x80
    offs = np.array([0, 200], np.int64)
    with pytest.raises(ArrowInvalid, match=f"byte {at} of the value"):
        _utf8.check_utf8_offsets(np.frombuffer(bytes(raw), np.uint8), offs, 1, None, 0, "col")
