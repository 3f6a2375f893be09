"""``_kernels.take_list_ranges``: the new offsets and the child positions of the lists taken,
in one pass over their offsets, against numpy's answer; null rows cover nothing; the first
row whose offsets leave the child or decrease is named, never read past."""
from __future__ import annotations

import numpy as np
import pytest

import arrowmm
from arrowmm.compute import _kernels

RNG = np.random.default_rng(4242)


def _expected(offsets, rows, nulls):
    starts, ends = offsets[rows].astype(np.int64), offsets[rows + 1].astype(np.int64)
    lengths = np.where(nulls, 0, ends - starts) if nulls is not None else ends - starts
    new_offsets = np.concatenate([[0], np.cumsum(lengths)])
    picks = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)] or [[]])
    return new_offsets, picks.astype(np.int64)


@pytest.mark.parametrize("width", [np.int32, np.int64])
@pytest.mark.parametrize("with_nulls", [False, True])
def test_ranges_match_numpy(width, with_nulls):
    lengths = RNG.integers(0, 5, 3000)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(width)
    rows = RNG.integers(0, 3000, 700).astype(np.int64)
    nulls = RNG.random(700) < 0.2 if with_nulls else None
    new_offsets, picks, bad = _kernels.take_list_ranges(offsets, rows, nulls, int(offsets[-1]))
    want_offsets, want_picks = _expected(offsets, rows, nulls)
    assert bad == -1
    assert new_offsets.tolist() == want_offsets.tolist()
    assert picks.tolist() == want_picks.tolist()


def test_no_rows():
    new_offsets, picks, bad = _kernels.take_list_ranges(np.array([0, 2], np.int32),
                                                        np.zeros(0, np.int64), None, 2)
    assert (new_offsets.tolist(), picks.tolist(), bad) == ([0], [], -1)


@pytest.mark.parametrize("offsets", [[0, 1, 1, 9, 3], [0, 2, 1, 3, 3], [0, 1, 2, 3, -1]])
@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0]])
def test_the_first_bad_row_taken_is_named(offsets, order):
    """Past the child, decreasing, negative: the first row taken whose two offsets show it."""
    offsets = np.array(offsets, np.int32)
    rows = np.array(order, np.int64)
    sound = [0 <= offsets[r] <= offsets[r + 1] <= 3 for r in order]
    new_offsets, picks, bad = _kernels.take_list_ranges(offsets, rows, None, 3)
    assert new_offsets is None and picks is None
    assert bad == sound.index(False)


def test_rows_outside_the_offsets_are_refused():
    with pytest.raises(arrowmm.ArrowInvalid, match="index 3"):
        _kernels.take_list_ranges(np.array([0, 1, 2, 3], np.int32), np.array([3], np.int64),
                                  None, 3)
