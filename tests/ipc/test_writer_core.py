"""``WriterCore.write``: a writer's common batch (its schema, no custom metadata; a writer
without dictionaries, statistics or casting) is one call into C that checks, encodes, writes,
flushes and counts it (issue 34); any other batch goes to the Python path, which tries the C
encoder once."""
from __future__ import annotations

import io
import sys

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.write._flatten import BatchEncoder


def _batch(i: int = 0):
    return arrowmm.record_batch({"i": np.arange(8, dtype=np.int64) + i,
                                 "s": [f"s{j}" if j % 3 else None for j in range(8)],
                                 "f": np.linspace(0, 1, 8)})


class _CountingEncoder(BatchEncoder):
    """A ``BatchEncoder`` that counts the batches handed to ``emit``."""

    def __init__(self):
        super().__init__()
        self.emits = 0

    def emit(self, writer, batch):
        self.emits += 1
        return super().emit(writer, batch)


def _python_frames(call) -> int:
    """How many Python functions run during ``call()``."""
    frames = []

    def profile(frame, event, arg):
        if event == "call":
            frames.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return len(frames)


@pytest.mark.parametrize("new", [arrowmm.new_file, arrowmm.new_stream])
def test_writing_a_batch_of_the_schema_runs_no_python_code(new):
    batch = _batch()
    matched = batch.select([0, 1, 2])  # (a schema object of its own, equal to the writer's)
    assert matched.schema is not batch.schema
    sink = io.BytesIO()
    with new(sink, batch.schema) as w:
        w.write(batch)  # (the writer's schema object)
        w.write(matched)  # (compared with the writer's once, in Python)

        def write_all():
            for b in (batch, matched, batch):
                w.write(b)
                w.write_batch(b)

        assert _python_frames(write_all) == 1  # (write_all itself)
        assert w.num_record_batches == 8
        assert len(w._batch_blocks) == (8 if new is arrowmm.new_file else 0)
    read = (pa.ipc.open_file if new is arrowmm.new_file else pa.ipc.open_stream)(sink.getvalue())
    assert read.read_all().to_pylist() == 8 * batch.to_pylist()


def test_a_batch_not_validated_yet_is_handed_to_the_c_encoder_once():
    imported = arrowmm.record_batch(pa.record_batch({"i": np.arange(4), "s": list("abcd")}))
    assert not any(c._fully_valid for c in imported.storage_columns)
    expected = io.BytesIO()
    with arrowmm.new_stream(expected, imported.schema) as w:
        w._fast = None  # (the Python encoder)
        w.write(arrowmm.record_batch(pa.record_batch({"i": np.arange(4), "s": list("abcd")})))
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, imported.schema) as w:
        w._fast = counting = _CountingEncoder()
        w.write(imported)  # (emit finds a column not validated: validated, then encoded)
        assert counting.emits == 1
        w.write(imported)  # (validated now: emit writes it)
        assert counting.emits == 2 and w.num_record_batches == 2
    assert sink.getvalue()[:len(expected.getvalue()) - 8] == expected.getvalue()[:-8]
