"""Casts between string/binary (and their large forms) and their views, one C pass each way
(``_cast.text_views``, ``_cast.views_text``), against pyarrow's cast: values at the inline
edge (12 and 13 bytes), multi-byte UTF-8, nulls, slices at offsets that are not whole bytes,
views in several data buffers, empty arrays; the views pointing into the source's data buffer
(no copy), split into buffers past a limit; hostile offsets and views refused."""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from arrowmm.interop._cast import text_views, views_text

PLAIN = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]
VALUES = ["", "a", "twelve bytes", "thirteen byte", "é" * 6, "é" * 6 + "x", "日本語のテキストです",
          None, "x" * 40, "0123456789abcdef", None, "four", "\U0001f600" * 3, "\U0001f600" * 4]


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _view_of(plain):
    return pa.string_view() if _utf8(plain) else pa.binary_view()


def _utf8(pa_type):
    return pa_type in (pa.string(), pa.large_string(), pa.string_view())


def _values(pa_type):
    return [v if v is None or _utf8(pa_type) else v.encode() for v in VALUES * 3]


def _sources(pa_type):
    """The array whole, sliced at 3 (not a whole byte) and 8, one row, and empty."""
    whole = pa.array(_values(pa_type), pa_type)
    return [whole, whole.slice(3), whole.slice(8, 17), whole.slice(5, 1), whole.slice(4, 0),
            pa.array([], pa_type)]


def _cast_both(source: pa.Array, target) -> pa.Array:
    """arrowmm's cast of ``source``, checked by pyarrow's full validation and equal to
    pyarrow's cast."""
    mine = pa.array(arrowmm.array(source).cast(_mm_type(target)))
    mine.validate(full=True)
    theirs = source.cast(target)
    assert mine.type == target
    assert mine.equals(theirs), (mine, theirs)
    return mine


def _views(array: pa.Array) -> np.ndarray:
    return np.frombuffer(array.buffers()[1], np.uint8).reshape(-1, 16)[array.offset:][:len(array)]


@pytest.mark.parametrize("plain", PLAIN, ids=str)
def test_plain_to_views_point_into_the_source_data_and_zero_the_nulls(plain):
    """Long values point into the source's data buffer itself (no copy); a null row is a
    zeroed view even where the source's offsets give it bytes."""
    for source in _sources(plain):
        mine = _cast_both(source, _view_of(plain))
        views, data = _views(mine), source.buffers()[2]
        long_rows = [i for i, v in enumerate(source.to_pylist()) if v is not None and len(v) > 12]
        if long_rows:
            assert len(mine.buffers()) == 3  # (one data buffer: a slice of the source's)
            got = mine.buffers()[2]
            assert data.address <= got.address and got.address + got.size <= \
                data.address + data.size
        assert not views[~source.is_valid().to_numpy(zero_copy_only=False)].any()
    # null rows over bytes (pyarrow leaves the offsets of a masked value as they are)
    width = np.int64 if pa.types.is_large_string(plain) or pa.types.is_large_binary(plain) \
        else np.int32
    offsets = np.array([0, 13, 26, 30], width)
    source = pa.Array.from_buffers(plain, 3, [pa.array([True, False, True]).buffers()[1],
                                              pa.py_buffer(offsets),
                                              pa.py_buffer(b"a" * 13 + b"b" * 13 + b"cccc")])
    mine = _cast_both(source, _view_of(plain))
    assert not _views(mine)[1].any()


