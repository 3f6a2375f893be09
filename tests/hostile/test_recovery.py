"""Damage is never data (issue 29): recovery by construction, through every path.

A file falls back to an earlier generation only where its append marker says an append
from exactly there is in progress (``arrowmm.ipc.read.trailer``); every other damaged tail is
``ArrowInvalid`` through the mapped, ``mmap=False`` and ranged readers and the CLI, and
``recover=True`` / ``repair`` salvage only when asked.  Readers opening while other
processes cut unfinished tails never die of SIGBUS.
"""
import io
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.cli.main import main
from arrowmm.format import encode_footer
from arrowmm.ipc import cut_unfinished_tail
from arrowmm.ipc.read import trailer
from arrowmm.ipc.core.files import footer_blocks
from tests.ipc.test_ranged import UnmappableFile

SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


def _generations(path, sizes=(3, 3)):
    """A file of one generation per size, x counting up from 0; the rows of each."""
    start = 0
    for k, n in enumerate(sizes):
        opener = arrowmm.new_file(path, SCHEMA) if k == 0 else arrowmm.append_file(path)
        with opener as w:
            w.write({"x": np.arange(start, start + n, dtype=np.int64)})
        start += n
    return list(range(start))


def _every_reader(path):
    """How each path reads ``path``: its x values, or the ArrowError it raised."""
    data = open(path, "rb").read()
    out = {}
    for name, open_ in (("mapped", lambda: arrowmm.open_file(path)),
                        ("mmap=False", lambda: arrowmm.open_file(path, mmap=False)),
                        ("ranged", lambda: arrowmm.open_file(UnmappableFile(data))),
                        ("buffer", lambda: arrowmm.open_file(data)),
                        ("dataset", lambda: _DatasetAsReader(path))):
        try:
            with open_() as r:
                table = r.read_all()
                for batch in table.to_batches():
                    batch.validate(full=True)
                out[name] = table.column("x").to_pylist()
        except arrowmm.ArrowError as exc:  # (a flipped type id: ArrowNotImplementedError)
            out[name] = exc
    return out


class _DatasetAsReader:
    """``arrowmm.dataset(path)`` in the shape ``_every_reader`` reads."""

    def __init__(self, path):
        self.dataset = arrowmm.dataset(path)

    def read_all(self):
        return self.dataset.to_table()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _last_footer(data: bytes):
    end = len(data)
    footer_len = int.from_bytes(data[end - 10:end - 6], "little")
    return end - 10 - footer_len, end - 10


def test_a_flipped_byte_in_the_last_footer_never_reads_as_the_older_generation(tmp_path):
    """Every byte of an appended file's last footer flipped in turn: each reader gives an
    error or the whole committed content, never the first generation's 3 rows (the backward
    search opened those)."""
    path = str(tmp_path / "a.arrow")
    rows = _generations(path)
    data = open(path, "rb").read()
    start, stop = _last_footer(data)
    damaged = str(tmp_path / "d.arrow")
    errors = 0
    for pos in range(start, stop + 4):
        flipped = bytearray(data)
        flipped[pos] ^= 0xFF
        open(damaged, "wb").write(flipped)
        for name, got in _every_reader(damaged).items():
            if isinstance(got, Exception):
                errors += 1
            else:
                assert got == rows, (pos, name, got)
    assert errors  # (the flips that break the footer's parse are refused, not worked around)


def test_a_file_missing_its_last_bytes_is_refused(tmp_path):
    """A truncated copy of an appended file (its last 3 bytes missing) and of a file never
    appended to: ArrowInvalid from every reader and from validate, never earlier content."""
    for sizes in ((3, 3), (3,)):
        path = str(tmp_path / f"f{len(sizes)}.arrow")
        _generations(path, sizes)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 3)
        for name, got in _every_reader(path).items():
            assert isinstance(got, arrowmm.ArrowInvalid), (name, got)
            assert "does not end with the Arrow file magic" in str(got)
        assert main(["validate", path]) == 1


