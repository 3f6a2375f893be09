"""An appended IPC file read as a stream, by every path: mapped, ``mmap=False``, a file object.

Two defects review 13 proved: the unmapped paths stopped quietly at the first generation's
end-of-stream marker (the appended rows missing, no error); a mapped stream reader opened
before an unfinished tail was cut (by the next append or ``cut_unfinished_tail``) raised
``FileChanged`` at a generation's end instead of reading the committed content.  A pipe,
which cannot be looked ahead in, now refuses an appended file instead of cutting it short.
"""
import os
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import arrowmm
from arrowmm.ipc import cut_unfinished_tail

SCHEMA = arrowmm.schema([("t", arrowmm.int64())])
PATHS = ["mapped", "mmap=False", "file object", "unbuffered file object"]
UNMAPPED = PATHS[1:]

# An appender killed (os._exit) after its batches and footer, before its trailer.
_TORN_APPEND = textwrap.dedent("""
    import os, sys, numpy as np, arrowmm
    real = os.fsync
    calls = [0]
    def fsync(fd):
        real(fd)
        calls[0] += 1
        if calls[0] == 2:      # the fsync before the trailer
            os._exit(9)
    os.fsync = fsync
    with arrowmm.append_file(sys.argv[1]) as w:
        w.write({"t": np.arange(100, 110)})
""")


def _appended(path, torn=False):
    """Generations [0, 1, 2], [3, 4, 5], [6], [7, 8] (and, ``torn``, an unfinished append)."""
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    for values in ([3, 4, 5], [6], [7, 8]):
        with arrowmm.append_file(path) as w:
            w.write({"t": values})
    if torn:
        subprocess.run([sys.executable, "-c", _TORN_APPEND, path], check=False, timeout=120)
        with arrowmm.open_file(path) as r:
            assert r.unfinished_bytes > 0


def _open(path, how, **options):
    if how == "mapped":
        return arrowmm.open_stream(path, **options)
    if how == "mmap=False":
        return arrowmm.open_stream(path, mmap=False, **options)
    return arrowmm.open_stream(open(path, "rb", buffering=0 if "unbuffered" in how else -1),
                               **options)


def _values(reader):
    with reader as r:
        return [v for b in r for v in b.column("t").to_pylist()]


@pytest.mark.parametrize("how", UNMAPPED)
@pytest.mark.parametrize("torn", [False, True], ids=["complete", "unfinished append"])
def test_unmapped_stream_paths_read_every_committed_generation(tmp_path, how, torn):
    """As the mapped reader does: past each old footer, not into the unfinished append."""
    path = str(tmp_path / "log.arrow")
    _appended(path, torn)
    assert _values(_open(path, how, require_eos=True)) == list(range(9))


@pytest.mark.parametrize("how", PATHS)
def test_a_stream_reader_survives_the_cut_of_an_unfinished_tail(tmp_path, how):
    """Opened before the cut (which removes only uncommitted bytes): the committed content."""
    path = str(tmp_path / "log.arrow")
    _appended(path, torn=True)
    reader = _open(path, how)
    assert cut_unfinished_tail(path) > 0
    assert _values(reader) == list(range(9))


def test_every_stream_path_agrees_on_every_truncation(tmp_path):
    """An appended file with an unfinished append cut at every 7th byte: each path gives the
    same rows and recovery, or each raises ArrowInvalid."""
    path = str(tmp_path / "log.arrow")
    _appended(path, torn=True)
    with open(path, "rb") as f:
        data = f.read()
    cut = str(tmp_path / "cut.arrow")

    def outcome(how, recover):
        try:
            with _open(cut, how, recover=recover) as r:
                return [v for b in r for v in b.column("t").to_pylist()], r.recovery_error is None
        except arrowmm.ArrowInvalid:
            return "ArrowInvalid"

    for n in range(8, len(data) + 1, 7):
        with open(cut, "wb") as f:
            f.write(data[:n])
        for recover in (False, True):
            seen = {how: outcome(how, recover) for how in PATHS}
            assert len({repr(v) for v in seen.values()}) == 1, (n, recover, seen)