@pytest.mark.parametrize("plain", PLAIN, ids=str)
def test_views_to_plain_gather_every_buffer(plain):
    """Views in several data buffers (pyarrow's concatenation keeps each chunk's), inline and
    not, sliced, nulls, gathered into offsets and one data buffer, nulls an empty range."""
    view = _view_of(plain)
    chunks = [pa.array(_values(plain)[k::3], view) for k in range(3)]
    joined = pa.concat_arrays(chunks)
    assert len(joined.buffers()) > 3
    for source in [joined, joined.slice(3), joined.slice(9, 20), *_sources(view)]:
        mine = _cast_both(source, plain)
        width = np.int64 if plain in (pa.large_string(), pa.large_binary()) else np.int32
        offsets = np.frombuffer(mine.buffers()[1], width)[mine.offset:][:len(mine) + 1]
        nulls = ~source.is_valid().to_numpy(zero_copy_only=False)
        assert (np.diff(offsets)[nulls] == 0).all()


def test_binary_views_to_strings_name_the_row_that_is_not_utf8():
    source = pa.array([b"fine", None, b"this one is \xff long", b"\xc3"], pa.binary_view())
    for target in (pa.string(), pa.large_string(), pa.string_view()):
        with pytest.raises(ArrowInvalid, match=r"Invalid UTF8 payload.*view\[2\]"):
            arrowmm.array(source).cast(_mm_type(target))
        with pytest.raises(pa.ArrowInvalid):
            source.cast(target)


def test_text_views_split_the_data_past_the_limit():
    """Past ``limit`` bytes the long values go into more buffers, each a slice of the data
    (a limit of 40 stands for 2 GiB); pyarrow reads the result as the source's values."""
    values = [f"value number {i:03d}" + "z" * (i % 17) for i in range(60)] + ["", "short"]
    source = pa.array(values, pa.large_string())
    offsets = np.frombuffer(source.buffers()[1], np.int64)
    views, ranges = text_views(offsets, source.buffers()[2], None, 0, 40)
    assert len(ranges) > 10 and ((ranges[:, 1] - ranges[:, 0]) <= 40).all()
    data = np.frombuffer(source.buffers()[2], np.uint8)
    result = pa.Array.from_buffers(pa.string_view(), len(values), [
        None, pa.py_buffer(views), *(pa.py_buffer(data[lo:hi]) for lo, hi in ranges)])
    result.validate(full=True)
    assert result.to_pylist() == values
    with pytest.raises(ArrowInvalid, match=r"row 2: its 54 bytes are more than a view's data "
                                           r"buffer holds \(40 bytes\)"):
        text_views(np.array([0, 13, 26, 80], np.int64), b"q" * 80, None, 0, 40)


def test_text_views_refuse_offsets_outside_the_data():
    with pytest.raises(ArrowInvalid, match=r"row 1: its offsets \[3, 99\) fall outside the "
                                           r"20-byte"):
        text_views(np.array([0, 3, 99], np.int32), b"x" * 20, None, 0)
    with pytest.raises(ArrowInvalid, match="row 0"):
        text_views(np.array([5, 2], np.int64), b"x" * 20, None, 0)
    views, _ = text_views(np.array([0, 3, 99], np.int32), b"x" * 20, b"\x01", 0)  # (a null)
    assert not views[16:].any()


def test_views_text_refuse_views_outside_their_buffers():
    views = np.zeros((3, 16), np.uint8)
    views[:, :4] = np.array([20, 5, 20], "<i4").view(np.uint8).reshape(3, 4)
    views[2, 8:12] = np.array([1], "<i4").view(np.uint8)  # (buffer 1 of 1)
    with pytest.raises(ArrowInvalid, match="row 2: its view points outside"):
        views_text(views.reshape(-1), [b"y" * 20], None, 0, 3, False)
    views[2, 8:12] = 0
    views[2, 12:16] = np.array([1], "<i4").view(np.uint8)  # (bytes 1 to 21 of 20)
    with pytest.raises(ArrowInvalid, match="row 2"):
        views_text(views.reshape(-1), [b"y" * 20], None, 0, 3, False)
    offsets, data = views_text(views.reshape(-1), [b"y" * 20], b"\x03", 0, 3, True)  # (null)
    assert offsets.tolist() == [0, 20, 25, 25] and data.tobytes() == b"y" * 20 + b"\0" * 5
