"""arrowmm.repair: damaged files and streams become valid IPC files that pyarrow reads,
holding exactly the complete batches before the damage, their message bytes copied verbatim."""
import io
import os
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import arrowmm
import arrowmm.ipc.write.repair  # noqa: F401  (the module, for its doctest; arrowmm.repair is the function)
from arrowmm._core._region import Region
from arrowmm.ipc.core.framing import read_message_at
from arrowmm.format import MessageHeader


def _table():
    names = pa.array(["red", "green", "blue", "green", "red"] * 4).dictionary_encode()
    return pa.table({"id": pa.array(range(20), pa.int64()),
                     "s": [f"row {i}" if i % 3 else None for i in range(20)],
                     "colour": names})


def _pyarrow_file(compression=None) -> bytes:
    table = _table()
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(sink, table.schema, options=options) as w:
        for b in table.to_batches(max_chunksize=6):  # 4 batches sharing one dictionary
            w.write_batch(b)
    return sink.getvalue()


def _messages(data: bytes, start: int):
    """(offset, end, header type) of each message of the stream at ``start`` of ``data``."""
    region = Region(data)
    out, pos, index = [], start, 0
    while True:
        msg = read_message_at(region, pos, index)
        if msg is None:
            return out, pos
        end = msg.body.offset + msg.body.size
        out.append((pos, end, msg.record.header_type))
        pos, index = end, index + 1


def _read(path):
    with pa.ipc.open_file(path) as r:
        return [r.get_batch(i) for i in range(r.num_record_batches)], r.schema


def _listing(folder):
    return sorted(os.listdir(folder))


def test_docstring_example():
    import doctest
    result = doctest.testmod(sys.modules["arrowmm.ipc.write.repair"])
    assert result.attempted > 0 and result.failed == 0


# -- (1) a writer killed mid-way -------------------------------------------------------------

_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    import pyarrow as pa
    import arrowmm
    path, n = sys.argv[1], int(sys.argv[2])
    colours = pa.array(["red", "green", "blue"]).dictionary_encode()
    def batch(i):
        return pa.record_batch({"id": pa.array(range(i * 100, i * 100 + 100), pa.int64()),
                                "s": [f"b{i} r{j}" for j in range(100)],
                                "colour": pa.DictionaryArray.from_arrays(
                                    pa.array([j % 3 for j in range(100)], pa.int32()),
                                    colours.dictionary)})
    w = arrowmm.new_file(path, batch(0).schema, compression=sys.argv[3] or None)
    for i in range(n):
        w.write(batch(i))
    print("written", flush=True)
    time.sleep(600)