#: The schema of the forged-trailer files: one binary column, whose values can hold anything.
_FORGED_SCHEMA = arrowmm.schema([("b", arrowmm.binary())])


def _forged_trailer(path) -> bytes:
    """Write a one-batch file of 3 rows to ``path`` and return a trailer (footer, its length,
    magic) that lists that batch three times: 9 rows, if anything ever read it as data."""
    with arrowmm.new_file(path, _FORGED_SCHEMA) as w:
        w.write({"b": [b"a", b"b", b"c"]})
    with arrowmm.open_file(path) as r:
        block = [tuple(int(v) for v in r._blocks[0].tolist())]
    footer = encode_footer(_FORGED_SCHEMA, footer_blocks([]), footer_blocks(block * 3), None, 4, ())
    return footer + len(footer).to_bytes(4, "little") + b"ARROW1"


def test_a_forged_trailer_inside_a_value_is_never_read(tmp_path):
    """A binary value holding a footer that lists batch 0 three times, the file cut inside
    that value after it: the reader refuses the file (it searched for that trailer and read
    9 rows)."""
    schema = _FORGED_SCHEMA
    path = str(tmp_path / "forged.arrow")
    forged = _forged_trailer(path)
    with arrowmm.new_file(path, schema) as w:
        w.write({"b": [b"a", b"b", b"c"]})
        w.write({"b": [b"x" * 5, forged + b"y" * 100]})
    data = open(path, "rb").read()
    cut = data.index(forged) + len(forged) + 50
    open(path, "wb").write(data[:cut])
    for name, got in _every_reader(path).items():
        assert isinstance(got, arrowmm.ArrowInvalid), (name, got)
        assert "no append marker" in str(got)
    assert main(["validate", path]) == 1


def _killed_before_the_trailer(path):
    """An append that wrote its batches, end-of-stream and footer, and was killed before its
    trailer: what ``append_file`` leaves there (the marker still in progress)."""
    data = bytearray(open(path, "rb").read())
    del data[-10:]
    at = data.rindex(trailer.MARKER_TAG)
    data[at + trailer.STATE_OFFSET] = trailer.IN_PROGRESS
    open(path, "wb").write(data)


def test_repair_after_a_killed_append_keeps_the_committed_content(tmp_path, capsys):
    """repair, cut_unfinished_tail, append_file and every reader agree on the committed
    content; the torn append's complete batches come back only when asked for."""
    path = str(tmp_path / "k.arrow")
    _generations(path, (1000, 5000))
    _killed_before_the_trailer(path)
    committed = list(range(1000))
    for name, got in _every_reader(path).items():
        assert got == committed, name
    assert main(["validate", path]) == 1
    assert "UNFINISHED" in capsys.readouterr().err
    out = str(tmp_path / "r.arrow")
    report = arrowmm.repair(path, out)
    assert report.rows == 1000 and not report.complete and "interrupted" in report.reason
    assert pa_ipc.open_file(out).read_all().column("x").to_pylist() == committed
    report = arrowmm.repair(path, out, unfinished=True)
    assert report.rows == 6000
    assert main(["repair", path, out, "--unfinished"]) == 0
    assert pa_ipc.open_file(out).read_all().num_rows == 6000
    with arrowmm.open_file(path, recover=True) as r:  # (recover changes nothing here: the
        assert r.read_all().num_rows == 1000         # file says what was committed)
    assert cut_unfinished_tail(path) > 0
    assert pa_ipc.open_file(path).read_all().column("x").to_pylist() == committed
    assert main(["validate", path]) == 0


_READER = textwrap.dedent("""
    import os, sys, arrowmm
    path, stop = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    opened = 0
    while not os.path.exists(stop) or opened < 20:
        with arrowmm.open_file(path) as r:
            assert r.read_all().column("x").to_pylist() == list(range(6)), "wrong rows"
        opened += 1
    print(opened)
""")


