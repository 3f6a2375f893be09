"""``Table.filter`` (and ``RecordBatch.filter``) by a boolean array (arrowmm's or pyarrow's,
chunked or not) cuts the mask's bits per batch and reads them as stored, packed once a batch
(it unpacked the whole mask to a byte a row first):
the rows, nulls and batches pyarrow's ``Table.filter`` gives, at every batch boundary and bit
offset, and the same errors."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.arrays.primitive import BooleanArray

RNG = np.random.default_rng(11)
#: batch lengths: empty batches, boundaries inside a byte and across words of the mask's bits
LENGTHS = [5, 0, 7, 64, 3, 1, 129, 0, 22]


def _tables(lengths=LENGTHS):
    """The same rows as a pyarrow and an arrowmm table of one batch per length (strings with
    nulls, and booleans: a column of the mask's own type)."""
    n = sum(lengths)
    words = pa.array([f"v{i}" if i % 5 else None for i in range(n)])
    flags = pa.array(RNG.random(n) < 0.5, mask=RNG.random(n) < 0.1)
    batches, at = [], 0
    for m in lengths:
        batches.append(pa.record_batch([words.slice(at, m), flags.slice(at, m)], names=["s", "b"]))
        at += m
    ours = arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in batches])
    assert [b.num_rows for b in ours.to_batches()] == lengths
    return pa.Table.from_batches(batches), ours


def _mask(n: int, nulls: bool, offset: int = 0, keep: float = 0.4) -> pa.Array:
    bits = pa.array(RNG.random(n + offset) < keep,
                    mask=(RNG.random(n + offset) < 0.2) if nulls else None)
    return bits.slice(offset)


def _same(ours: arrowmm.Table, theirs: pa.Table, source: arrowmm.Table):
    assert ours.schema == source.schema
    assert ours.to_pydict() == theirs.to_pydict()
    assert all(b.num_rows for b in ours.to_batches())  # (a batch left empty is dropped)


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("offset", [0, 1, 5, 8, 63, 64, 70])
def test_a_boolean_array_mask_gives_pyarrows_rows(offset, nulls):
    theirs, ours = _tables()
    mask = _mask(theirs.num_rows, nulls, offset)
    expected = theirs.filter(mask)
    _same(ours.filter(mask), expected, ours)
    _same(ours.filter(arrowmm.array(mask)), expected, ours)


@pytest.mark.parametrize("cuts", [[], [5, 12], [1, 2, 3, 200], [76, 76, 77], [13, 100, 101]],
                         ids=str)
@pytest.mark.parametrize("nulls", [False, True])
def test_a_chunked_mask_cut_anywhere_gives_pyarrows_rows(cuts, nulls):
    # (chunks at the batches' boundaries, inside batches, and empty chunks)
    theirs, ours = _tables()
    mask = _mask(theirs.num_rows, nulls, offset=3)
    bounds = [0] + cuts + [len(mask)]
    chunked = pa.chunked_array([mask.slice(a, b - a) for a, b in zip(bounds, bounds[1:])],
                               pa.bool_())
    expected = theirs.filter(chunked)
    _same(ours.filter(chunked), expected, ours)
    _same(ours.filter(arrowmm.chunked_array(chunked)), expected, ours)


def test_a_mask_keeping_all_or_nothing():
    theirs, ours = _tables()
    n = theirs.num_rows
    kept = ours.filter(pa.array(np.ones(n, dtype=bool)))
    assert kept.to_batches() == [b for b in ours.to_batches() if b.num_rows]
    assert all(a is b for a, b in zip(kept.to_batches(),
                                      [b for b in ours.to_batches() if b.num_rows]))
    none = ours.filter(pa.array(np.zeros(n, dtype=bool)))
    assert none.num_rows == 0 and none.schema == ours.schema
    nulls = ours.filter(pa.nulls(n, pa.bool_()))
    assert nulls.num_rows == 0