""")


@pytest.mark.parametrize("compression", ["", "lz4"])
def test_killed_writer_temporary_repairs_to_the_batches_written(tmp_path, compression):
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    target = data_dir / "out.arrow"
    proc = subprocess.Popen([sys.executable, str(script), str(target), "5", compression],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
    assert not target.exists()  # the writer never got to rename
    (tmp,) = [p for p in data_dir.iterdir() if p.name.endswith(".arrowmm-tmp")]
    with pytest.raises(pa.ArrowInvalid):
        pa.ipc.open_file(tmp)  # what users hit: no footer

    report = arrowmm.repair(tmp, target)
    assert (report.batches, report.rows, report.source_format) == (5, 500, "file")
    assert report.dropped_bytes == 0 and "without an end-of-stream marker" in report.reason
    batches, _ = _read(target)
    assert len(batches) == 5
    for i, b in enumerate(batches):
        assert b.column("id").to_pylist() == list(range(i * 100, i * 100 + 100))
        assert b.column("s").to_pylist() == [f"b{i} r{j}" for j in range(100)]
        assert b.column("colour").to_pylist() == [["red", "green", "blue"][j % 3] for j in range(100)]
    assert _listing(data_dir) == sorted([tmp.name, "out.arrow"])


# -- (2) every truncation point -----------------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "lz4"])
def test_every_truncation_point_repairs_to_the_complete_batches(tmp_path, compression):
    data = _pyarrow_file(compression)
    expected = [pa.ipc.open_file(pa.BufferReader(data)).get_batch(i) for i in range(4)]
    messages, eos_at = _messages(data, 8)
    eos_end = eos_at + 8
    schema_end = messages[0][1]
    dst = tmp_path / "out.arrow"
    for cut in range(len(data) + 1):
        src = data[:cut]
        if cut < schema_end:
            with pytest.raises(arrowmm.ArrowInvalid, match="schema message is unreadable"):
                arrowmm.repair(src, dst)
            assert not dst.exists()
            continue
        report = arrowmm.repair(src, dst)
        kept = [m for m in messages if m[1] <= cut]
        n = sum(1 for m in kept if m[2] == MessageHeader.RecordBatch)
        kept_end = kept[-1][1]
        assert report.batches == n, cut
        assert report.rows == sum(b.num_rows for b in expected[:n]), cut
        if cut < len(data):  # the damaged tail: a cut message, or the cut footer after the EOS
            assert report.dropped_bytes == cut - (kept_end if cut < eos_end else eos_end), cut
        else:
            assert report.dropped_bytes == 0
        assert (report.reason is None) == (cut == len(data)), cut
        batches, schema = _read(dst)
        assert schema.equals(expected[0].schema), cut
        assert len(batches) == n, cut
        for got, want in zip(batches, expected):
            assert got.equals(want), cut
    assert _listing(tmp_path) == ["out.arrow"]


def test_cut_inside_the_schema_cli_exits_1(tmp_path):
    data = _pyarrow_file()
    src = tmp_path / "cut.arrow"
    src.write_bytes(data[:40])
    out = _run("repair", str(src), str(tmp_path / "out.arrow"))
    assert out.returncode == 1
    assert "cannot repair" in out.stderr and "schema" in out.stderr
    assert _listing(tmp_path) == ["cut.arrow"]


# -- (3) streams ------------------------------------------------------------------------------

def _delta_stream() -> bytes:
    """A stream whose dictionary grows by deltas (pyarrow's emit_dictionary_deltas)."""
    schema = pa.schema([("k", pa.dictionary(pa.int32(), pa.string())), ("v", pa.float64())])
    sink = io.BytesIO()
    options = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    with pa.ipc.new_stream(sink, schema, options=options) as w:
        for words in (["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d", "e"]):
            k = pa.DictionaryArray.from_arrays(pa.array(range(len(words)), pa.int32()), words)
            w.write_batch(pa.record_batch([k, pa.array([1.5] * len(words))], schema=schema))
    return sink.getvalue()


@pytest.mark.parametrize("eos", [True, False])
def test_stream_repairs_to_a_file_with_deltas(tmp_path, eos):
    data = _delta_stream()
    kinds = [m[2] for m in _messages(data, 0)[0]]
    assert kinds.count(MessageHeader.DictionaryBatch) == 3  # the original and two deltas
    if not eos:
        assert data.endswith(b"\xff\xff\xff\xff\x00\x00\x00\x00")
        data = data[:-8]
    src = tmp_path / "in.arrows"
    src.write_bytes(data)
    report = arrowmm.repair(src, tmp_path / "out.arrow")
    assert (report.batches, report.rows, report.source_format) == (3, 10, "stream")
    assert report.dropped_bytes == 0
    assert (report.reason is None) == eos
    # a file's reader applies every delta before the first batch: same values, longer dictionaries
    expected = pa.ipc.open_stream(data).read_all().to_pylist()
    assert pa.ipc.open_file(tmp_path / "out.arrow").read_all().to_pylist() == expected


def test_truncated_stream_keeps_complete_batches(tmp_path):
    data = _delta_stream()
    messages, _ = _messages(data, 0)
    last = messages[-1]
    cut = last[0] + (last[1] - last[0]) // 2  # inside the last record batch
    report = arrowmm.repair(data[:cut], tmp_path / "out.arrow")
    assert (report.batches, report.dropped_bytes) == (2, cut - last[0])
    assert f"byte {last[0]}" in report.reason
    got = pa.ipc.open_file(tmp_path / "out.arrow").read_all()
    assert got.column("k").to_pylist() == ["a", "b", "a", "b", "c"]


# -- (4) a complete file -------------------------------------------------------------------------

def test_complete_file_repairs_to_an_equivalent_file(tmp_path):
    path = tmp_path / "in.arrow"
    table = _table()
    with arrowmm.new_file(path, table.schema, statistics=True) as w:
        for b in table.to_batches(max_chunksize=7):
            w.write(b)
    report = arrowmm.repair(path, tmp_path / "out.arrow")
    assert report.reason is None and report.dropped_bytes == 0
    assert (report.batches, report.rows) == (3, 20)
    assert pa.ipc.open_file(tmp_path / "out.arrow").read_all().equals(table)
    # the footer of a complete file (its statistics) is kept; here it is even byte-identical
    assert (tmp_path / "out.arrow").read_bytes() == path.read_bytes()
    assert "complete" in str(report) and "kept 3 record batch(es)" in str(report)


def test_damaged_footer_is_rebuilt(tmp_path):
    data = bytearray(_pyarrow_file())
    data[-20:-10] = b"\xee" * 10  # inside the footer flatbuffer
    report = arrowmm.repair(bytes(data), tmp_path / "out.arrow")
    assert report.batches == 4 and report.reason is not None
    _, eos_at = _messages(bytes(data), 8)
    assert report.dropped_bytes == len(data) - (eos_at + 8)
    original = pa.ipc.open_file(pa.BufferReader(_pyarrow_file())).read_all()
    assert pa.ipc.open_file(tmp_path / "out.arrow").read_all().equals(original)


# -- (5) verbatim copies ----------------------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_message_bytes_are_copied_verbatim(tmp_path, compression):
    data = _pyarrow_file(compression)
    src = arrowmm.open_file(data)
    cut = data[:src.batch_extents()[-1][0] + 5]  # the last batch cut short
    out = tmp_path / "out.arrow"
    report = arrowmm.repair(cut, out)
    assert report.batches == 3
    written = out.read_bytes()
    dst = arrowmm.open_file(written)
    assert dst.batch_extents() == src.batch_extents()[:3]
    for off, length in dst.batch_extents():
        assert written[off:off + length] == data[off:off + length]
    # everything before the footer (magic, schema, dictionary, batches) is the source's bytes
    assert written[:src.batch_extents()[2][0] + src.batch_extents()[2][1]] == \
        data[:src.batch_extents()[2][0] + src.batch_extents()[2][1]]
    if compression:
        assert pa.ipc.open_file(out).get_batch(0).equals(pa.ipc.open_file(pa.BufferReader(data)).get_batch(0))


def test_stream_messages_shift_by_the_file_magic(tmp_path):
    data = _delta_stream()
    report = arrowmm.repair(data, tmp_path / "out.arrow")
    written = (tmp_path / "out.arrow").read_bytes()
    _, eos_at = _messages(data, 0)
    assert written[:8] == b"ARROW1\x00\x00" and written[8:8 + eos_at] == data[:eos_at]
    assert report.batches == 3


# -- (6) in place -----------------------------------------------------------------------------

def test_repair_in_place(tmp_path):
    data = _pyarrow_file("lz4")
    path = tmp_path / "data.arrow"
    path.write_bytes(data[:len(data) - 200])
    report = arrowmm.repair(path, path)
    assert report.batches == 4
    assert pa.ipc.open_file(path).read_all().equals(pa.ipc.open_file(pa.BufferReader(data)).read_all())
    assert _listing(tmp_path) == ["data.arrow"]
    again = arrowmm.repair(path, path)  # now complete
    assert again.reason is None and again.batches == 4


# -- (7) dictionary replacement ----------------------------------------------------------------

def test_replacement_dictionary_stops_the_salvage_before_it(tmp_path):
    schema = pa.schema([("k", pa.dictionary(pa.int32(), pa.string()))])
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, schema) as w:
        for words in (["a", "b"], ["x", "y"], ["x", "y"]):  # the second is a replacement
            k = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), words)
            w.write_batch(pa.record_batch([k], schema=schema))
    data = sink.getvalue()
    messages, _ = _messages(data, 0)
    replaced_at = [m for m in messages if m[2] == MessageHeader.DictionaryBatch][1][0]
    report = arrowmm.repair(data, tmp_path / "out.arrow")
    assert report.batches == 1 and report.rows == 2
    assert "replaced" in report.reason and f"byte {replaced_at}" in report.reason
    assert report.dropped_bytes == len(data) - replaced_at
    got = pa.ipc.open_file(tmp_path / "out.arrow").read_all()
    assert got.column("k").to_pylist() == ["a", "b"]


