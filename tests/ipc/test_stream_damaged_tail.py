"""An IPC file read as a stream whose tail is damage (no trailer, no append in progress)
raises at its end-of-stream marker, from every source, as ``open_file`` does: a truncated
copy of an appended file read as a shorter stream, and bytes after a trailer were read by
some sources and refused by others (review 24: F3, F8).  ``recover=True`` ends quietly."""
import io
import re

import numpy as np
import pytest

import arrowmm
from tests.support.helpers import fed_pipe

SCHEMA = arrowmm.schema([("t", arrowmm.int64())])
EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _appended(path) -> bytes:
    """Generations [0, 1, 2], [3, 4, 5], [6, 7]: 8 rows."""
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    for values in ([3, 4, 5], [6, 7]):
        with arrowmm.append_file(path) as w:
            w.write({"t": values})
    return path.read_bytes()


SOURCES = {"path": lambda p: str(p), "bytes": lambda p: p.read_bytes(),
           "BytesIO": lambda p: io.BytesIO(p.read_bytes()), "file object": lambda p: open(p, "rb"),
           "mmap=False": None, "pipe": lambda p: fed_pipe(p.read_bytes())}


def _stream(path, source, **options):
    if source == "mmap=False":
        return arrowmm.open_stream(path, mmap=False, **options)
    return arrowmm.open_stream(SOURCES[source](path), **options)


def _values(reader) -> list:
    with reader:
        return [x for b in reader for x in b.column("t").to_pylist()]


def _cuts(data: bytes) -> dict:
    eos = [m.start() for m in re.finditer(re.escape(EOS), data)]
    return {"in the second footer": eos[1] + 8 + 16, "after the second marker": eos[1] + 8}


@pytest.mark.parametrize("source", sorted(s for s in SOURCES if s != "pipe"))
@pytest.mark.parametrize("cut", ["in the second footer", "after the second marker"])
def test_truncated_copy_of_an_appended_file_raises(tmp_path, source, cut):
    data = _appended(tmp_path / "full.arrow")
    path = tmp_path / "cut.arrow"
    path.write_bytes(data[:_cuts(data)[cut]])
    with pytest.raises(arrowmm.ArrowInvalid, match="tail is damaged"):
        _values(_stream(path, source))
    reader = _stream(path, source, recover=True)
    assert _values(reader) == [0, 1, 2, 3, 4, 5]
    assert "tail is damaged" in reader.recovery_error


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_bytes_after_a_trailer_get_one_verdict(tmp_path, source):
    path = tmp_path / "t.arrow"
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    path.write_bytes(path.read_bytes() + b"garbage!" * 3)
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.open_file(path)
    with pytest.raises(arrowmm.ArrowInvalid, match="after its first footer|tail is damaged"):
        _values(_stream(path, source))


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_file_cut_in_its_footer_raises_from_every_source(tmp_path, source):
    """No source can tell a file cut in its only footer from a truncated appended one."""
    path = tmp_path / "t.arrow"
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    data = path.read_bytes()
    path.write_bytes(data[:data.rindex(EOS) + 8 + 5])
    with pytest.raises(arrowmm.ArrowInvalid, match="damaged"):
        _values(_stream(path, source))

