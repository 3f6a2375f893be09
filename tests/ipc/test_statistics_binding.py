"""Statistics that do not describe the data beside them are never used (the adversarial
review of session 41): a damaged digit in the footer's document, a document copied by
pyarrow into a file of other values, a stream batch's document damaged.  Each read as
silent wrong data before version 2 (a filter dropped rows that match); now the digest and
the first batch's stamp (``arrowmm.ipc.core.statistics``) keep such a document out, and a
filter reads the values instead.  Version 3 (the review of session 42) binds each entry to
its batch's footer Block: two swapped Blocks no longer lend one batch another's bounds."""
import hashlib
import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import DIGEST_KEY, STAMP_KEY, STATISTICS_KEY


def _two_batches(path, first=(1, 2, 3, 4), second=(100, 200, 300, 400)):
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]),
                          statistics=True) as writer:
        writer.write({"x": list(first)})
        writer.write({"x": list(second)})
    return path


def _footer_metadata(path) -> dict:
    with arrowmm.open_file(path) as reader:
        return dict(reader.metadata)


def test_a_good_file_is_pruned_by_its_statistics(tmp_path):
    path = _two_batches(tmp_path / "x.arrow")
    with arrowmm.open_file(path) as reader:
        doc = json.loads(reader.metadata[STATISTICS_KEY])
        assert doc["version"] == 3 and len(doc["id"]) == 32 and doc["types"] == {"x": "int64"}
        assert [tuple(e["block"]) for e in doc["batches"]] == \
                reader.footer.record_batches.tolist()
        assert reader.batch_metadata(0) == {STAMP_KEY: doc["id"]}
    # (a file whose batch 0 holds a value the document says it lacks: only statistics would
    # make the filter skip it, so the filter's answer shows whether they were used)
    forged = tmp_path / "d" / "forged.arrow"
    forged.parent.mkdir()
    data = bytearray(path.read_bytes())
    at = data.find((4).to_bytes(8, "little"))  # batch 0's value 4 ...
    data[at:at + 8] = (1000).to_bytes(8, "little")  # ... now 1000: its max still says 4
    forged.write_bytes(bytes(data))
    got = arrowmm.dataset(str(forged.parent)).to_table(filter=[("x", ">", 500)])
    assert got.column("x").to_pylist() == []  # batch 0 skipped on its (now stale) max


def test_a_flipped_digit_in_the_footer_statistics_is_not_trusted(tmp_path):
    (tmp_path / "d").mkdir()
    path = _two_batches(tmp_path / "d" / "x.arrow")
    data = bytearray(path.read_bytes())
    at = data.rfind(b'"max":400')
    data[at + 6] = ord("1")  # '"max":100': the batch holding 200, 300, 400 looks too small
    path.write_bytes(bytes(data))
    expected = pads.dataset(str(path), format="ipc").to_table(
        filter=pads.field("x") > 150).column("x").to_pylist()
    assert expected == [200, 300, 400]
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 150)]).column("x").to_pylist() == expected
    assert ds.count_rows(filter=[("x", ">", 150)]) == 3


def test_statistics_copied_by_pyarrow_into_other_values_are_not_trusted(tmp_path):
    # pyarrow keeps the footer metadata it is given: the document (and its digest, which
    # still matches) describe the first file's values, not these
    metadata = _footer_metadata(_two_batches(tmp_path / "src.arrow"))
    assert DIGEST_KEY in metadata
    (tmp_path / "d").mkdir()
    with pa_ipc.new_file(str(tmp_path / "d" / "copy.arrow"), pa.schema([("x", pa.int64())]),
                         metadata=metadata) as w:
        w.write_batch(pa.record_batch({"x": pa.array([500, 600, 700, 800])}))
        w.write_batch(pa.record_batch({"x": pa.array([5, 6, 7, 8])}))
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 50)]).column("x").to_pylist() == [500, 600, 700, 800]
    assert ds.count_rows(filter=[("x", "<", 10)]) == 4


def test_statistics_copied_by_arrowmm_are_left_out(tmp_path):
    metadata = _footer_metadata(_two_batches(tmp_path / "src.arrow"))
    (tmp_path / "d").mkdir()
    copy = tmp_path / "d" / "copy.arrow"
    with arrowmm.new_file(copy, arrowmm.schema([("x", arrowmm.int64())]),
                          metadata={**metadata, "k": "v"}) as writer:
        writer.write({"x": [500, 600, 700, 800]}, metadata={STAMP_KEY: "0" * 32, "b": "1"})
    with arrowmm.open_file(copy) as reader:
        assert reader.metadata == {"k": "v"}
        assert reader.batch_metadata(0) == {"b": "1"}  # (a stamp given to it is left out too)
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 50)]).column("x").to_pylist() == [500, 600, 700, 800]