def test_readers_survive_tails_cut_under_them(tmp_path):
    """Reader processes open the file in a loop while this process leaves large unfinished
    tails (the kind an append killed mid-write leaves) and cuts them again: no reader dies of
    SIGBUS (each read the tail through its mapping while it searched) and each reads the
    committed 6 rows every time."""
    path = str(tmp_path / "c.arrow")
    stop = str(tmp_path / "stop")
    _generations(path)
    data = open(path, "rb").read()
    start, _ = _last_footer(data)
    marker = trailer.append_marker(len(data), trailer.footer_checksum(data[start:]))
    tail = (b"\x00" * (trailer.aligned(len(data)) - len(data)) + marker
            + b"\xff\xff\xff\xff\x00\x01\x00\x00" + b"\x07" * (16 << 20))
    readers = [subprocess.Popen([sys.executable, "-c", _READER, path, stop],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for _ in range(4)]
    for p in readers:  # (cuts begin once every reader is importing no more)
        assert p.stdout.readline().strip() == b"ready", p.stderr.read().decode()[-2000:]
    for _ in range(200):
        with open(path, "ab") as f:
            f.write(tail)
        assert cut_unfinished_tail(path) == len(tail)
    open(stop, "w").close()
    for p in readers:
        code = p.wait(timeout=300)
        err = p.stderr.read().decode()[-2000:]
        assert code == 0, (code, "SIGBUS is", -signal.SIGBUS, err)
        assert int(p.stdout.read()) >= 20
    assert pa_ipc.open_file(path).read_all().num_rows == 6


def test_truncation_sweep_gives_an_error_or_the_committed_content(tmp_path):
    """An appended file cut at every byte, and the same file with its last append left
    unfinished cut at every byte: every reader gives ArrowInvalid or exactly the content
    committed at that length (a cut exactly at a generation's end is that complete file),
    never other rows."""
    path = str(tmp_path / "s.arrow")
    rows = _generations(path, (3, 2, 4))
    data = open(path, "rb").read()
    generation_ends = {int.from_bytes(data[at + 8:at + 16], "little"): n
                       for at, n in ((data.index(trailer.MARKER_TAG), 3),
                                     (data.rindex(trailer.MARKER_TAG), 5))}
    generation_ends[len(data)] = 9
    marker_at = data.rindex(trailer.MARKER_TAG)
    cut = str(tmp_path / "cut.arrow")
    _killed_before_the_trailer(path)
    torn = open(path, "rb").read()
    for source, unfinished in ((data, False), (torn, True)):
        for size in range(len(source), 8, -1):
            open(cut, "wb").write(source[:size])
            n = generation_ends.get(size)
            if unfinished and size >= marker_at + trailer.MARKER_SIZE:
                n = 5
            for name, got in _every_reader(cut).items():
                if n is None:
                    assert isinstance(got, arrowmm.ArrowInvalid), (size, name, got)
                else:
                    assert got == rows[:n], (size, name, got)


def test_a_flipped_byte_in_any_message_header_never_reads_as_other_values(tmp_path):
    """Every byte of every dictionary and record batch message header flipped in turn: the
    Python loader, the C export walk (pyarrow.table(reader)) and the mmap=False reader give an
    error or the file's values, never other values (a buffer offset moved onto other bytes of
    the body read them as its values: a body holds its buffers end to end, in order)."""
    path = str(tmp_path / "h.arrow")
    table = pa.table({"x": pa.array([0, 1, None, 3, 4], pa.int64()),
                      "s": pa.array(["a", "bb", None, "dddd", "e"]),
                      "d": pa.array(["p", "q", "p", None, "q"]).dictionary_encode()})
    with pa_ipc.new_file(path, table.schema) as w:
        w.write_table(table)
        w.write_table(table.slice(1, 3))
    want = pa_ipc.open_file(path).read_all().to_pydict()
    data = open(path, "rb").read()
    with arrowmm.open_file(path) as r:
        blocks = [tuple(int(v) for v in b) for b in np.concatenate(
            [r._dict_blocks.reshape(-1, 3), r._blocks.reshape(-1, 3)]).tolist()]
    flipped_path = str(tmp_path / "f.arrow")
    outcomes = {"error": 0, "same": 0}
    for offset, meta_len, _ in blocks:
        for pos in range(offset, offset + (meta_len & 0xFFFFFFFF)):
            flipped = bytearray(data)
            flipped[pos] ^= 0xFF
            open(flipped_path, "wb").write(flipped)
            for how in ("loader", "c export", "mmap=False"):
                try:
                    with arrowmm.open_file(flipped_path, mmap=how != "mmap=False") as r:
                        if how == "c export":
                            got = pa.table(r).to_pydict()
                        else:
                            t = r.read_all()
                            for batch in t.to_batches():
                                batch.validate()
                            got = t.to_pydict()
                except (arrowmm.ArrowError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    outcomes["error"] += 1
                    continue
                assert got == want, (pos - offset, how, got)
                outcomes["same"] += 1
    assert outcomes["error"] and outcomes["same"]


def _with_state(path, state, which=-1):
    """Set the state byte of the file's ``which``-th append marker (a crash between an append's
    trailer and its state byte leaves a committed append marked in progress)."""
    data = bytearray(open(path, "rb").read())
    at, found = -1, []
    while True:
        at = data.find(trailer.MARKER_TAG, at + 1)
        if at < 0:
            break
        found.append(at)
    data[found[which] + trailer.STATE_OFFSET] = state
    open(path, "wb").write(data)


def test_an_append_committed_without_its_state_byte_stays_committed(tmp_path, capsys):
    """An append killed between its trailer and its state byte, then a later append torn: the
    stream walk and repair keep the first append's rows as every file reader does (they
    stopped before it and repair dropped it, in place when run as validate advised)."""
    path = str(tmp_path / "u.arrow")
    rows = _generations(path, (3, 3))
    _with_state(path, trailer.IN_PROGRESS)
    with arrowmm.append_file(path) as w:
        w.write({"x": np.arange(6, 9, dtype=np.int64)})
    _killed_before_the_trailer(path)
    for name, got in _every_reader(path).items():
        assert got == rows, name
    with arrowmm.open_stream(path) as r:
        assert [v for b in r for v in b.column("x").to_pylist()] == rows
    assert main(["validate", path]) == 1 and "6 rows" in capsys.readouterr().err
    report = arrowmm.repair(path, path)
    assert report.rows == 6 and pa_ipc.open_file(path).read_all().column("x").to_pylist() == rows


def test_a_torn_append_without_a_marker_is_refused_by_the_stream_walk_too(tmp_path):
    """A file appended to by arrowmm before append markers (zero padding), torn before its
    trailer: reading it as a stream raises, as opening it does (the stream read the torn
    append's batches and ended quietly); repair, asked, salvages every complete batch."""
    path = str(tmp_path / "old.arrow")
    _generations(path, (3,))
    sink = pa.BufferOutputStream()
    batch = pa.record_batch({"x": pa.array([3, 4, 5], pa.int64())})
    with pa_ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    stream = sink.getvalue().to_pybytes()
    schema_len = len(pa_ipc.read_schema(pa.py_buffer(stream)).serialize())
    size = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"\x00" * (trailer.aligned(size) - size) + stream[schema_len:-8])
    with pytest.raises(arrowmm.ArrowInvalid, match="no append marker"):
        arrowmm.open_file(path)
    with pytest.raises(arrowmm.ArrowInvalid, match="without an append marker"):
        list(arrowmm.open_stream(path))
    assert arrowmm.repair(path, str(tmp_path / "r.arrow")).rows == 6


def test_an_open_that_meets_a_file_changing_under_it_opens_again(tmp_path):
    """A mapped reader whose mapping was taken mid-append, the append committing before it
    reads the marker; an mmap=False reader whose file is cut before it reads the tail: both
    open the file as it is now (they raised 'says its append was committed' / 'truncated')."""
    path = str(tmp_path / "c.arrow")
    rows = _generations(path, (3, 3))
    complete = open(path, "rb").read()
    _killed_before_the_trailer(path)
    torn = open(path, "rb").read()
    region = arrowmm.ipc.read.file_mapping.map_file(path)  # (mapped mid-append)
    with open(path, "r+b") as f:  # the append completes: its trailer, then its state byte
        f.write(complete)
    with arrowmm.FileReader(region) as r:
        assert r.read_all().column("x").to_pylist() == rows and r.unfinished_bytes == 0
    from arrowmm.ipc.read.unmapped import PreadFile
    open(path, "wb").write(torn)
    source = PreadFile(path)  # (opened with the unfinished tail)
    cut_unfinished_tail(path)
    with arrowmm.FileReader(source) as r:
        assert r.read_all().column("x").to_pylist() == rows[:3]


def test_a_marker_forged_inside_a_committed_value_is_not_a_committed_end(tmp_path):
    """A binary value holding a footer that lists batch 0 three times, its trailer and an
    in-progress append marker naming it, in a file never appended to; a copy missing its last
    3 bytes: every reader refuses it (it read as the forged footer's 9 rows)."""
    schema = _FORGED_SCHEMA
    path = str(tmp_path / "forged.arrow")
    tail = _forged_trailer(path)
    # where the forged trailer will end once written as a value: found by writing it once
    with arrowmm.new_file(path, schema) as w:
        w.write({"b": [b"a", b"b", b"c"]})
        w.write({"b": [tail + b"\x00" * 64, b"tail" * 50]})
    data = open(path, "rb").read()
    end = data.index(tail) + len(tail)
    marker = trailer.append_marker(end, trailer.footer_checksum(tail))
    pad = b"\x00" * (trailer.aligned(end) - end)
    with arrowmm.new_file(path, schema) as w:
        w.write({"b": [b"a", b"b", b"c"]})
        w.write({"b": [tail + pad + marker + b"\x00" * (64 - len(pad) - 32), b"tail" * 50]})
    data = open(path, "rb").read()
    assert data.index(tail) + len(tail) == end  # (the forged marker names the forged trailer)
    open(path, "wb").write(data[:-3])
    for name, got in _every_reader(path).items():
        assert isinstance(got, arrowmm.ArrowInvalid), (name, got)


def test_recover_of_a_source_it_cannot_salvage_says_what_can(tmp_path):
    """recover=True salvages a mapping or a buffer; asked of an unmapped path or a remote
    object, its hint must fit both (it said 'open the path with mmap=True' to a URL too)."""
    fsspec = pytest.importorskip("fsspec", reason="fsspec not installed")
    path = tmp_path / "cut.arrow"
    arrowmm.write_file(str(path), {"x": np.arange(1000)})
    data = path.read_bytes()[:-40]
    path.write_bytes(data)
    memory = fsspec.filesystem("memory")
    memory.pipe("/recover-hint/cut.arrow", data)
    for source, kwargs in ((str(path), {"mmap": False}),
                           ("memory://recover-hint/cut.arrow", {})):
        with pytest.raises(arrowmm.ArrowInvalid) as info:
            arrowmm.open_file(source, recover=True, **kwargs)
        message = str(info.value)
        assert "recover=True salvages a mapped file or a buffer" in message, message
        assert "open a local path with mmap=True" in message and "read into memory" in message
    assert arrowmm.open_file(data, recover=True).read_all().num_rows == 1000
    memory.rm("/recover-hint", recursive=True)