@pytest.mark.parametrize("how", UNMAPPED)
def test_an_error_in_a_later_generation_read_unmapped_names_its_message_and_byte(tmp_path, how):
    """Messages read through a file object are named by their index in the stream and their
    offset in the file, in every generation, as the mapped reader names them."""
    path = str(tmp_path / "log.arrow")
    _appended(path)
    with arrowmm.open_file(path) as r:
        offset, meta_length, _ = r.footer.record_batches.tolist()[2]
    with open(path, "r+b") as f:  # the third batch's length field says 2**40 rows
        f.seek(offset)
        at = offset + f.read(meta_length).find(struct.pack("<q", 1))
        f.seek(at)
        f.write(struct.pack("<q", 1 << 40))
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"message 3 \(byte {offset}\)") as mapped:
        _values(_open(path, "mapped"))
    with pytest.raises(arrowmm.ArrowInvalid) as unmapped:
        _values(_open(path, how))
    assert str(unmapped.value) == str(mapped.value)


def _through_a_pipe(path, **options):
    """``open_stream`` of a pipe that a thread writes ``path``'s bytes into, read whole."""
    read_end, write_end = os.pipe()
    with open(path, "rb") as f:
        data = f.read()

    def feed():
        with os.fdopen(write_end, "wb") as w:
            w.write(data)

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        with arrowmm.open_stream(os.fdopen(read_end, "rb"), **options) as r:
            return [v for b in r for v in b.column("t").to_pylist()], r.recovery_error
    finally:
        feeder.join()