def test_appends_keep_the_binding_and_a_new_first_batch_is_stamped(tmp_path):
    (tmp_path / "d").mkdir()
    path = _two_batches(tmp_path / "d" / "x.arrow")
    with arrowmm.open_file(path) as reader:
        first_id = json.loads(reader.metadata[STATISTICS_KEY])["id"]
    with arrowmm.append_file(path) as appender:
        appender.write({"x": [1000, 2000]})
    with arrowmm.open_file(path) as reader:
        doc = json.loads(reader.metadata[STATISTICS_KEY])
        assert doc["id"] == first_id and len(doc["batches"]) == 3
        assert reader.batch_metadata(0) == {STAMP_KEY: first_id}
        assert not reader.batch_metadata(2)
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 500)]).column("x").to_pylist() == [1000, 2000]
    # an empty file with statistics: its first appended batch is the one stamped
    empty = tmp_path / "e.arrow"
    with arrowmm.new_file(empty, arrowmm.schema([("x", arrowmm.int64())]), statistics=True):
        pass
    with arrowmm.append_file(empty) as appender:
        appender.write({"x": [7]})
    with arrowmm.open_file(empty) as reader:
        doc = json.loads(reader.metadata[STATISTICS_KEY])
        assert reader.batch_metadata(0) == {STAMP_KEY: doc["id"]}


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_document_is_not_trusted(tmp_path, version):
    # (an arrowmm before the binding wrote version 1: nothing says it describes these values;
    # version 2 was signed and stamped, but its entries are not bound to their Blocks)
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "old.arrow"
    doc = {"version": version, "id": "ab" * 16, "columns": ["x"], "batches": [
        {"rows": 2, "columns": {"x": {"nulls": 0, "min": 0, "max": 1}}}]}
    text = json.dumps(doc)
    metadata = {STATISTICS_KEY: text}
    if version == 2:
        metadata[DIGEST_KEY] = hashlib.sha256(text.encode()).hexdigest()
    with pa_ipc.new_file(str(path), pa.schema([("x", pa.int64())]), metadata=metadata) as w:
        w.write_batch(pa.record_batch({"x": pa.array([5, 9])}),
                      custom_metadata={STAMP_KEY: doc["id"]})
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 2)]).column("x").to_pylist() == [5, 9]
    with arrowmm.append_file(path) as appender:
        appender.write({"x": [3]})  # (without statistics: the old document is not carried on)
    with arrowmm.open_file(path) as reader:
        assert STATISTICS_KEY not in (reader.metadata or {})


def _three_equal_batches(path):
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]),
                          statistics=True) as writer:
        for base in (1, 10, 100):
            writer.write({"x": [base, base + 1, base + 2]})
    return path


def _swap_footer_blocks(path, a: int, b: int) -> None:
    """Footer Blocks ``a`` and ``b`` exchanged (all 24 bytes each): the footer then lists the
    two messages the other way round, a file every reader reads in that order."""
    with arrowmm.open_file(path) as reader:
        rows = reader.footer.record_batches.tobytes()
    first, second = rows[24 * a:24 * a + 24], rows[24 * b:24 * b + 24]
    data = bytearray(path.read_bytes())
    at = data.rindex(rows)
    data[at + 24 * a:at + 24 * a + 24], data[at + 24 * b:at + 24 * b + 24] = second, first
    path.write_bytes(bytes(data))


def test_swapped_footer_blocks_do_not_lend_a_batch_another_ones_bounds(tmp_path):
    # (review of session 42: the filter pruned the 100.. message by the 10.. entry's max, 12,
    # and x >= 100 gave [] where the read holds 100, 101, 102)
    (tmp_path / "d").mkdir()
    path = _swap_footer_blocks_of(tmp_path / "d" / "a.arrow")
    with arrowmm.open_file(path) as reader:
        read = reader.read_all().column("x").to_pylist()
    assert read == pa_ipc.open_file(str(path)).read_all().column("x").to_pylist() == \
        [1, 2, 3, 100, 101, 102, 10, 11, 12]
    expected = pads.dataset(str(path), format="ipc").to_table(
        filter=pads.field("x") >= 100).column("x").to_pylist()
    assert expected == [100, 101, 102]
    for x in (100, 50, 11):  # (each a bound one entry or the other would decide wrongly)
        got = arrowmm.dataset(str(tmp_path / "d")).to_table(filter=[("x", ">=", x)])
        assert got.column("x").to_pylist() == [v for v in read if v >= x]
    from arrowmm.spark.files import describe_file  # (the Python Spark source's planning)
    assert [b.stats for b in describe_file(str(path)).batches] == [None] * 3
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "stats", "--json", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [c["from"] for c in json.loads(proc.stdout)["columns"]] == ["computed"]