def test_a_stream_sending_an_outer_dictionary_before_its_inner_one_repairs_whole(tmp_path):
    """A dictionary holding a dictionary its stream defines later is checked without it (it
    stopped the salvage: "dictionary 1 is used before any dictionary batch defines it")."""
    inner = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", "b"]))
    outer = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 1], pa.int16()), pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), inner))
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, pa.schema([("o", outer.type)])) as w:
        w.write_batch(pa.record_batch([outer], names=["o"]))
    messages = [m.serialize().to_pybytes()
                for m in pa.ipc.MessageReader.open_stream(pa.BufferReader(sink.getvalue()))]
    # schema, outer, inner, batch, end of stream
    data = b"".join(messages[i] for i in (0, 2, 1, 3)) + b"\xff\xff\xff\xff\x00\x00\x00\x00"
    report = arrowmm.repair(data, tmp_path / "out.arrow")
    assert (report.batches, report.rows, report.reason) == (1, 3, None)
    got = pa.ipc.open_file(tmp_path / "out.arrow").read_all()
    assert got.column("o").to_pylist() == [["a"], ["b"], ["b"]]


# -- (8) validation ------------------------------------------------------------------------------

def test_validate_drops_a_batch_with_corrupt_offsets(tmp_path):
    path = tmp_path / "in.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("s", arrowmm.string())])) as w:
        w.write({"s": ["a", "bb"]})
        w.write({"s": ["a", "bb", "ccc"]})
        w.write({"s": ["dddd"]})
    data = bytearray(path.read_bytes())
    offsets = b"".join(int(x).to_bytes(4, "little") for x in (0, 1, 3, 6))
    i = data.index(offsets)
    data[i + 15] = 0x7F  # the last offset of batch 1 now points far past its data
    path.write_bytes(bytes(data))
    second = arrowmm.open_file(bytes(data)).batch_extents()[1][0]

    checked = arrowmm.repair(path, tmp_path / "checked.arrow")
    assert checked.batches == 1 and "offsets" in checked.reason
    assert checked.dropped_bytes == len(data) - second
    assert pa.ipc.open_file(tmp_path / "checked.arrow").read_all().column("s").to_pylist() == ["a", "bb"]

    unchecked = arrowmm.repair(path, tmp_path / "unchecked.arrow", validate=False)
    assert unchecked.batches == 3 and unchecked.reason is None
    assert pa.ipc.open_file(tmp_path / "unchecked.arrow").num_record_batches == 3