def test_the_mask_bits_are_not_unpacked(monkeypatch):
    # (BooleanArray.values unpacks a byte a row: the mask's path no longer calls it)
    theirs, ours = _tables()
    mask = _mask(theirs.num_rows, nulls=True, offset=5)
    expected = theirs.filter(mask).to_pydict()

    def unpacked(self):
        raise AssertionError("the mask was unpacked to a byte a row")

    monkeypatch.setattr(BooleanArray, "values", unpacked)
    by_array = ours.filter(mask)
    by_chunks = ours.filter(pa.chunked_array([mask.slice(0, 76), mask.slice(76)]))
    monkeypatch.undo()  # (to_pydict of the boolean column unpacks it)
    assert by_array.to_pydict() == expected and by_chunks.to_pydict() == expected


def test_a_batch_filter_reads_the_mask_bits_too(monkeypatch):
    # (RecordBatch.filter went through the table filter's unpacked route)
    theirs, ours = _tables([129])
    mask = _mask(129, nulls=True, offset=3)
    expected = theirs.to_batches()[0].filter(mask).to_pydict()
    batch = ours.to_batches()[0]

    def unpacked(self):
        raise AssertionError("the mask was unpacked to a byte a row")

    monkeypatch.setattr(BooleanArray, "values", unpacked)
    got = batch.filter(mask)
    monkeypatch.undo()
    assert got.to_pydict() == expected


def test_each_batch_packs_its_piece_of_the_mask_once(monkeypatch):
    # (every column packed the batch's piece of the mask again: twice here, per batch)
    from arrowmm.compute import selection
    theirs, ours = _tables()
    mask = _mask(theirs.num_rows, nulls=False, offset=0)
    packed = []
    real = selection.k.mask_from_bits

    def counted(*args, **kwargs):
        packed.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(selection.k, "mask_from_bits", counted)
    got = ours.filter(mask)
    monkeypatch.undo()
    assert got.to_pydict() == theirs.filter(mask).to_pydict()
    assert sorted(packed) == sorted(LENGTHS)


def test_masks_of_another_length_or_type_are_refused_as_before():
    theirs, ours = _tables()
    n = theirs.num_rows
    for wrong in (pa.array(np.ones(n - 1, dtype=bool)), arrowmm.array([True] * (n + 1)),
                  pa.chunked_array([pa.array([True] * 3), pa.array([False] * (n - 4))])):
        with pytest.raises(ArrowInvalid, match=f"the mask has {len(wrong)} values, the data "
                                               f"{n} rows"):
            ours.filter(wrong)
    with pytest.raises(ArrowInvalid, match="the mask must be boolean, got a int64 array"):
        ours.filter(pa.array(np.ones(n, dtype=np.int64)))


def test_numpy_and_list_masks_still_filter():
    theirs, ours = _tables()
    keep = RNG.random(theirs.num_rows) < 0.3
    _same(ours.filter(keep), theirs.filter(pa.array(keep)), ours)
    _same(ours.filter(keep.tolist()), theirs.filter(pa.array(keep)), ours)


def test_a_batch_filter_makes_no_table_and_no_chunked_mask(monkeypatch):
    # (RecordBatch.filter went through a table of one batch and a chunked array around a
    # pyarrow mask, which cost more than the kernels of a batch of 10^5 rows)
    from arrowmm.compute import tables
    theirs, ours = _tables([129])
    mask = _mask(129, nulls=True, offset=3)
    batch, expected = ours.to_batches()[0], theirs.to_batches()[0].filter(mask).to_pydict()

    def refused(*args, **kwargs):
        raise AssertionError("a batch's filter went through a table's route")

    monkeypatch.setattr(tables, "as_chunked", refused)
    monkeypatch.setattr(tables, "Table", refused)
    got = [batch.filter(mask), batch.filter(arrowmm.array(mask)),
           batch.filter(arrowmm.field("b") == True)]  # noqa: E712
    monkeypatch.undo()
    assert got[0].to_pydict() == got[1].to_pydict() == expected
    assert got[2].to_pydict() == theirs.to_batches()[0].filter(
        pa.compute.equal(theirs.column("b").chunk(0), True)).to_pydict()