def _int32_read_as_uint32(path, fmt: str):
    """A file or stream of an int32 column with statistics, one byte of whose schema (the Int
    table's is_signed, 1 -> 0) makes every reader (pyarrow too) read it as uint32."""
    opener = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with opener(path, arrowmm.schema([("x", arrowmm.int32())]), statistics=True) as writer:
        writer.write({"x": [-5, -1, 3]})
        writer.write({"x": [-100, 50, 7]})
    base = path.read_bytes()
    if fmt == "file":  # (the footer's schema: what a file is read by)
        end = len(base) - 10
        start = end - int.from_bytes(base[end:end + 4], "little")
    else:
        start, end = 0, base.index(b"\xff\xff\xff\xff", 8)  # (the schema message)
    for at in range(start, end):
        if base[at] != 1:
            continue
        path.write_bytes(base[:at] + b"\x00" + base[at + 1:])
        try:
            with arrowmm.open(str(path)) as reader:
                if reader.schema.names == ["x"] and str(reader.schema.field(0).type) == "uint32":
                    return path
        except arrowmm.ArrowError:
            pass
    raise AssertionError("no byte of the schema makes x a uint32")


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_a_damaged_schema_type_does_not_judge_its_values_by_the_old_bounds(tmp_path, fmt):
    # (review of session 43: x read as uint32 (-5 -> 4294967291) was pruned by the bounds
    # recorded for the int32 values, max 3: "x > 10" dropped 4294967291 and 4294967295)
    (tmp_path / "d").mkdir()
    path = _int32_read_as_uint32(tmp_path / "d" / f"a.{fmt}", fmt)
    with arrowmm.open(str(path)) as reader:
        read = reader.read_all().column("x").to_pylist()
    assert read[:2] == [4294967291, 4294967295]
    for op, x in ((">", 10), ("<", 10)):
        got = arrowmm.dataset(str(tmp_path / "d")).to_table(filter=[("x", op, x)])
        assert got.column("x").to_pylist() == [v for v in read if (v > x if op == ">" else v < x)]
    from arrowmm.spark.files import describe_file  # (the Python Spark source's planning)
    assert [b.stats for b in describe_file(str(path)).batches] == [None] * 2


def _swap_footer_blocks_of(path):
    _three_equal_batches(path)
    _swap_footer_blocks(path, 1, 2)
    return path


def test_appends_and_add_statistics_record_the_blocks_they_write(tmp_path):
    path = _three_equal_batches(tmp_path / "a.arrow")
    with arrowmm.append_file(path) as appender:
        appender.write({"x": [1000, 1001]})
    plain = tmp_path / "plain.arrow"
    with pa_ipc.new_file(str(plain), pa.schema([("x", pa.int64())])) as w:
        for base in (1, 10):
            w.write_batch(pa.record_batch({"x": pa.array([base, base + 1])}))
    added = arrowmm.add_statistics(str(plain), str(tmp_path / "added.arrow"))
    for p in (path, added):
        with arrowmm.open_file(p) as reader:
            doc = json.loads(reader.metadata[STATISTICS_KEY])
            assert [tuple(e["block"]) for e in doc["batches"]] == \
                reader.footer.record_batches.tolist()
    got = arrowmm.dataset(str(path)).to_table(filter=[("x", ">", 500)])
    assert got.column("x").to_pylist() == [1000, 1001]


def test_a_damaged_stream_batch_document_is_not_trusted(tmp_path):
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "x.arrows"
    with arrowmm.new_stream(path, arrowmm.schema([("x", arrowmm.int64())]),
                            statistics=True) as writer:
        writer.write({"x": [1, 2, 3, 4]})
        writer.write({"x": [100, 200, 300, 400]})
    data = bytearray(path.read_bytes())
    at = data.rfind(b'"max":400')
    data[at + 6] = ord("1")
    path.write_bytes(bytes(data))
    ds = arrowmm.dataset(str(tmp_path / "d"))
    assert ds.to_table(filter=[("x", ">", 150)]).column("x").to_pylist() == [200, 300, 400]


def test_metadata_v4_files_carry_no_statistics_pyarrow_would_refuse(tmp_path):
    # (review, session 42) Arrow C++ refuses a V4 record batch message with custom metadata
    # ("Only LZ4_FRAME and ZSTD compression allowed"): the stamp made V4 files unreadable
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with pytest.raises(arrowmm.ArrowInvalid, match="metadata_version='V4'"):
        arrowmm.new_file(tmp_path / "no.arrow", schema, statistics=True, metadata_version="V4")
    v4 = tmp_path / "v4.arrow"
    arrowmm.write_file(v4, {"x": [1, 2]}, metadata_version="V4")  # (statistics off by default)
    assert pa_ipc.open_file(str(v4)).read_all().column("x").to_pylist() == [1, 2]
    with pytest.raises(arrowmm.ArrowInvalid, match="metadata V4 file cannot carry statistics"):
        arrowmm.add_statistics(v4, tmp_path / "out.arrow")
    empty = tmp_path / "empty-v4.arrow"  # (an append to an empty V4 file adds none either)
    with arrowmm.new_file(empty, schema, metadata_version="V4"):
        pass
    with arrowmm.append_file(empty) as appender:
        appender.write({"x": [3]})
    assert pa_ipc.open_file(str(empty)).read_all().column("x").to_pylist() == [3]
    # convert --statistics writes it anew as V5, with them
    out = tmp_path / "v5.arrow"
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "convert", str(v4), str(out),
                           "--statistics"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with arrowmm.open_file(out) as reader:
        assert reader.version == 4 and STATISTICS_KEY in reader.metadata  # (4 is V5)
    assert pa_ipc.open_file(str(out)).read_all().column("x").to_pylist() == [1, 2]
