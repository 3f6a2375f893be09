"""Footer statistics are bound to the batches they describe (arrowmm.ipc.core.statistics,
``checked_file_statistics``): damaged, copied or unbound statistics are ignored, so a filtered
scan reads those batches instead of skipping rows that match (adversarial review s41).

Each test would fail on the code before the binding: there any document that parsed, with row
counts that agreed, was trusted.
"""
from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.ipc as pa_ipc

import arrowmm
from arrowmm.ipc.core.statistics import DIGEST_KEY, STATISTICS_KEY
from arrowmm.ipc.write.footer_statistics import checked_file_statistics

SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


def _two_batches(path, first, second, **options):
    with arrowmm.new_file(path, SCHEMA, statistics=True, **options) as writer:
        writer.write({"x": first})
        writer.write({"x": second})


def _footer_metadata(path) -> dict:
    with arrowmm.open_file(path) as reader:
        return dict(reader.metadata)


def _lie_in(path, values, fake):
    """Overwrite ``values`` (int64, in a batch body) with ``fake``: a scan that reads that
    batch sees them; one that skips it by its statistics does not."""
    data = bytearray(path.read_bytes())
    raw = np.asarray(values, "<i8").tobytes()
    at = bytes(data).index(raw)
    data[at:at + len(raw)] = np.asarray(fake, "<i8").tobytes()
    path.write_bytes(bytes(data))


def test_flipped_digit_in_footer_statistics_is_ignored(tmp_path):
    """One damaged byte in the footer's statistics ('"max":400' -> '"max":100'; the footer
    still parses) made a filtered scan skip the batch holding 200, 300, 400 and return [].
    Only that batch's statistics are dropped: batch 0's still prune it (its body, overwritten
    behind the statistics' back, is never read)."""
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "x.arrow"
    _two_batches(path, [1, 2, 3, 4], [100, 200, 300, 400])
    _lie_in(path, [1, 2, 3, 4], [500, 500, 500, 500])
    data = bytearray(path.read_bytes())
    at = data.rfind(b'"max":400')
    assert at > 0
    data[at + 6] = ord("1")
    path.write_bytes(bytes(data))
    expected = pads.dataset(str(path), format="ipc").to_table(
        filter=pads.field("x") > 150).column("x").to_pylist()
    assert expected == [500] * 4 + [200, 300, 400]
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 150)]).column("x").to_pylist() == [200, 300, 400]
    with arrowmm.open_file(path) as reader:  # (only the damaged batch's entry is dropped)
        entries = checked_file_statistics(reader)
    assert entries[0] is not None and entries[1] is None


def test_footer_metadata_copied_by_arrowmm_is_not_carried_over(tmp_path):
    """``new_file(..., metadata=reader.metadata)`` (the round trip docs/writing.md shows)
    copied another file's statistics onto other data: filters returned [], count_rows 0."""
    _two_batches(tmp_path / "src.arrow", [1, 2, 3, 4], [100, 200, 300, 400])
    metadata = {**_footer_metadata(tmp_path / "src.arrow"), "k": "v"}
    (tmp_path / "d").mkdir()
    copy = tmp_path / "d" / "copy.arrow"
    with arrowmm.new_file(copy, SCHEMA, metadata=metadata) as writer:
        writer.write({"x": [500, 600, 700, 800]})
        writer.write({"x": [5, 6, 7, 8]})
    assert _footer_metadata(copy) == {"k": "v"}  # (the writer writes its own statistics or none)
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 50)]).column("x").to_pylist() == [500, 600, 700, 800]
    assert ds.count_rows(filter=[("x", "<", 10)]) == 4


