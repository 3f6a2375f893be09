"""Every input in ``tests/hostile/regressions/`` goes through every fuzz target and meets only the
library's errors (``ArrowInvalid`` / ``ArrowNotImplementedError``) or none.

The files are what the fuzzer (``fuzz/run.py``) found, plus hand-made inputs for bugs found
otherwise, each named ``<target>-<what>.bin``; README.md in that directory says what each one
broke and where it was fixed.  ``python fuzz/replay.py tests/hostile/regressions`` runs the same check
outside pytest (``fuzz/sanitize.sh`` does, under AddressSanitizer).
"""
from pathlib import Path

import pytest

from tests.hostile.test_hostile import address_space_limit

import harness  # fuzz/harness.py (pytest's pythonpath holds fuzz/)

ROOT = Path(__file__).resolve().parents[2]

REGRESSIONS = ROOT / "tests" / "hostile" / "regressions"
FILES = sorted(p.name for p in REGRESSIONS.glob("*.bin"))


def test_there_are_regression_files():
    assert FILES, f"no *.bin files in {REGRESSIONS}"


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("target", list(harness.TARGETS))
def test_regression_input(name, target):
    data = (REGRESSIONS / name).read_bytes()
    with address_space_limit():
        harness.run_target(target, data)


def test_every_file_is_described():
    readme = (REGRESSIONS / "README.md").read_text()
    missing = [n for n in FILES if n not in readme]
    assert not missing, f"describe {missing} in {REGRESSIONS / 'README.md'}"


#: What reading each hand-made input must say (a fragment of the first error), read through
#: ``arrowmm.open`` over a file object (the chunk-fed path) with every batch validated.
EXPECTED_ERRORS = {
    "stream-nesting-1100-lists.bin": "max_nesting",
    "file-schema-dag-2pow40-fields.bin": "more fields than",
    "chunks-metadata-length-2gib.bin": "max_metadata_size",
    "full-lz4-declares-2pow62-bytes.bin": "max_decompressed_size",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_hand_made_inputs_fail_as_described(name):
    import io

    import arrowmm
    data = (REGRESSIONS / name).read_bytes()
    with pytest.raises(arrowmm.ArrowInvalid, match=EXPECTED_ERRORS[name]):
        with arrowmm.open(io.BufferedReader(io.BytesIO(data))) as reader:  # pushed in chunks
            for batch in reader:
                batch.validate(full=True)


# -- found by hand: dictionary deltas concatenated over and over -----------------------------------

def _delta_stream(n: int):
    """A stream of n batches of one row, each after a delta adding one value to the dictionary."""
    import io

    import pyarrow as pa
    values, batches = [], []
    for i in range(n):
        values.append(f"v{i}")
        batches.append(pa.record_batch({"d": pa.DictionaryArray.from_arrays(
            pa.array([i], pa.int32()), pa.array(values))}))
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batches[0].schema,
                           options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue(), values


def test_dictionary_deltas_concatenate_linearly(monkeypatch):
    """Each batch used to concatenate every delta so far (n**2 / 2 chunks: a 1.4 MB stream of
    4,000 deltas took 98 s); the merged dictionary now replaces its chunks, so each delta adds
    one two-chunk concatenation.  Earlier batches keep the dictionary of their time."""
    import arrowmm
    import arrowmm.ipc.core.dictionaries as dictionaries
    n = 300
    data, values = _delta_stream(n)
    seen = []
    real = dictionaries.concat_arrays
    monkeypatch.setattr(dictionaries, "concat_arrays", lambda chunks: seen.append(len(chunks)) or real(chunks))
    with arrowmm.open_stream(data) as reader:
        first = reader.read_next_batch()  # column not touched until every delta has arrived
        rows = [v for b in reader for v in b.column(0).to_pylist()]
        assert first.column(0).to_pylist() == ["v0"]
        assert len(first.column(0).dictionary) == 1
    assert rows == values[1:]
    assert sum(seen) <= 2 * n + 2, f"{sum(seen)} chunks concatenated for {n} deltas"