# -- (9) the command line ---------------------------------------------------------------------

def _run(*args):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True, text=True,
                          timeout=300)


def test_cli_repairs_and_reports(tmp_path):
    data = _pyarrow_file()
    src = tmp_path / "cut.arrow"
    messages, _ = _messages(data, 8)
    src.write_bytes(data[:messages[-1][0] + 3])  # cut just after the last batch's first bytes
    out = _run("repair", str(src), str(tmp_path / "fixed.arrow"))
    assert out.returncode == 0, out.stderr
    assert "kept 3 record batch(es), 18 row(s)" in out.stdout
    assert "dropped 3 byte(s)" in out.stdout and "reason:" in out.stdout
    assert pa.ipc.open_file(tmp_path / "fixed.arrow").num_record_batches == 3

    src.write_bytes(data[:messages[0][1]])  # the schema alone: salvaged, 0 batches
    out = _run("repair", str(src), str(tmp_path / "empty.arrow"))
    assert out.returncode == 0, out.stderr
    assert "kept 0 record batch(es)" in out.stdout
    assert pa.ipc.open_file(tmp_path / "empty.arrow").num_record_batches == 0

    out = _run("repair", str(tmp_path / "missing.arrow"), str(tmp_path / "x.arrow"))
    assert out.returncode == 1 and "cannot repair" in out.stderr
    out = _run("repair", str(src), str(tmp_path / "no-such-folder" / "x.arrow"))
    assert out.returncode == 1 and "cannot repair" in out.stderr
    assert _listing(tmp_path) == ["cut.arrow", "empty.arrow", "fixed.arrow"]


# -- (10) no temporary files left ------------------------------------------------------------------

def test_failed_write_leaves_no_temporary(tmp_path, monkeypatch):
    data = _pyarrow_file()
    dst = tmp_path / "out.arrow"
    dst.write_bytes(b"previous contents")

    def refuse(*args):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="simulated"):
        arrowmm.repair(data, dst)
    monkeypatch.undo()
    assert _listing(tmp_path) == ["out.arrow"]
    assert dst.read_bytes() == b"previous contents"  # untouched
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.repair(b"not arrow at all", dst)
    assert _listing(tmp_path) == ["out.arrow"] and dst.read_bytes() == b"previous contents"


# -- hostile bytes -------------------------------------------------------------------------------

def test_every_flipped_byte_raises_arrowinvalid_or_repairs_to_a_readable_file(tmp_path):
    data = _pyarrow_file()
    dst = tmp_path / "out.arrow"
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0xFF
        try:
            report = arrowmm.repair(bytes(bad), dst)
        except arrowmm.ArrowInvalid:
            continue
        with arrowmm.open_file(dst) as r:  # what was kept reads back and validates
            assert r.num_record_batches == report.batches, i
            assert sum(b.num_rows for b in r) == report.rows, i
            for b in r:
                b.validate()
    assert _listing(tmp_path) == ["out.arrow"]