def test_footer_metadata_copied_by_pyarrow_is_ignored(tmp_path):
    """pyarrow's ``new_file(metadata=...)`` keeps the key; its batches, byte for byte the same
    headers as the source's but for arrowmm's stamp, carry none, so the statistics are not
    theirs.  (Also with statistics that add_statistics recorded, bound to their headers.)"""
    _two_batches(tmp_path / "src.arrow", [1, 2, 3, 4], [100, 200, 300, 400])
    arrowmm.add_statistics(tmp_path / "src.arrow", tmp_path / "added.arrow")
    schema = pa.schema([("x", pa.int64())])
    for k, source in enumerate(["src.arrow", "added.arrow"]):
        metadata = _footer_metadata(tmp_path / source)
        (tmp_path / f"d{k}").mkdir()
        with pa_ipc.new_file(str(tmp_path / f"d{k}" / "copy.arrow"), schema,
                             metadata=metadata) as w:
            w.write_batch(pa.record_batch({"x": pa.array([500, 600, 700, 800])}))
            w.write_batch(pa.record_batch({"x": pa.array([5, 6, 7, 8])}))
        ds = arrowmm.dataset(str(tmp_path / f"d{k}"))
        assert ds.to_table(filter=[("x", ">", 50)]).column("x").to_pylist() == \
            [500, 600, 700, 800], source
        assert ds.count_rows(filter=[("x", "<", 10)]) == 4, source


def test_add_statistics_output_prunes_and_its_damage_is_ignored(tmp_path):
    """add_statistics keeps every message byte for byte, so it binds its entries to each
    batch's block and header bytes instead of a stamp: they prune, and a flipped digit in
    them is ignored."""
    src = tmp_path / "src.arrow"
    with pa_ipc.new_file(str(src), pa.schema([("x", pa.int64())])) as w:
        w.write_batch(pa.record_batch({"x": pa.array([1, 2, 3, 4])}))
        w.write_batch(pa.record_batch({"x": pa.array([100, 200, 300, 400])}))
    (tmp_path / "d").mkdir()
    dst = tmp_path / "d" / "dst.arrow"
    arrowmm.add_statistics(src, dst)
    good = dst.read_bytes()
    _lie_in(dst, [1, 2, 3, 4], [500, 500, 500, 500])
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 150)]).column("x").to_pylist() == [200, 300, 400]
    data = bytearray(good)
    at = data.rfind(b'"max":400')
    data[at + 6] = ord("1")
    dst.write_bytes(bytes(data))
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 150)]).column("x").to_pylist() == [200, 300, 400]


def test_unbound_statistics_of_older_writers_are_ignored(tmp_path):
    """Version 1 documents (older arrowmm writers, or anyone's hand) bind nothing: a filter
    reads the batches they describe, whatever they say."""
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "old.arrow"
    doc = {"version": 1, "columns": ["x"],
           "batches": [{"rows": 4, "columns": {"x": {"nulls": 0, "min": 0, "max": 0}}}]}
    with pa_ipc.new_file(str(path), pa.schema([("x", pa.int64())]),
                         metadata={STATISTICS_KEY: json.dumps(doc)}) as w:
        w.write_batch(pa.record_batch({"x": pa.array([5, 6, 7, 8])}))
    assert arrowmm.dataset(str(tmp_path / "d")).count_rows(filter=[("x", ">", 4)]) == 4


def test_stream_batch_statistics_are_bound_to_their_message(tmp_path):
    """A stream batch's own statistics (in its message) are stamped too: a flipped digit in
    them is ignored (the batch is read), and statistics given by the caller are not written."""
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, SCHEMA, statistics=True) as writer:
        writer.write({"x": [1, 2, 3, 4]})
        writer.write({"x": [100, 200, 300, 400]},
                     metadata={STATISTICS_KEY: '{"version":2,"rows":4,"columns":{}}'})
    data = bytearray(sink.getvalue())
    with arrowmm.open_stream(bytes(data)) as reader:
        batches = list(reader)
    assert DIGEST_KEY in batches[1].metadata
    assert json.loads(batches[1].metadata[STATISTICS_KEY])["columns"]["x"]["max"] == 400
    at = data.rfind(b'"max":400')
    data[at + 6] = ord("1")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.arrows").write_bytes(bytes(data))
    got = arrowmm.dataset(str(tmp_path / "d")).to_table(filter=[("x", ">", 150)])
    assert got.column("x").to_pylist() == [200, 300, 400]