def test_an_appended_file_through_a_pipe_is_refused_not_cut_short(tmp_path):
    """A source that cannot seek cannot be looked ahead in to judge later generations: the
    reader says so at the first one's end instead of ending quietly without them."""
    plain, appended = str(tmp_path / "plain.arrow"), str(tmp_path / "log.arrow")
    with arrowmm.new_file(plain, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    _appended(appended)
    assert _through_a_pipe(plain, require_eos=True) == ([0, 1, 2], None)
    with pytest.raises(arrowmm.ArrowInvalid, match="more after its first footer .* cannot seek"):
        _through_a_pipe(appended)
    values, why = _through_a_pipe(appended, recover=True)
    assert values == [0, 1, 2] and "open the file by path" in why


# Opens a stream reader whose file loses its unfinished tail just after it is mapped (the cut
# of another process's next append), and reads it.
_CUT_AFTER_MAPPING = textwrap.dedent("""
    import sys, arrowmm
    from arrowmm.ipc.read import stream_reader
    mapped = stream_reader.region_of
    def region_of(source, description=None):
        region = mapped(source, description)
        arrowmm.ipc.cut_unfinished_tail(source)
        return region
    stream_reader.region_of = region_of
    with arrowmm.open_stream(sys.argv[1]) as r:
        print(sum(b.num_rows for b in r))
""")


def test_a_tail_cut_while_a_stream_reader_opens_is_not_read_through_the_mapping(tmp_path):
    """The open reads the tail by ``pread`` (a mapped page past the cut is SIGBUS) and maps
    the file again when it was cut."""
    path = str(tmp_path / "log.arrow")
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    subprocess.run([sys.executable, "-c", _TORN_APPEND.replace("100, 110", "0, 200_000"), path],
                   check=False, timeout=120)  # (an unfinished tail of many pages)
    done = subprocess.run([sys.executable, "-c", _CUT_AFTER_MAPPING, path], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "3"), done.stderr[-2000:]


@pytest.mark.parametrize("torn", [False, True], ids=["complete", "unfinished append"])
def test_num_rows_of_a_stream_counts_every_committed_generation(tmp_path, torn):
    path = str(tmp_path / "log.arrow")
    _appended(path, torn)
    with arrowmm.open_stream(path) as r:
        assert r.num_rows == 9 and r.count_rows() == 9


# Another process's append writing its marker where it straddles a page, again and again: the
# marker is seen half-written for a moment (a torn end) by a reader opening the file then, which
# must wait for the file to change rather than call its end damage.
_MARKER_WRITER = textwrap.dedent("""
    import fcntl, os, sys, time
    path, end, tail, seconds = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), float(sys.argv[4])
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # (the append lock, held by every appender while it writes)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        os.ftruncate(fd, end)
        time.sleep(0.0005)
        os.pwrite(fd, tail, end)  # (one write: padding and marker, across a page boundary)
        time.sleep(0.0005)
""")


_OPENERS = {"stream": arrowmm.open_stream,
            "stream, mmap=False": lambda p: arrowmm.open_stream(p, mmap=False),
            "file": arrowmm.open_file,
            "file, mmap=False": lambda p: arrowmm.open_file(p, mmap=False)}


@pytest.mark.parametrize("opener", list(_OPENERS))
def test_a_reader_opening_while_an_append_writes_its_marker_reads_the_committed_content(
        tmp_path, opener):
    from arrowmm.ipc.read.trailer import (IN_PROGRESS, TRAILER_SIZE, aligned, append_marker,
                                          footer_checksum)
    path = str(tmp_path / "marker.arrow")
    rows = 1
    while True:  # (a file whose marker, written after its trailer, crosses a page boundary)
        with arrowmm.new_file(path, SCHEMA) as w:
            w.write({"t": np.arange(rows)})
        end = os.path.getsize(path)
        if end % 4096 > 4096 - 20 and aligned(end) % 4096 > 4096 - 24:
            break
        rows += 1
    data = open(path, "rb").read()
    footer_length = struct.unpack_from("<i", data, end - TRAILER_SIZE)[0]
    tail = b"\0" * (aligned(end) - end) + append_marker(
        end, footer_checksum(data[end - TRAILER_SIZE - footer_length:end]), IN_PROGRESS)
    writer = subprocess.Popen([sys.executable, "-c", _MARKER_WRITER, path, str(end), tail.hex(),
                               "3"])
    failures, opens = [], 0
    try:
        while writer.poll() is None:
            try:
                with _OPENERS[opener](path) as reader:
                    got = sum(b.num_rows for b in reader)
                assert got == rows
            except arrowmm.ArrowInvalid as exc:  # (FileChanged is one too)
                failures.append(f"{type(exc).__name__}: {exc}")
            opens += 1
    finally:
        writer.wait()
    assert opens > 100 and not failures, f"{len(failures)} of {opens} opens: {failures[:1]}"


@pytest.mark.parametrize("how", ["path", "bytes", "pipe"])
@pytest.mark.parametrize("length", [6, 7, 12])
def test_an_ipc_file_cut_inside_its_magic_or_first_message_says_so_and_names_the_input(
        tmp_path, how, length):
    path = tmp_path / "cut.arrow"
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    data = path.read_bytes()[:length]
    path.write_bytes(data)
    if how == "pipe":
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        source, name = os.fdopen(r, "rb"), "BufferedReader"
    else:
        source, name = (str(path), str(path)) if how == "path" else (data, "buffer")
    with pytest.raises(arrowmm.ArrowInvalid) as err:
        arrowmm.open_stream(source)
    text = str(err.value)
    assert text.startswith(f"{name}: ")
    if length < 8:
        assert text == f"{name}: {length} bytes is too small for an Arrow IPC file"
    else:
        assert "message 0" in text and "truncated" in text


def test_only_an_end_like_a_marker_being_written_is_watched_before_it_is_called_damage(tmp_path):
    """Every cut of a file appended to once: ``marker_wait`` is the wait only where the cut
    falls inside the padding and marker after the first generation's trailer (what one write of
    them, seen half done, looks like); anywhere else a damaged end is called at once (a
    truncation sweep must not wait at every cut)."""
    from arrowmm.ipc.read.trailer import MARKER_SIZE, MARKER_WAIT, aligned, marker_wait
    path = tmp_path / "a.arrow"
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(5)})
    first_end = os.path.getsize(path)
    with arrowmm.append_file(path) as w:
        w.write({"t": np.arange(5, 9)})
    data = path.read_bytes()
    marker_end = aligned(first_end) + MARKER_SIZE
    assert data[aligned(first_end):aligned(first_end) + 8] == b"ARROWMM\x1e"
    watched = []
    for cut in range(1, len(data) + 1):
        wait = marker_wait(cut, lambda offset, length: data[offset:offset + length])
        assert wait in (0.0, MARKER_WAIT)
        if wait:
            watched.append(cut)
    assert watched == list(range(first_end + 1, marker_end))


@pytest.mark.parametrize("opener", list(_OPENERS))
def test_a_damaged_end_like_a_marker_is_not_waited_for_when_no_appender_holds_the_lock(
        tmp_path, opener, monkeypatch):
    """A file whose trailer is followed by zero padding (or the first bytes of a marker) and
    that no process appends to cannot be finishing a marker: it opens (or is refused) without
    the 50 ms watch (review 17: every open of such a file took 57 ms)."""
    import arrowmm.ipc.read.file_mapping as file_mapping
    path = tmp_path / "padded.arrow"
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    with open(path, "ab") as f:
        f.write(b"\0" * (8 - os.path.getsize(path) % 8 or 8))
    slept = []
    monkeypatch.setattr(file_mapping.time, "sleep", lambda s: slept.append(s))
    try:
        with _OPENERS[opener](str(path)) as reader:
            assert sum(b.num_rows for b in reader) == 3
    except arrowmm.ArrowInvalid as exc:
        assert "damage" in str(exc) or "magic" in str(exc)
    assert slept == []
