"""Exhaustive sweeps over small valid inputs: every prefix, every metadata byte, seeded mutations.

``test_hostile`` cuts at every 8th byte and mutates at random; these sweeps leave no position
out, on a few small inputs of different types (strings, dictionaries, run-end encoded, string
views with LZ4), so the work stays bounded (a few seconds each):

* **every prefix length** of the stream and of the file: the stream reader (zero-copy, and fed
  in random chunks) reads exactly the batches whose messages lie wholly inside the prefix, with
  the values pyarrow wrote, then stops cleanly or raises the library's error; the file reader
  refuses every proper prefix;
* **every byte of the metadata** (length prefixes, message flatbuffers, footer) changed once,
  a flipped bit or an edge value by turns: the fuzz harness's ``full`` target (open, validate
  fully, convert) and, for streams, its ``differential`` target (zero-copy and chunked reads
  agree) meet nothing but ``ArrowInvalid`` / ``ArrowNotImplementedError``;
* **seeded multi-byte mutations** anywhere in the input, through the same two targets.
"""
from __future__ import annotations

import random

import pytest

import arrowmm
from tests.hostile.test_hostile import address_space_limit, layout, samples

import harness  # (fuzz/harness.py: the targets the fuzzer runs)

SWEEP_KEYS = ["string", "dictionary", "ree", "view-lz4"]
EDGE_BYTES = (0x00, 0xFF, 0x7F, 0x80, 0x01)


@pytest.fixture(autouse=True)
def _memory_guard():
    with address_space_limit():
        yield


def _expected_prefix(key: str, fmt: str, cut: int):
    """(rows of each batch whose message ends inside ``data[:cut]``, True if the cut is clean)."""
    lay = layout(key, fmt)
    expected = samples()[key].expected
    done = [m for m in lay.messages if m.kind == "batch" and m.end <= cut]
    ends = {m.offset for m in lay.messages} | {m.end for m in lay.messages}
    start = 8 if fmt == "file" else 0
    # (a file cut in its footer is damage, as open_file says: review 24, F3)
    return expected[:len(done)], cut in ends or cut == start


def _batches_of(out):
    return [rows for kind, rows in out if kind == "batch"]


@pytest.mark.parametrize("key", SWEEP_KEYS)
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_every_prefix(key, fmt):
    data = samples()[key].data(fmt)
    schema_end = layout(key, fmt).messages[0].end
    problems = []
    for cut in range(len(data)):
        piece = data[:cut]
        if fmt == "file":
            try:
                arrowmm.open_file(piece)
                problems.append(f"cut {cut}: open_file accepted a proper prefix of a file")
            except arrowmm.ArrowInvalid:
                pass
        zero_copy = harness.outcome(lambda: arrowmm.open_stream(piece))
        want, clean = _expected_prefix(key, fmt, cut)
        got = _batches_of(zero_copy)
        if got != want:
            problems.append(f"cut {cut}: read {len(got)} batches {got!r}, expected {len(want)}")
        failed = zero_copy[-1][0] == "error"
        if failed == (clean and cut >= schema_end):
            problems.append(f"cut {cut}: {'error' if failed else 'no error'} at a "
                            f"{'clean' if clean else 'mid-message'} cut: {zero_copy[-1]!r}")
        if fmt == "stream" and cut % 3 == 0:  # fed in chunks: the same batches, the same end
            chunked = harness.outcome(lambda: arrowmm.open_stream(harness.ChunkedSource(piece)))
            if repr(chunked) != repr(zero_copy):
                problems.append(f"cut {cut}: chunked {chunked!r} != zero-copy {zero_copy!r}")
        if len(problems) > 5:
            break
    assert not problems, f"{key} {fmt}:\n" + "\n".join(problems)


def _run_targets(data: bytes, fmt: str) -> None:
    if fmt == "stream":
        harness.target_differential(data)  # validates and converts both ways of reading
    else:
        harness.target_full(data)


@pytest.mark.parametrize("key", SWEEP_KEYS[:3])
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_every_metadata_byte(key, fmt):
    """Each metadata byte changed once: one bit flipped (bit = position // 2 % 8) at even
    positions, set to an edge value at odd ones."""
    lay = layout(key, fmt)
    positions = sorted({p for lo, hi in lay.metadata_spans() for p in range(lo, hi)})
    assert len(positions) > 500  # the sweep covers something real
    for pos in positions:
        old = lay.data[pos]
        value = old ^ (1 << (pos // 2 % 8)) if pos % 2 == 0 else EDGE_BYTES[pos // 2 % len(EDGE_BYTES)]
        if value != old:
            mutated = bytearray(lay.data)
            mutated[pos] = value
            try:
                _run_targets(bytes(mutated), fmt)
            except BaseException as exc:
                raise AssertionError(f"{key} {fmt}: byte {pos} {old:#04x} -> {value:#04x}: "
                                     f"{type(exc).__name__}: {exc}") from exc


MUTATIONS_PER_INPUT = 150


@pytest.mark.parametrize("key", SWEEP_KEYS + ["nested-zstd", "union"])
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_seeded_multi_byte_mutations(key, fmt):
    data = samples()[key].data(fmt)
    rng = random.Random(f"{key}-{fmt}")
    for case in range(MUTATIONS_PER_INPUT):
        mutated = bytearray(data)
        edits = []
        for _ in range(rng.randint(2, 8)):
            pos = rng.randrange(len(mutated))
            width = rng.choice((1, 1, 2, 4, 8))
            value = rng.choice((0, 0xFF, rng.randrange(256)))
            mutated[pos:pos + width] = bytes([value if rng.random() < 0.5 else rng.randrange(256)
                                              for _ in range(len(mutated[pos:pos + width]))])
            edits.append((pos, width))
        try:
            _run_targets(bytes(mutated), fmt)
        except BaseException as exc:
            raise AssertionError(f"{key} {fmt} case {case} (edits at {edits}): "
                                 f"{type(exc).__name__}: {exc}") from exc
