"""Hostile input: malformed, truncated and corrupted IPC bytes never get past arrowmm's errors.

CONTRACT.md ("Errors") and DESIGN.md ("Trust"): whatever the bytes, opening a file or stream
and touching everything in it (every batch, every column, ``to_pylist``, ``validate(full=True)``)
either works or raises ``ArrowInvalid`` / ``ArrowNotImplementedError`` naming where.  Never a
segfault, a hang, a runaway allocation, or another exception type.

The inputs start from valid files and streams written by pyarrow (``samples()``: primitives with
nulls, strings, nested list / struct / map, dictionaries, unions, run-end encoded, binary views;
uncompressed, LZ4 and ZSTD), then:

* **truncation** at every 8-byte boundary and a few odd positions, through ``open_file``,
  ``open_stream`` and ``open`` over a path, bytes and ``io.BytesIO``; files also lose part of
  their data section with the footer kept, and streams come through a pipe that ends early;
* **random byte mutations** (hypothesis, derandomized) anywhere or inside metadata, plus a
  batch of seeded mutations in a subprocess, which catches segfaults (return code -11) and hangs
  (timeout);
* **targeted corruptions** of each number the format trusts: footer length, footer Blocks,
  message length prefixes, ``bodyLength``, FieldNodes, Buffers, ``variadicBufferCounts``,
  offsets, UTF-8, union type ids, dictionary indices and ids, run ends, nesting depth, and
  compressed buffers declaring giant uncompressed lengths.

Fields are located with the generated FlatBuffers readers in ``arrowmm.format._fbs`` over the message
bytes (``Layout``), so each corruption hits exactly the number it names.

``open_and_touch`` is the one routine every case runs (``touch_reader`` / ``touch_batch`` /
``touch_array``); ``check`` runs it through each way of opening (``WAYS``) and fails the test
with the traceback of anything that is not success, ``ArrowInvalid`` or
``ArrowNotImplementedError``; ``names_a_location`` is the rule for messages (a location word or a
column name).  Every test runs under an address-space cap, so a runaway allocation fails as
MemoryError instead of exhausting the machine; cases that could hang run in a subprocess
(``run_isolated``) with a timeout.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import flatbuffers
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrowmm
from arrowmm import ArrowInvalid, ArrowNotImplementedError
from arrowmm.format._fbs.DictionaryBatch import DictionaryBatch as FbDictionaryBatch
from arrowmm.format._fbs.Footer import Footer as FbFooter
from arrowmm.format._fbs.Message import Message as FbMessage
from arrowmm.format._fbs.RecordBatch import RecordBatch as FbRecordBatch
from arrowmm.format._fbs.Schema import Schema as FbSchema

ALLOWED = (ArrowInvalid, ArrowNotImplementedError)
MAGIC = b"ARROW1"
CONTINUATION = b"\xff\xff\xff\xff"
EOS = CONTINUATION + b"\x00\x00\x00\x00"
HERE = Path(__file__).resolve().parent

#: Words one of which an error message must contain to say *where* (with the column names).
LOCATION_WORDS = ("message", "byte", "column", "buffer", "footer", "block", "dictionary",
                  "field", "schema", "stream", "offset", "index", "value[", "view[", "type_id[",
                  "run_end[", "node")

# The same "interesting numbers" for every targeted and random corruption.
I64_EVIL = (-1, -(2 ** 63), 2 ** 62, 2 ** 63 - 1, 2 ** 31, 2 ** 32 + 8)
I32_EVIL = (-1, -(2 ** 31), 2 ** 31 - 1, 2 ** 30, 0x10000)


# =========================================================================================
# The valid starting points
# =========================================================================================

def _batches() -> Dict[str, object]:
    pa = pytest.importorskip("pyarrow")
    return {
        "primitive": pa.record_batch({
            "i8": pa.array([1, None, 3, -4, 5, 6, None], pa.int8()),
            "i64": pa.array([1, 2, None, 4, 5, 6, 7], pa.int64()),
            "f64": pa.array([1.5, None, 3.5, 4.5, None, 0.0, -1.0]),
            "flag": pa.array([True, False, None, True, True, False, None]),
            "ts": pa.array([1, 2, 3, None, 5, 6, 7], pa.timestamp("us", tz="UTC")),
            "day": pa.array([1, 2, 3, None, 5, 6, 7], pa.date32()),
            "dec": pa.array([1, 2, 3, None, 5, 6, 7], pa.decimal128(10, 2)),
            "fsb": pa.array([b"ab", b"cd", None, b"ef", b"gh", b"ij", b"kl"], pa.binary(2)),
            "nul": pa.nulls(7),
        }),
        "string": pa.record_batch({
            "s": pa.array(["a", "bb", None, "dddd", "\u00e9\u00e9\u00e9", "", "xyz"]),
            "ls": pa.array(["x", None, "yy", "", "zzz", "w", "v"], pa.large_string()),
            "bin": pa.array([b"\x00", b"", None, b"abc", b"d", b"ee", b"f"]),
        }),
        "nested": pa.record_batch({
            "l": pa.array([[1, 2], None, [], [3], [4, None], [5, 6, 7], [8]], pa.list_(pa.int32())),
            "st": pa.array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}, {"a": 4, "b": "y"},
                            {"a": None, "b": "z"}, {"a": 6, "b": "w"}, {"a": 7, "b": "v"}]),
            "m": pa.array([[("k", 1)], None, [], [("a", 2), ("b", 3)], [("c", None)], [("d", 4)], []],
                          pa.map_(pa.string(), pa.int64())),
            "fsl": pa.array([[1, 2], [3, 4], None, [5, 6], [7, 8], [9, 10], [11, 12]],
                            pa.list_(pa.int16(), 2)),
            "ll": pa.array([[["a"]], [], None, [["b", None]], [[]], [["c", "d"]], [["e"]]],
                           pa.large_list(pa.list_(pa.string()))),
        }),
        "dictionary": pa.record_batch({
            "d": pa.array(["a", "b", None, "a", "c", "b", "a"]).dictionary_encode(),
            "d8": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1, 0, 2, 2], pa.int8()),
                                                 pa.array(["ten", "twenty", "thirty"])),
        }),
        "union": pa.record_batch({
            "su": pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1, 1, 0, 0], pa.int8()),
                                            [pa.array([1, 2, 3, 4, 5, 6, 7]),
                                             pa.array(["a", "b", "c", "d", "e", "f", "g"])]),
            "du": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1, 0, 0, 1], pa.int8()),
                                           pa.array([0, 0, 1, 1, 2, 3, 2], pa.int32()),
                                           [pa.array([1.0, 2.0, None, 4.0]), pa.array(["x", "y", "z"])]),
        }),
        "ree": pa.record_batch({
            "r": pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 5, 7], pa.int32()),
                                                   pa.array(["a", None, "c", "d"])),
        }),
        "view": pa.record_batch({
            "sv": pa.array(["short", None, "a much longer string than twelve", "", "ok",
                            "another long string value!", "x"], pa.string_view()),
            "bv": pa.array([b"x", b"this is a long binary value", None, b"", b"y",
                            b"z" * 20, b"w"], pa.binary_view()),
        }),
    }


@dataclass
class Sample:
    key: str
    file: bytes
    stream: bytes
    expected: list  # batch.to_pylist() per batch

    def data(self, fmt: str) -> bytes:
        return self.file if fmt == "file" else self.stream


@functools.lru_cache(maxsize=None)
def samples() -> Dict[str, Sample]:
    """``"<schema>"``, ``"<schema>-lz4"``, ``"<schema>-zstd"`` -> valid file and stream bytes.

    Two batches each (the second a slice), so blocks and messages come in plural.
    """
    pa = pytest.importorskip("pyarrow")
    ipc = pa.ipc
    out = {}
    for name, batch in _batches().items():
        for codec in (None, "lz4", "zstd"):
            key = name if codec is None else f"{name}-{codec}"
            parts = {}
            for fmt, new in (("file", ipc.new_file), ("stream", ipc.new_stream)):
                sink = io.BytesIO()
                with new(sink, batch.schema, options=ipc.IpcWriteOptions(compression=codec)) as w:
                    w.write_batch(batch)
                    w.write_batch(batch.slice(2, 4))
                parts[fmt] = sink.getvalue()
            out[key] = Sample(key, parts["file"], parts["stream"],
                              [batch.to_pylist(), batch.slice(2, 4).to_pylist()])
    return out


SAMPLE_KEYS = [f"{n}{c}" for n in ("primitive", "string", "nested", "dictionary", "union", "ree", "view")
               for c in ("", "-lz4", "-zstd")]
PLAIN_KEYS = [k for k in SAMPLE_KEYS if "-" not in k]


# =========================================================================================
# Where things are: message framing and FlatBuffers field positions
# =========================================================================================

@dataclass
class Msg:
    """One encapsulated message of a stream or file, with absolute byte positions."""

    index: int
    offset: int  # first byte of the length prefix
    meta_start: int
    meta_len: int
    header_type: int
    body_start: int
    body_len: int
    body_length_at: Optional[int] = None  # Message.bodyLength (absent when 0)
    length_at: Optional[int] = None  # RecordBatch.length
    dict_id_at: Optional[int] = None  # DictionaryBatch.id
    nodes_at: Optional[int] = None  # first FieldNode {length, null_count}
    n_nodes: int = 0
    buffers_at: Optional[int] = None  # first Buffer {offset, length}
    n_buffers: int = 0
    variadic_at: Optional[int] = None
    n_variadic: int = 0

    @property
    def end(self) -> int:
        return self.body_start + self.body_len

    @property
    def kind(self) -> str:
        return {1: "schema", 2: "dictionary", 3: "batch"}.get(self.header_type, "?")

    def node_at(self, i: int) -> int:
        assert 0 <= i < self.n_nodes
        return self.nodes_at + 16 * i

    def buffer_at(self, i: int) -> int:
        assert 0 <= i < self.n_buffers
        return self.buffers_at + 16 * i


def _slot(tab, slot: int) -> Optional[int]:
    """Absolute position (in ``tab.Bytes``) of scalar field ``slot`` of a table, or None if absent."""
    o = tab.Offset(4 + 2 * slot)
    return tab.Pos + o if o else None


def _vector(tab, slot: int) -> Tuple[Optional[int], int]:
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return None, 0
    return tab.Vector(o), tab.VectorLen(o)


def parse_msg(data: bytes, offset: int, index: int) -> Optional[Msg]:
    """The message at ``offset`` (None at EOS / the end); positions absolute in ``data``."""
    if offset + 8 > len(data):
        return None
    assert data[offset:offset + 4] == CONTINUATION
    meta_len = struct.unpack_from("<i", data, offset + 4)[0]
    if meta_len == 0:
        return None
    meta_start = offset + 8
    meta = data[meta_start:meta_start + meta_len]
    fb = FbMessage.GetRootAs(meta, 0)
    body_len = fb.BodyLength()
    m = Msg(index, offset, meta_start, meta_len, fb.HeaderType(), meta_start + meta_len, body_len)
    a = _slot(fb._tab, 3)
    m.body_length_at = None if a is None else meta_start + a
    if m.header_type in (2, 3):
        table = fb.Header()
        if m.header_type == 2:
            db = FbDictionaryBatch()
            db.Init(table.Bytes, table.Pos)
            a = _slot(db._tab, 0)
            m.dict_id_at = None if a is None else meta_start + a
            rb = db.Data()
        else:
            rb = FbRecordBatch()
            rb.Init(table.Bytes, table.Pos)
        tab = rb._tab
        a = _slot(tab, 0)
        m.length_at = None if a is None else meta_start + a
        for name, slot in (("nodes", 1), ("buffers", 2), ("variadic", 4)):
            start, n = _vector(tab, slot)
            setattr(m, f"{name}_at", None if start is None else meta_start + start)
            setattr(m, f"n_{name}", n)
    return m


@dataclass
class Layout:
    """Messages of a stream (or of a file's data section) and, for files, the footer."""

    data: bytes
    fmt: str
    messages: List[Msg]
    footer_start: int = -1
    footer_len_at: int = -1
    dict_blocks_at: Optional[int] = None
    n_dict_blocks: int = 0
    batch_blocks_at: Optional[int] = None
    n_batch_blocks: int = 0

    @classmethod
    def of(cls, data: bytes, fmt: str) -> "Layout":
        pos = 8 if fmt == "file" else 0
        msgs = []
        while True:
            m = parse_msg(data, pos, len(msgs))
            if m is None:
                break
            msgs.append(m)
            pos = m.end
        lay = cls(data, fmt, msgs)
        if fmt == "file":
            lay.footer_len_at = len(data) - 10
            flen = struct.unpack_from("<i", data, lay.footer_len_at)[0]
            lay.footer_start = lay.footer_len_at - flen
            footer = FbFooter.GetRootAs(data[lay.footer_start:lay.footer_len_at], 0)
            for name, slot in (("dict_blocks", 2), ("batch_blocks", 3)):
                start, n = _vector(footer._tab, slot)
                setattr(lay, f"{name}_at", None if start is None else lay.footer_start + start)
                setattr(lay, f"n_{name}", n)
        return lay

    def of_kind(self, kind: str) -> List[Msg]:
        return [m for m in self.messages if m.kind == kind]

    def block_at(self, which: str, i: int) -> int:
        """Position of Block ``i`` ({offset: i64, metaDataLength: i32, pad, bodyLength: i64})."""
        base = self.dict_blocks_at if which == "dictionary" else self.batch_blocks_at
        assert base is not None
        return base + 24 * i

    def metadata_spans(self) -> List[Tuple[int, int]]:
        spans = [(m.offset, m.meta_start + m.meta_len) for m in self.messages]
        if self.fmt == "file":
            spans.append((self.footer_start, len(self.data)))
        return spans

    @property
    def data_end(self) -> int:
        """End of the last message body (where EOS, padding or the footer begins)."""
        return max(m.end for m in self.messages)


@functools.lru_cache(maxsize=None)
def layout(key: str, fmt: str) -> Layout:
    return Layout.of(samples()[key].data(fmt), fmt)


def patch(data: bytes, *edits: Tuple[int, str, int]) -> bytes:
    """``data`` with each ``(position, struct format, value)`` packed in place."""
    out = bytearray(data)
    for pos, fmt, value in edits:
        struct.pack_into(fmt, out, pos, value)
    return bytes(out)


def column_buffers(key: str, msg: Msg) -> Dict[str, List[int]]:
    """Top-level column name -> indices of its buffers (and its children's) in ``msg``."""
    from arrowmm.ipc.read.loader import SchemaPlan
    schema = arrowmm.open_stream(samples()[key].stream).schema
    plan = SchemaPlan.build(schema)
    counts = _variadic_counts(key, msg)
    starts = [b + sum(counts[:v]) for b, v in zip(plan.buffer_starts, plan.view_starts)] + [msg.n_buffers]
    return {f.name: list(range(starts[k], starts[k + 1])) for k, f in enumerate(schema)}


def _variadic_counts(key: str, msg: Msg) -> List[int]:
    for fmt in ("stream", "file"):
        lay = layout(key, fmt)
        if msg in lay.messages:
            return [struct.unpack_from("<q", lay.data, msg.variadic_at + 8 * j)[0]
                    for j in range(msg.n_variadic)]
    raise AssertionError(f"message {msg} is not one of {key}'s")


def body_buffer(data: bytes, msg: Msg, i: int) -> Tuple[int, int]:
    """(absolute position, length) of buffer ``i`` of ``msg``'s body."""
    off, length = struct.unpack_from("<qq", data, msg.buffer_at(i))
    return msg.body_start + off, length


# =========================================================================================
# Open and touch everything
# =========================================================================================

class Escaped(AssertionError):
    """An exception other than ArrowInvalid / ArrowNotImplementedError left arrowmm."""


@dataclass
class Report:
    """The errors (allowed kinds) one open-and-touch run met, by step."""

    errors: List[Tuple[str, BaseException]] = field(default_factory=list)
    opened: bool = False
    batches: int = 0
    columns_ok: int = 0
    values: list = field(default_factory=list)  # batch.to_pylist() of each batch read whole

    def first(self, step_prefix: str = "") -> Optional[BaseException]:
        for step, exc in self.errors:
            if step.startswith(step_prefix):
                return exc
        return None

    def steps(self) -> List[str]:
        return [s for s, _ in self.errors]


MAX_BATCHES = 10_000


def _attempt(report: Report, step: str, fn: Callable):
    try:
        return True, fn()
    except ALLOWED as exc:
        report.errors.append((step, exc))
        return False, None


def touch_array(report: Report, col, where: str) -> None:
    _attempt(report, f"{where}.to_pylist", col.to_pylist)
    _attempt(report, f"{where}.to_pylist(int)", lambda: col.to_pylist(temporal="int"))
    _attempt(report, f"{where}.null_count", lambda: col.null_count)
    _attempt(report, f"{where}.validate", lambda: col.validate(full=True))
    _attempt(report, f"{where}.repr", lambda: repr(col))
    if len(col):
        _attempt(report, f"{where}[-1]", lambda: col[len(col) - 1])


def touch_batch(report: Report, batch, where: str) -> None:
    report.batches += 1
    _ = batch.num_rows, batch.num_columns, batch.schema
    for k in range(batch.num_columns):
        ok, col = _attempt(report, f"{where}.column({k})", lambda k=k: batch.column(k))
        if ok:
            report.columns_ok += 1
            touch_array(report, col, f"{where}.column({k})")
    ok, rows = _attempt(report, f"{where}.to_pylist", batch.to_pylist)
    if ok:
        report.values.append(rows)
    _attempt(report, f"{where}.validate", lambda: batch.validate(full=True))


def touch_reader(report: Report, reader) -> None:
    schema = reader.schema
    _ = str(schema), schema.names, len(schema), schema.metadata
    if isinstance(reader, arrowmm.FileReader):
        _ = reader.metadata
        for i in range(reader.num_record_batches):
            ok, batch = _attempt(report, f"get_batch({i})", lambda i=i: reader.get_batch(i))
            if ok:
                touch_batch(report, batch, f"batch {i}")
        return
    for i in range(MAX_BATCHES):
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except ALLOWED as exc:
            report.errors.append((f"read_next_batch {i}", exc))
            return
        touch_batch(report, batch, f"batch {i}")
    raise Escaped(f"a stream yielded more than {MAX_BATCHES} batches")


class _Source:
    """One input as bytes, as a path (written on first use) and as a fresh BytesIO."""

    counter = 0

    def __init__(self, data: bytes, workdir: Path):
        self.data = data
        self.workdir = workdir
        self._path = None

    @property
    def path(self) -> str:
        if self._path is None:
            _Source.counter += 1
            path = self.workdir / f"case{_Source.counter}.arrow"
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(self.data)
            os.replace(tmp, path)  # a new inode: live mappings of older cases stay intact
            self._path = str(path)
        return self._path


WAYS: Dict[str, Callable[[_Source], object]] = {
    "open_file(bytes)": lambda s: arrowmm.open_file(s.data),
    "open_file(path)": lambda s: arrowmm.open_file(s.path),
    "open_stream(bytes)": lambda s: arrowmm.open_stream(s.data),
    "open_stream(path)": lambda s: arrowmm.open_stream(s.path),
    "open_stream(BytesIO)": lambda s: arrowmm.open_stream(io.BytesIO(s.data)),
    "open(bytes)": lambda s: arrowmm.open(s.data),
    "open(path)": lambda s: arrowmm.open(s.path),
    "open(BytesIO)": lambda s: arrowmm.open(io.BytesIO(s.data)),
    # Salvage mode: a damaged tail ends the stream quietly; all else must hold as usual.
    "open_stream(recover)": lambda s: arrowmm.open_stream(s.data, recover=True),
}
# open_file takes a path or a buffer-protocol object (CONTRACT), not a file object.
FILE_WAYS = ("open_file(bytes)", "open_file(path)", "open(bytes)", "open(path)", "open(BytesIO)")
STREAM_WAYS = ("open_stream(bytes)", "open_stream(path)", "open_stream(BytesIO)", "open(bytes)",
               "open(path)", "open(BytesIO)", "open_stream(recover)")
FAST_FILE_WAYS = ("open_file(bytes)", "open(BytesIO)")
FAST_STREAM_WAYS = ("open_stream(bytes)", "open_stream(BytesIO)")


def ways_for(fmt: str, fast: bool = False) -> Tuple[str, ...]:
    if fmt == "file":
        return FAST_FILE_WAYS if fast else FILE_WAYS
    return FAST_STREAM_WAYS if fast else STREAM_WAYS


def open_and_touch(open_fn: Callable[[], object], label: str) -> Report:
    """Open, touch everything, close; raise ``Escaped`` (with the traceback) on a bad exception."""
    report = Report()
    try:
        ok, reader = _attempt(report, "open", open_fn)
        if ok:
            report.opened = True
            with reader:
                touch_reader(report, reader)
    except Escaped:
        raise
    except BaseException as exc:  # noqa: BLE001  (anything at all is the finding)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise Escaped(f"{label}: {type(exc).__name__} escaped arrowmm: {exc}\n"
                      f"{''.join(traceback.format_exception(exc))}") from None
    return report


def check(data: bytes, label: str, workdir: Path, ways=None, fmt: Optional[str] = None) -> Dict[str, Report]:
    """``open_and_touch`` through each way; fails the test on anything not allowed."""
    if ways is None:
        ways = ways_for(fmt) if fmt else tuple(WAYS)
    src = _Source(data, workdir)
    return {way: open_and_touch(functools.partial(WAYS[way], src), f"{label} via {way}")
            for way in ways}


#: Known messages that do not say where, each kept honest by a strict xfail test below
#: (when the message is fixed, that test passes, fails as XPASS, and the entry goes).
KNOWN_UNLOCATED = ()


def names_a_location(exc: BaseException, extra_words=(), allow_known: bool = True) -> bool:
    text = str(exc)
    if allow_known and any(p.search(text) for p in KNOWN_UNLOCATED):
        return True
    text = text.lower()
    return any(w in text for w in LOCATION_WORDS + tuple(w.lower() for w in extra_words))


def assert_errors_located(reports: Dict[str, Report], label: str, extra_words=()) -> None:
    for way, rep in reports.items():
        for step, exc in rep.errors:
            assert names_a_location(exc, extra_words), (
                f"{label} via {way}, step {step}: the message does not say where: "
                f"{type(exc).__name__}: {exc}")


def assert_raised(reports: Dict[str, Report], label: str) -> None:
    for way, rep in reports.items():
        assert rep.errors, f"{label} via {way}: the corruption went unnoticed"


@contextlib.contextmanager
def address_space_limit(extra: int = 3 << 30):
    """Cap this process's address space at its current size + ``extra`` while inside.

    A runaway allocation then fails as MemoryError (which ``check`` reports) instead of
    taking the machine down.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    vm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                vm = int(line.split()[1]) * 1024
    limit = vm + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@pytest.fixture(autouse=True)
def _memory_guard():
    with address_space_limit():
        yield


# =========================================================================================
# 0. The starting points are valid, and the helpers see them as such
# =========================================================================================

@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_samples_read_cleanly(key, workdir):
    s = samples()[key]
    for fmt in ("file", "stream"):
        reports = check(s.data(fmt), f"{key} {fmt}", workdir, fmt=fmt)
        for way, rep in reports.items():
            assert not rep.errors, f"{key} {fmt} via {way}: {rep.errors}"
            assert rep.values == s.expected, f"{key} {fmt} via {way}"
        lay = layout(key, fmt)
        assert [m.kind for m in lay.messages][-2:] == ["batch", "batch"]
        if fmt == "file":
            assert lay.n_batch_blocks == 2


# =========================================================================================
# 1. Truncation
# =========================================================================================

def _cuts(size: int) -> List[int]:
    odd = {1, 3, 5, 7, 9, 13, size - 1, size - 3, size - 5, size - 7, size - 9, size // 2 + 1}
    return sorted(set(range(0, size, 8)) | {c for c in odd if 0 <= c < size})


def _rotate(ways: Tuple[str, ...], i: int) -> Tuple[str, ...]:
    """One way per case, taking turns, so every way meets every kind of cut across a test."""
    return (ways[i % len(ways)],)


def _boundaries(lay: Layout) -> set:
    """Offsets where a stream may end cleanly: before any message, after each, after EOS."""
    ends = {m.offset for m in lay.messages} | {m.end for m in lay.messages}
    last = lay.data_end
    return ends | {last + 8} if lay.data[last:last + 8] == EOS else ends


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_truncated_stream(key, workdir):
    data = samples()[key].stream
    lay = layout(key, "stream")
    clean_ends = _boundaries(lay)
    for cut in _cuts(len(data)):
        piece = data[:cut]
        label = f"{key} stream cut at {cut}/{len(data)}"
        reports = check(piece, label, workdir, ways=_rotate(STREAM_WAYS, cut // 8))
        reports.pop("open_stream(recover)", None)  # stops quietly at a cut, by design
        if cut not in clean_ends:
            # Cut inside a message: every way must say so (not end the stream quietly).
            assert_raised(reports, label)
            assert_errors_located(reports, label)


def legacy(key: str) -> Tuple[bytes, set]:
    """The stream of ``key`` framed as before Arrow 0.15 (no continuation markers), and the
    offsets where it may end cleanly."""
    lay = layout(key, "stream")
    out, ends = bytearray(), {0}
    for m in lay.messages:
        out += struct.pack("<i", m.meta_len) + lay.data[m.meta_start:m.end]
        ends.add(len(out))
    out += struct.pack("<i", 0)
    ends.add(len(out))
    return bytes(out), ends


@pytest.mark.parametrize("key", ["nested-lz4", "dictionary"])
def test_truncated_legacy_stream(key, workdir):
    data, clean_ends = legacy(key)
    reports = check(data, f"{key} legacy stream", workdir, ways=STREAM_WAYS)
    for way, rep in reports.items():
        assert not rep.errors and rep.values == samples()[key].expected, f"{way}: {rep.errors}"
    for cut in _cuts(len(data)):
        label = f"{key} legacy stream cut at {cut}/{len(data)}"
        reports = check(data[:cut], label, workdir, ways=_rotate(STREAM_WAYS, cut // 8))
        reports.pop("open_stream(recover)", None)
        if cut not in clean_ends:
            assert_raised(reports, label)
            assert_errors_located(reports, label)


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_truncated_file(key, workdir):
    data = samples()[key].file
    lay = layout(key, "file")
    clean_ends = _boundaries(lay)  # of the stream inside the file
    eos_end = lay.data_end + 8 if data[lay.data_end:lay.data_end + 8] == EOS else len(data)
    for cut in _cuts(len(data)):
        label = f"{key} file cut at {cut}/{len(data)}"
        ways = _rotate(FILE_WAYS + ("open_stream(bytes)", "open_stream(BytesIO)", "open_stream(recover)"),
                       cut // 8)
        reports = check(data[:cut], label, workdir, ways=ways)
        for way, rep in reports.items():
            if way == "open_stream(recover)":
                continue  # salvages what it can: only the kinds of outcome matter
            if way in ("open_stream(bytes)", "open_stream(BytesIO)") and \
                    (cut in clean_ends or cut >= eos_end):
                continue  # reads the stream inside the file, which may end cleanly here
            assert not rep.opened or not way.startswith("open_file"), \
                f"{label} via {way}: a file without its trailer opened"
            assert rep.errors, f"{label} via {way}: accepted"


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_file_data_section_truncated_footer_kept(key, workdir):
    """Blocks that point past the (shortened) data section or into the footer."""
    data = samples()[key].file
    lay = layout(key, "file")
    tail = data[lay.footer_start:]
    for cut in range(8, lay.footer_start, 8):
        piece = data[:cut] + tail
        label = f"{key} file data cut at {cut} (footer kept)"
        reports = check(piece, label, workdir, ways=_rotate(FILE_WAYS, cut // 8))
        if cut < lay.data_end:
            assert_raised(reports, label)
            assert_errors_located(reports, label)


@pytest.mark.parametrize("key", ["primitive", "nested-zstd", "dictionary", "view-lz4"])
def test_stream_from_pipe_ending_mid_message(key):
    """A pipe whose writer stops mid-message: ArrowInvalid, no hang."""
    data = samples()[key].stream
    lay = layout(key, "stream")
    clean_ends = _boundaries(lay)
    cuts = sorted({m.offset + 3 for m in lay.messages} | {m.meta_start + 5 for m in lay.messages}
                  | {m.body_start + m.body_len // 2 for m in lay.messages if m.body_len}
                  | {len(data) - 4})
    for cut in cuts:
        assert cut not in clean_ends
        for buffered in (True, False):
            label = f"{key} stream through a pipe cut at {cut} (buffered={buffered})"
            r, w = os.pipe()

            def feed(w=w, piece=data[:cut]):
                with os.fdopen(w, "wb", buffering=0) as f:
                    for i in range(0, len(piece), 7):  # short writes: the reader sees short reads
                        f.write(piece[i:i + 7])

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            outcome = {}

            def read(r=r, buffered=buffered):
                with os.fdopen(r, "rb", buffering=-1 if buffered else 0) as f:
                    try:
                        outcome["report"] = open_and_touch(lambda: arrowmm.open_stream(f), label)
                    except Escaped as exc:
                        outcome["escaped"] = exc

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            reader.join(20)
            writer.join(5)
            assert not reader.is_alive(), f"{label}: the reader hangs"
            if "escaped" in outcome:
                raise outcome["escaped"]
            rep = outcome["report"]
            assert rep.errors, f"{label}: truncation went unnoticed"
            assert_errors_located({"pipe": rep}, label)


# =========================================================================================
# 2a. Random mutations (hypothesis, and seeded batches in a subprocess)
# =========================================================================================

MUTATION_OPS = ("xor", "set", "i32", "i64", "zero", "copy")


def apply_mutations(data: bytes, lay: Layout, mutations) -> bytes:
    """Apply ``(target, a, b, op, value)`` mutations; ``a``/``b`` pick span and position.

    ``target`` is ``"any"`` (anywhere in the input) or ``"meta"`` (inside a message's prefix
    and metadata, or the footer), where one flipped byte changes what the parser believes.
    """
    out = bytearray(data)
    spans = lay.metadata_spans()
    for target, a, b, op, value in mutations:
        if target == "meta":
            lo, hi = spans[a % len(spans)]
        else:
            lo, hi = 0, len(out)
        if hi <= lo:
            continue
        pos = lo + b % (hi - lo)
        if op == "xor":
            out[pos] ^= (value % 255) + 1
        elif op == "set":
            out[pos] = value % 256
        elif op == "i32":
            pos = min(pos & ~3, len(out) - 4)
            if pos >= 0:
                struct.pack_into("<i", out, pos, I32_EVIL[value % len(I32_EVIL)])
        elif op == "i64":
            pos = min(pos & ~7, len(out) - 8)
            if pos >= 0:
                struct.pack_into("<q", out, pos, I64_EVIL[value % len(I64_EVIL)])
        elif op == "zero":
            n = 1 + value % 16
            out[pos:pos + n] = bytes(len(out[pos:pos + n]))
        elif op == "copy":
            src = value % len(out)
            chunk = bytes(out[src:src + 8])
            out[pos:pos + len(chunk)] = chunk[:len(out) - pos]
    return bytes(out)


def random_mutations(rng: random.Random) -> list:
    return [(rng.choice(("any", "meta")), rng.randrange(1 << 16), rng.randrange(1 << 30),
             rng.choice(MUTATION_OPS), rng.randrange(1 << 16)) for _ in range(rng.randint(1, 6))]


_MUTATION = st.tuples(st.sampled_from(("any", "meta")), st.integers(0, 1 << 16),
                      st.integers(0, 1 << 30), st.sampled_from(MUTATION_OPS), st.integers(0, 1 << 16))


@pytest.mark.parametrize("fmt", ["file", "stream"])
@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(SAMPLE_KEYS), mutations=st.lists(_MUTATION, min_size=1, max_size=6),
       way=st.integers(0, 100))
def test_random_mutations(fmt, key, mutations, way, workdir):
    lay = layout(key, fmt)
    data = apply_mutations(lay.data, lay, mutations)
    ways = ways_for(fmt)
    check(data, f"{key} {fmt} mutated by {mutations}", workdir, ways=(ways[way % len(ways)],))


FUZZ_CASES = 1200  # ~8 s on one core; run fuzz_main by hand with more for a longer search


def fuzz_main(corpus_dir: str, seed: int, count: int) -> dict:
    """Entry point of the subprocess: ``count`` seeded mutations over the corpus in ``corpus_dir``.

    Prints the case before running it (so a crash names it) and returns counts by outcome.
    """
    rng = random.Random(seed)
    files = sorted(Path(corpus_dir).iterdir())
    corpus = [(p.name, p.read_bytes()) for p in files]
    layouts = [Layout.of(data, "file" if name.endswith(".arrow") else "stream") for name, data in corpus]
    with tempfile.TemporaryDirectory(prefix="arrowmm-fuzz-") as tmp:  # removed even on a failure
        return _fuzz_cases(corpus, layouts, rng, seed, count, Path(tmp))


def _fuzz_cases(corpus, layouts, rng, seed: int, count: int, workdir: Path) -> dict:
    counts = {"ok": 0, "error": 0}
    for i in range(count):
        k = rng.randrange(len(corpus))
        name, _ = corpus[k]
        muts = random_mutations(rng)
        data = apply_mutations(corpus[k][1], layouts[k], muts)
        way = rng.choice(ways_for(layouts[k].fmt))
        print(f"case {i}: {name} {way} {muts}", file=sys.stderr, flush=True)
        reports = check(data, f"seed {seed} case {i}: {name} mutated by {muts}", workdir, ways=(way,))
        counts["error" if any(r.errors for r in reports.values()) else "ok"] += 1
    return counts


_SUBPROCESS_PRELUDE = """
import faulthandler, resource, sys
faulthandler.enable()
# {mem} bytes beyond what the interpreter has mapped already (under AddressSanitizer that is
# terabytes of shadow memory, so an absolute cap would fail every allocation).
_vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (_vm + {mem}, _vm + {mem}))
sys.path[:0] = [{root!r}]  # the repository: its tests, and the arrowmm they test (not an installed one)
from tests.hostile import test_hostile as h
"""


def run_isolated(body: str, timeout: float, mem: int = 3 << 30) -> subprocess.CompletedProcess:
    """Run ``body`` after the prelude in a fresh interpreter with an address-space cap."""
    code = _SUBPROCESS_PRELUDE.format(mem=mem, root=str(HERE.parents[1])) + body
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, cwd=str(HERE))
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stderr or b"")[-3000:]
        pytest.fail(f"hang: no answer within {timeout} s\n{tail if isinstance(tail, str) else tail.decode(errors='replace')}")


def _last_case(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("case ")]
    return lines[-1] if lines else "(before the first case)"


@pytest.mark.parametrize("seed", [1])
def test_random_mutations_in_subprocess(seed, tmp_path):
    """Seeded mutations in a child process: a segfault shows as return code -11, a hang as timeout."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for key in SAMPLE_KEYS:
        s = samples()[key]
        (corpus / f"{key}.arrow").write_bytes(s.file)
        (corpus / f"{key}.stream").write_bytes(s.stream)
    proc = run_isolated(f"print(h.fuzz_main({str(corpus)!r}, {seed}, {FUZZ_CASES}))\n", timeout=120)
    assert proc.returncode == 0, (
        f"fuzz subprocess (seed {seed}) ended with return code {proc.returncode} "
        f"(-11 = segfault) at {_last_case(proc.stderr)}\n{proc.stderr[-5000:]}")
    counts = eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307  (our own dict repr)
    assert counts["ok"] + counts["error"] == FUZZ_CASES


# =========================================================================================
# 2b. Targeted corruptions
# =========================================================================================

@dataclass
class Case:
    """One corrupted input and what must come of it.

    ``expect``:
      * ``"any"``: only allowed outcomes (the change may be harmless);
      * ``"raise"``: some step must raise;
      * ``"open"``: opening itself must raise;
      * ``"structural"``: loading column ``col`` of batch 0 must raise (checks that run on touch);
      * ``"full"``: loading column ``col`` works, ``validate(full=True)`` on it raises;
      * ``"value"``: as ``"full"``, and ``to_pylist()`` raises ArrowInvalid too.
    """

    label: str
    data: bytes
    fmt: str
    expect: str = "raise"
    col: Optional[int] = None


def _verdict(case: Case, reports: Dict[str, Report], words=()) -> List[str]:
    problems = []
    for way, rep in reports.items():
        at = f"{case.label} via {way}"
        steps = rep.steps()
        col = f"batch 0.column({case.col})"
        for step, exc in rep.errors:
            if not names_a_location(exc, words):
                problems.append(f"{at}: step {step}: message does not say where: {exc}")
        if case.expect == "any":
            continue
        if not rep.errors:
            problems.append(f"{at}: the corruption went unnoticed")
        elif case.expect == "open" and "open" not in steps:
            problems.append(f"{at}: opened; first error later: {rep.errors[0]}")
        elif case.expect == "structural" and col not in steps:
            problems.append(f"{at}: loading the column did not raise; errors: {steps}")
        elif case.expect in ("full", "value"):
            if col in steps:
                problems.append(f"{at}: the structural check raised, expected only the full "
                                f"check to: {rep.first(col)}")
            if f"{col}.validate" not in steps:
                problems.append(f"{at}: validate(full=True) did not raise; errors: {steps}")
            if case.expect == "value":
                exc = rep.first(f"{col}.to_pylist")
                if not isinstance(exc, ArrowInvalid):
                    problems.append(f"{at}: to_pylist() gave {exc!r}, expected ArrowInvalid")
    return problems


def run_cases(cases: List[Case], workdir: Path, words=()) -> None:
    """Check every case (one way each, taking turns) and report all problems at the end."""
    assert cases
    problems = []
    turns = {"file": ("open_file(bytes)", "open(BytesIO)", "open_file(path)", "open(bytes)"),
             "stream": ("open_stream(bytes)", "open_stream(BytesIO)", "open_stream(path)", "open(BytesIO)")}
    for i, case in enumerate(cases):
        ways = _rotate(turns[case.fmt], i)
        try:
            reports = check(case.data, case.label, workdir, ways=ways)
        except Escaped as exc:
            problems.append(str(exc))
            continue
        problems += _verdict(case, reports, words)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])


def _column_names(key: str) -> Tuple[str, ...]:
    return tuple(arrowmm.open_stream(samples()[key].stream).schema.names)


# -- footer and blocks ---------------------------------------------------------------------

def footer_cases(key: str) -> List[Case]:
    lay = layout(key, "file")
    d = lay.data
    size = len(d)
    flen = lay.footer_len_at - lay.footer_start
    cases = []
    for v in (-1, 0, 1, 4, 7, size - 10, size - 17, size, 2 ** 31 - 1, -(2 ** 31)):
        cases.append(Case(f"{key}: footer length {v}", patch(d, (lay.footer_len_at, "<i", v)), "file",
                          "open"))
    for v in (flen - 8, flen + 8, flen + 4):
        cases.append(Case(f"{key}: footer length {v} (real {flen})",
                          patch(d, (lay.footer_len_at, "<i", v)), "file", "any"))
    for which, n in (("batch", lay.n_batch_blocks), ("dictionary", lay.n_dict_blocks)):
        for i in range(n):
            at = lay.block_at(which, i)
            off, mlen, _pad, blen = struct.unpack_from("<qiiq", d, at)
            what = f"{key}: {which} block {i}"
            for v in (-1, -8, 0, 7, off + 1, off + 4, off + 8, off + mlen, lay.footer_start,
                      lay.footer_start + 8, size - 10, size, 2 ** 62, -(2 ** 63), 2 ** 63 - 1):
                cases.append(Case(f"{what} offset {v} (real {off})", patch(d, (at, "<q", v)), "file"))
            for v in (0, -1, 8, mlen - 8, mlen + 8, 2 ** 31 - 1, -(2 ** 31)):
                cases.append(Case(f"{what} metaDataLength {v} (real {mlen})",
                                  patch(d, (at + 8, "<i", v)), "file"))
            for v in (-1, 0, blen - 8, blen + 8, 2 ** 62, -(2 ** 63), 2 ** 63 - 1):
                if v != blen:
                    cases.append(Case(f"{what} bodyLength {v} (real {blen})",
                                      patch(d, (at + 16, "<q", v)), "file"))
        if n > 1:
            # Block 1 pointing at block 0's message is valid (the message is read twice).
            off0, mlen0, _pad, blen0 = struct.unpack_from("<qiiq", d, lay.block_at(which, 0))
            at1 = lay.block_at(which, 1)
            cases.append(Case(f"{key}: {which} block 1 = block 0",
                              patch(d, (at1, "<q", off0), (at1 + 8, "<i", mlen0), (at1 + 16, "<q", blen0)),
                              "file", "any"))
    if lay.n_dict_blocks:
        # A dictionary block pointing at a record batch message and the other way round.
        bat = struct.unpack_from("<q", d, lay.block_at("batch", 0))[0]
        dic = struct.unpack_from("<q", d, lay.block_at("dictionary", 0))[0]
        cases.append(Case(f"{key}: dictionary block -> record batch",
                          patch(d, (lay.block_at("dictionary", 0), "<q", bat)), "file"))
        cases.append(Case(f"{key}: record batch block -> dictionary",
                          patch(d, (lay.block_at("batch", 0), "<q", dic)), "file"))
    # The footer's own vectors: huge lengths, offsets pointing out of the footer.
    for which, base in (("batch", lay.batch_blocks_at), ("dictionary", lay.dict_blocks_at)):
        if base is not None:
            for v in (2 ** 31 - 1, -1, 1 << 20):
                cases.append(Case(f"{key}: footer {which} vector length {v}",
                                  patch(d, (base - 4, "<i", v)), "file", "open"))
    return cases


@pytest.mark.parametrize("key", ["primitive", "dictionary", "view-zstd", "nested-lz4"])
def test_footer_and_blocks(key, workdir):
    run_cases(footer_cases(key), workdir)


# -- message framing -------------------------------------------------------------------------

def framing_cases(key: str, fmt: str) -> List[Case]:
    lay = layout(key, fmt)
    d = lay.data
    cases = []
    for m in lay.messages:
        if fmt == "file" and m.kind == "schema":
            continue  # a file reader takes the schema from the footer (as pyarrow does)
        what = f"{key} {fmt}: {m.kind} message {m.index} at byte {m.offset}"
        for v in (-1, -(2 ** 31), 2 ** 31 - 1, len(d), 1, 3):
            cases.append(Case(f"{what}: length prefix {v} (real {m.meta_len})",
                              patch(d, (m.offset + 4, "<i", v)), fmt))
        for v in (0, m.meta_len - 8, m.meta_len + 8):
            # 0 ends a stream early (legal); +-8 misframes: harmless or an error.
            expect = "raise" if fmt == "file" or (v == 0 and m.index == 0) else "any"
            cases.append(Case(f"{what}: length prefix {v} (real {m.meta_len})",
                              patch(d, (m.offset + 4, "<i", v)), fmt, expect))
        if m.body_length_at is not None:
            for v in (-1, -(2 ** 63), 2 ** 62, 2 ** 63 - 1, len(d)):
                cases.append(Case(f"{what}: bodyLength {v} (real {m.body_len})",
                                  patch(d, (m.body_length_at, "<q", v)), fmt))
            for v in (0, m.body_len - 8, m.body_len + 8):
                cases.append(Case(f"{what}: bodyLength {v} (real {m.body_len})",
                                  patch(d, (m.body_length_at, "<q", v)), fmt,
                                  "raise" if fmt == "file" else "any"))
        if m.length_at is not None:
            length = struct.unpack_from("<q", d, m.length_at)[0]
            for v in (-1, -(2 ** 63), 2 ** 62, length + 1, length - 1):
                expect = "raise" if m.kind == "batch" or v < 0 else "any"
                cases.append(Case(f"{what}: RecordBatch.length {v} (real {length})",
                                  patch(d, (m.length_at, "<q", v)), fmt, expect))
        # Unknown metadata version / header type.
        fb = FbMessage.GetRootAs(d[m.meta_start:m.meta_start + m.meta_len], 0)
        at = _slot(fb._tab, 0)
        if at is not None:
            for v in (-1, 0, 2, 5, 99):
                cases.append(Case(f"{what}: version {v}", patch(d, (m.meta_start + at, "<h", v)), fmt,
                                  "raise" if fmt == "file" or m.index == 0 or m.kind == "batch" else "any"))
        at = _slot(fb._tab, 1)
        for v in (0, 4, 5, 6, 200):
            cases.append(Case(f"{what}: header type {v}", patch(d, (m.meta_start + at, "<B", v)), fmt))
    return cases


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("key", ["primitive", "dictionary-lz4", "view", "union-zstd"])
def test_message_framing(key, fmt, workdir):
    run_cases(framing_cases(key, fmt), workdir)


# -- FieldNodes, Buffers, variadicBufferCounts -------------------------------------------------

def _first_of_each(lay: Layout) -> List[Msg]:
    """The first dictionary and the first record batch message (later ones decode alike)."""
    return [ms[0] for ms in (lay.of_kind("dictionary"), lay.of_kind("batch")) if ms]


def node_cases(key: str, fmt: str) -> List[Case]:
    lay = layout(key, fmt)
    d = lay.data
    cases = []
    for m in _first_of_each(lay):
        for i in range(m.n_nodes):
            at = m.node_at(i)
            length, nulls = struct.unpack_from("<qq", d, at)
            what = f"{key} {fmt}: {m.kind} message {m.index} FieldNode {i} ({length}, {nulls})"
            for v in (-1, -(2 ** 63), 2 ** 62):
                cases.append(Case(f"{what}: length {v}", patch(d, (at, "<q", v)), fmt))
            for v in (-1, length + 1, 2 ** 62):
                cases.append(Case(f"{what}: null_count {v}", patch(d, (at + 8, "<q", v)), fmt))
            cases.append(Case(f"{what}: length {length + 1}", patch(d, (at, "<q", length + 1)), fmt, "any"))
    return cases


def buffer_cases(key: str, fmt: str) -> List[Case]:
    lay = layout(key, fmt)
    d = lay.data
    cases = []
    for m in _first_of_each(lay):
        for i in range(m.n_buffers):
            at = m.buffer_at(i)
            off, length = struct.unpack_from("<qq", d, at)
            what = f"{key} {fmt}: {m.kind} message {m.index} Buffer {i} ({off}, {length}) of {m.body_len}"
            evil = [(-1, length), (2 ** 62, length), (2 ** 63 - 1, length), (m.body_len - 1, length),
                    (off, -(2 ** 63)), (off, 2 ** 62), (off, m.body_len - off + 1), (off + 1, length)]
            for new_off, new_len in evil[i % 2::2] if i > 1 else evil:
                bad = new_off < 0 or new_len < 0 or new_off + new_len > m.body_len
                cases.append(Case(f"{what}: -> ({new_off}, {new_len})",
                                  patch(d, (at, "<q", new_off), (at + 8, "<q", new_len)), fmt,
                                  "raise" if bad else "any"))
        for j in range(m.n_variadic):
            at = m.variadic_at + 8 * j
            count = struct.unpack_from("<q", d, at)[0]
            what = f"{key} {fmt}: {m.kind} message {m.index} variadicBufferCounts[{j}] ({count})"
            for v in {-1, -(2 ** 63), 2 ** 62, 2 ** 63 - 1, count + 1, count - 1, 2 ** 31}:
                cases.append(Case(f"{what} -> {v}", patch(d, (at, "<q", v)), fmt))
        if m.variadic_at is not None:
            at = m.variadic_at - 4
            for v in (m.n_variadic + 1, 2 ** 31 - 1, -1):
                cases.append(Case(f"{key} {fmt}: message {m.index} variadicBufferCounts vector length {v}",
                                  patch(d, (at, "<i", v)), fmt))
        if m.nodes_at is not None:
            for v in (m.n_nodes + 1, m.n_nodes - 1, 2 ** 31 - 1, -1):
                cases.append(Case(f"{key} {fmt}: message {m.index} FieldNode vector length {v}",
                                  patch(d, (m.nodes_at - 4, "<i", v)), fmt))
            for v in (m.n_buffers + 1, m.n_buffers - 1, 2 ** 31 - 1, -1):
                cases.append(Case(f"{key} {fmt}: message {m.index} Buffer vector length {v}",
                                  patch(d, (m.buffers_at - 4, "<i", v)), fmt))
    return cases


@pytest.mark.parametrize("key,fmt", [("primitive", "stream"), ("string", "file"), ("nested", "stream"),
                                     ("dictionary", "file"), ("union", "stream"), ("ree", "file"),
                                     ("view", "stream"), ("nested-zstd", "file")])
def test_field_nodes(key, fmt, workdir):
    run_cases(node_cases(key, fmt), workdir, _column_names(key))


@pytest.mark.parametrize("key,fmt", [("primitive", "file"), ("string", "stream"), ("nested", "file"),
                                     ("dictionary-zstd", "stream"), ("union-lz4", "file"),
                                     ("ree", "stream"), ("view", "file"), ("view-zstd", "stream")])
def test_buffers_and_variadic_counts(key, fmt, workdir):
    run_cases(buffer_cases(key, fmt), workdir, _column_names(key))


# -- values in the body: offsets, UTF-8, union ids, dictionary indices, run ends ---------------

def _buffer_of(key: str, fmt: str, column: str, rel: int, kind: str = "batch") -> Tuple[Msg, int, int]:
    """(message, absolute position, length) of buffer ``rel`` of ``column`` in the first message of
    ``kind`` (for ``"dictionary"``, ``column`` is ignored: the message holds one column)."""
    lay = layout(key, fmt)
    m = lay.of_kind(kind)[0]
    index = rel if kind == "dictionary" else column_buffers(key, m)[column][rel]
    pos, length = body_buffer(lay.data, m, index)
    return m, pos, length


def _poke(key: str, fmt: str, column: str, rel: int, element: int, fmt_char: str, value: int,
          kind: str = "batch") -> bytes:
    _m, pos, length = _buffer_of(key, fmt, column, rel, kind)
    width = struct.calcsize(fmt_char)
    assert (element + 1) * width <= length, (key, column, rel, element, length)
    return patch(layout(key, fmt).data, (pos + element * width, fmt_char, value))


def _read(key: str, fmt: str, column: str, rel: int, element: int, fmt_char: str) -> int:
    _m, pos, _length = _buffer_of(key, fmt, column, rel)
    return struct.unpack_from(fmt_char, layout(key, fmt).data, pos + element * struct.calcsize(fmt_char))[0]


def _col(key: str, name: str) -> int:
    return _column_names(key).index(name)


def offsets_cases(fmt: str) -> List[Case]:
    """Offsets made out of range at either end (caught on touch) or non-monotonic inside
    (caught by validate(full=True))."""
    cases = []
    # (sample, column, buffer index within the column, struct char, size of what they index)
    targets = [("string", "s", 1, "<i"), ("string", "ls", 1, "<q"), ("string", "bin", 1, "<i"),
               ("nested", "l", 1, "<i"), ("nested", "m", 1, "<i"), ("nested", "ll", 1, "<q"),
               ("nested", "ll", 3, "<i")]
    for key, name, rel, c in targets:
        k = _col(key, name)
        _m, _pos, nbytes = _buffer_of(key, fmt, name, rel)
        n = nbytes // struct.calcsize(c) - 1  # slots (pyarrow writes unpadded buffer lengths)
        first, last = _read(key, fmt, name, rel, 0, c), _read(key, fmt, name, rel, n, c)
        what = f"{key} {fmt}: {name} offsets (buffer {rel}, {n} slots, {first}..{last})"
        for slot, value, expect in ((0, -1, "structural"), (0, last + 1, "structural"),
                                    (n, last + 1000, "structural"), (n, -(2 ** 31), "structural"),
                                    (n, first - 1, "structural"),
                                    (n // 2, last, "full"), (n // 2, first, "full"),
                                    (1, 2 ** 31 - 1, "full"), (n - 1, -5, "full")):
            before = _read(key, fmt, name, rel, slot, c)
            if value == before:
                continue
            if expect == "full" and rel == 1:
                # Non-monotonic somewhere inside, ends untouched: only the full check sees it.
                left = _read(key, fmt, name, rel, slot - 1, c) if slot else None
                right = _read(key, fmt, name, rel, slot + 1, c)
                if (left is None or left <= value) and value <= right:
                    continue
            if expect == "full" and rel != 1:
                expect = "raise"  # a child's offsets: the child is checked when it loads
            cases.append(Case(f"{what}: offset[{slot}] {before} -> {value}",
                              _poke(key, fmt, name, rel, slot, c, value), fmt, expect, k))
    # The offsets of a dictionary's values (read with the dictionary batch).
    _m, _pos, nbytes = _buffer_of("dictionary", fmt, "", 1, "dictionary")
    for slot, value in ((0, -1), (nbytes // 4 - 1, 1000), (1, 2 ** 31 - 1)):
        cases.append(Case(f"dictionary {fmt}: dictionary values offset[{slot}] -> {value}",
                          _poke("dictionary", fmt, "", 1, slot, "<i", value, "dictionary"), fmt))
    return cases


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_offsets_out_of_range_or_non_monotonic(fmt, workdir):
    run_cases(offsets_cases(fmt), workdir, ("s", "ls", "bin", "l", "m", "ll"))


def utf8_cases(fmt: str) -> List[Case]:
    """A 0xFF byte inside a non-null string value: validate(full=True) and to_pylist() raise."""
    cases = []
    for key, name, rel, byte in (("string", "s", 2, 0), ("string", "ls", 2, 0), ("nested", "st", 5, 0),
                                 ("nested", "m", 5, 0), ("nested", "ll", 6, 0),
                                 ("union", "su", 5, 1),  # "b": slot 1 picks the string child
                                 ("ree", "r", 4, 0)):
        for value in (0xFF, 0xC0, 0x80):
            cases.append(Case(f"{key} {fmt}: {name} data byte {byte} -> {value:#x}",
                              _poke(key, fmt, name, rel, byte, "<B", value), fmt, "value", _col(key, name)))
    # The string values of a dictionary.
    cases.append(Case(f"dictionary {fmt}: dictionary value byte 0 -> 0xff",
                      _poke("dictionary", fmt, "", 2, 0, "<B", 0xFF, "dictionary"), fmt, "value", 0))
    # string_view: an inline value (view 0, "short") and a long one (view 2, in a variadic buffer).
    cases.append(Case(f"view {fmt}: inline string_view value byte -> 0xff",
                      _poke("view", fmt, "sv", 1, 4 + 1, "<B", 0xFF), fmt, "value", 0))
    lay = layout("view", fmt)
    _m, views_at, _n = _buffer_of("view", fmt, "sv", 1)
    _size, _prefix, bidx, off = struct.unpack_from("<i4sii", lay.data, views_at + 16 * 2)
    cases.append(Case(f"view {fmt}: long string_view value byte -> 0xff",
                      _poke("view", fmt, "sv", 2 + bidx, off + 6, "<B", 0xFF), fmt, "value", 0))
    return cases


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_invalid_utf8(fmt, workdir):
    run_cases(utf8_cases(fmt), workdir, ("s", "ls", "st", "m", "ll", "su", "r", "d", "sv"))


def value_cases(fmt: str) -> List[Case]:
    cases = []
    # Union type ids not declared by the union (values are codes 0 and 1).
    for name in ("su", "du"):
        for value in (2, 5, 127, -1, -128):
            cases.append(Case(f"union {fmt}: {name} type_id[1] -> {value}",
                              _poke("union", fmt, name, 0, 1, "<b", value), fmt, "value", _col("union", name)))
    # Dense union offsets outside their child.
    for value in (-1, 100, 2 ** 31 - 1, -(2 ** 31)):
        cases.append(Case(f"union {fmt}: du offset[1] -> {value}",
                          _poke("union", fmt, "du", 1, 1, "<i", value), fmt, "value", _col("union", "du")))
    # Dictionary indices outside the dictionary (slot 0 is not null).
    for name, c, values in (("d", "<i", (99, 3, -1, 2 ** 31 - 1, -(2 ** 31))), ("d8", "<b", (3, 100, -1, -128))):
        for value in values:
            cases.append(Case(f"dictionary {fmt}: {name} index[0] -> {value}",
                              _poke("dictionary", fmt, name, 1, 0, c, value), fmt, "value",
                              _col("dictionary", name)))
    # Run ends (2, 3, 5, 7 for 7 rows): not increasing inside, not positive, too short at the end.
    for slot, value, expect in ((1, 2, "value"), (2, 1, "value"), (1, 0, "value"), (0, 0, "value"),
                                (0, -1, "value"), (2, -(2 ** 31), "value"), (3, 6, "structural"),
                                (3, 0, "structural"), (3, -1, "structural"), (3, 2 ** 31 - 1, "any")):
        cases.append(Case(f"ree {fmt}: run_end[{slot}] -> {value}",
                          _poke("ree", fmt, "r", 1, slot, "<i", value), fmt, expect, 0))
    # string_view headers: size, buffer index and offset of the long view 2.
    _m, views_at, _n = _buffer_of("view", fmt, "sv", 1)
    for field_at, value, expect in ((0, -1, "value"), (0, 2 ** 31 - 1, "value"), (8, 5, "value"),
                                    (8, -1, "value"), (12, -1, "value"), (12, 2 ** 31 - 1, "value"),
                                    (0, 13 + 1000, "value"),
                                    (12, 1, "full")):  # in range, prefix differs: only the full check
        cases.append(Case(f"view {fmt}: string_view view[2] +{field_at} -> {value}",
                          _poke("view", fmt, "sv", 1, (32 + field_at) // 4, "<i", value), fmt, expect, 0))
    return cases


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_union_ids_dictionary_indices_run_ends_views(fmt, workdir):
    run_cases(value_cases(fmt), workdir, ("su", "du", "d", "d8", "r", "sv"))


# -- dictionary ids ------------------------------------------------------------------------------

def _schema_dictionary_id_positions(key: str, fmt: str) -> Dict[str, int]:
    """Field name -> absolute position of its DictionaryEncoding.id, in the schema arrowmm reads
    (the footer's for a file, the schema message's for a stream); absent ids (0) are left out."""
    lay = layout(key, fmt)
    d = lay.data
    if fmt == "file":
        base, end = lay.footer_start, lay.footer_len_at
        schema = FbFooter.GetRootAs(d[base:end], 0).Schema()
    else:
        m = lay.messages[0]
        base = m.meta_start
        table = FbMessage.GetRootAs(d[base:base + m.meta_len], 0).Header()
        schema = FbSchema()
        schema.Init(table.Bytes, table.Pos)
    out = {}
    for i in range(schema.FieldsLength()):
        f = schema.Fields(i)
        enc = f.Dictionary()
        if enc is not None:
            at = _slot(enc._tab, 0)
            if at is not None:
                out[f.Name().decode()] = base + at
    return out


def dictionary_id_cases(fmt: str) -> List[Case]:
    lay = layout("dictionary", fmt)
    d = lay.data
    cases = []
    for m in lay.of_kind("dictionary"):
        if m.dict_id_at is not None:
            for value in (7, -1, 2 ** 62, -(2 ** 63)):
                cases.append(Case(f"dictionary {fmt}: DictionaryBatch id -> {value}",
                                  patch(d, (m.dict_id_at, "<q", value)), fmt))
    positions = _schema_dictionary_id_positions("dictionary", fmt)
    assert positions, "expected the second dictionary field to carry an explicit id"
    for name, at in positions.items():
        for value in (7, -1, 0):
            cases.append(Case(f"dictionary {fmt}: schema field {name!r} dictionary id -> {value}",
                              patch(d, (at, "<q", value)), fmt))
    return cases


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_dictionary_ids_that_do_not_exist(fmt, workdir):
    run_cases(dictionary_id_cases(fmt), workdir, ("d", "d8"))


def test_record_batch_before_its_dictionary(workdir):
    """A stream whose record batch comes before the dictionary batch it needs."""
    lay = layout("dictionary", "stream")
    d = lay.data
    schema, *rest = lay.messages
    dicts = [d[m.offset:m.end] for m in rest if m.kind == "dictionary"]
    batches = [d[m.offset:m.end] for m in rest if m.kind == "batch"]
    data = d[:schema.end] + batches[0] + b"".join(dicts) + b"".join(batches[1:]) + EOS
    run_cases([Case("dictionary stream: batch before dictionary", data, "stream")], workdir, ("d", "d8"))


# -- nesting depth and fan-out, built by hand ---------------------------------------------------

def _fb_field(b: flatbuffers.Builder, name: str, type_type: int, type_table: int, children=()) -> int:
    """A Field table: name, nullable, type, children (offsets of Field tables, may repeat)."""
    name_off = b.CreateString(name)
    b.StartVector(4, len(children), 4)
    for child in reversed(children):
        b.PrependUOffsetTRelative(child)
    kids = b.EndVector()
    b.StartObject(7)
    b.PrependUOffsetTRelativeSlot(0, name_off, 0)
    b.PrependBoolSlot(1, True, False)
    b.PrependUint8Slot(2, type_type, 0)
    b.PrependUOffsetTRelativeSlot(3, type_table, 0)
    b.PrependUOffsetTRelativeSlot(5, kids, 0)
    return b.EndObject()


def _fb_schema(b: flatbuffers.Builder, depth: int, fan_out: int) -> int:
    """A Schema of one field: ``depth`` levels over an int32: lists when ``fan_out`` is 1, else
    structs whose children vector holds the same child table ``max(fan_out, 1)`` times (0 gives
    single-child structs)."""
    b.StartObject(2)
    b.PrependInt32Slot(0, 32, 0)
    b.PrependBoolSlot(1, True, False)
    int_type = b.EndObject()
    node = _fb_field(b, "leaf", 2, int_type)
    for level in range(depth):
        b.StartObject(0)
        empty = b.EndObject()  # Struct_ and List tables have no fields
        node = _fb_field(b, f"n{level}", 12 if fan_out == 1 else 13, empty, [node] * max(fan_out, 1))
    b.StartVector(4, 1, 4)
    b.PrependUOffsetTRelative(node)
    fields = b.EndVector()
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(1, fields, 0)
    return b.EndObject()


def _pad8(raw: bytes) -> bytes:
    return raw + bytes(-len(raw) % 8)


def hand_built(depth: int, fan_out: int, fmt: str) -> bytes:
    """A stream (schema message + EOS) or a file (same, plus a footer with no blocks)."""
    b = flatbuffers.Builder(1024)
    schema = _fb_schema(b, depth, fan_out)
    b.StartObject(5)
    b.PrependInt16Slot(0, 4, 0)  # V5
    b.PrependUint8Slot(1, 1, 0)  # Schema
    b.PrependUOffsetTRelativeSlot(2, schema, 0)
    b.Finish(b.EndObject())
    meta = _pad8(bytes(b.Output()))
    stream = CONTINUATION + struct.pack("<i", len(meta)) + meta + EOS
    if fmt == "stream":
        return stream
    b = flatbuffers.Builder(1024)
    schema = _fb_schema(b, depth, fan_out)
    b.StartObject(5)
    b.PrependInt16Slot(0, 4, 0)
    b.PrependUOffsetTRelativeSlot(1, schema, 0)
    b.Finish(b.EndObject())
    footer = bytes(b.Output())
    return MAGIC + b"\0\0" + stream + footer + struct.pack("<i", len(footer)) + MAGIC


def test_hand_built_schemas_are_what_they_claim():
    """The builder makes schemas arrowmm reads when they are reasonable (so the failures below
    are about depth and fan-out, not about the builder)."""
    for fmt in ("file", "stream"):
        data = hand_built(3, 1, fmt)
        with arrowmm.open(data) as r:
            assert str(r.schema.field(0).type).count("list<") == 3
        data = hand_built(3, 2, fmt)  # each level names its child twice: 2 + 4 + 8 + 1 structs
        with arrowmm.open(data) as r:
            assert str(r.schema.field(0).type).count("struct<") == 7


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("fan_out", [1, 0], ids=["lists", "structs"])
def test_schema_ten_thousand_levels_deep(fmt, fan_out, workdir):
    """10,000 nested lists (or single-child structs) -> ArrowInvalid, not RecursionError."""
    data = hand_built(10_000, fan_out, fmt)
    start = time.perf_counter()
    ways = tuple(w for w in ways_for(fmt) if w != "open_stream(recover)")
    reports = check(data, f"10,000-level schema ({fmt})", workdir, ways=ways)
    assert time.perf_counter() - start < 10
    for way, rep in reports.items():
        exc = rep.first("open")
        assert isinstance(exc, ArrowInvalid), f"{way}: {rep.errors or 'opened'}"
        assert "nest" in str(exc) or "deep" in str(exc), exc
        assert names_a_location(exc), exc


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_schema_dag_with_exponential_fan_out(fmt, tmp_path):
    """Each level's children vector names one child table twice: 40 levels are 2**40 fields.

    Flatbuffers allow shared tables, so a few hundred bytes describe a tree no walk finishes;
    arrowmm must refuse it (ArrowInvalid), not hang or exhaust memory.  Run in a child process
    with a timeout.
    """
    path = tmp_path / "dag.bin"
    path.write_bytes(hand_built(40, 2, fmt))
    proc = run_isolated(
        f"data = open({str(path)!r}, 'rb').read()\n"
        f"rep = h.open_and_touch(lambda: h.arrowmm.open(data), 'dag')\n"
        f"print(repr(rep.first('open')))\n", timeout=30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ArrowInvalid("), proc.stdout


# -- compression: giant declared lengths ----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def big_compressed(codec: str) -> bytes:
    """A stream of one 1 MiB int64 column that compresses to a few hundred KiB."""
    pa = pytest.importorskip("pyarrow")
    batch = pa.record_batch({"x": pa.array((np.arange(1 << 17) * 7919 % 100003).astype("int64"))})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_batch(batch)
    return sink.getvalue()


def _compressed_buffers(data: bytes, fmt: str) -> List[Tuple[int, int, int]]:
    """(position of the int64 uncompressed-length prefix, payload bytes, declared) of each
    compressed buffer of the first record batch."""
    lay = Layout.of(data, fmt)
    m = lay.of_kind("batch")[0]
    out = []
    for i in range(m.n_buffers):
        pos, length = body_buffer(data, m, i)
        if length >= 8:
            declared = struct.unpack_from("<q", data, pos)[0]
            if declared >= 0:
                out.append((pos, length - 8, declared))
    return out


def _zstd_content_size_field(data: bytes, at: int) -> Tuple[int, int]:
    """(position, width) of the Frame_Content_Size field of the zstd frame at ``at``."""
    assert data[at:at + 4] == b"\x28\xb5\x2f\xfd"
    fhd = data[at + 4]
    single = (fhd >> 5) & 1
    pos = at + 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3]
    width = (1 if single else 0, 2, 4, 8)[fhd >> 6]
    return pos, width


def _peak_while(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def compression_cases(codec: str) -> List[Case]:
    cases = []
    for key in (f"primitive-{codec}", f"string-{codec}"):
        for fmt in ("file", "stream"):
            data = samples()[key].data(fmt)
            pos, payload, declared = _compressed_buffers(data, fmt)[0]
            for v in (2 ** 62, 2 ** 63 - 1, 2 ** 40, 2 ** 31 - 1, 200 * payload, declared + 1,
                      declared - 1, 0, -2):
                cases.append(Case(f"{key} {fmt}: uncompressed length {declared} -> {v}",
                                  patch(data, (pos, "<q", v)), fmt))
    data = big_compressed(codec)
    bufs = _compressed_buffers(data, "stream")
    pos, payload, declared = max(bufs, key=lambda b: b[1])
    for v in (2 ** 40, 2 ** 33, 200 * payload, 60_000 * payload, declared * 64, declared - 1):
        cases.append(Case(f"1 MiB column ({codec}, {payload}-byte payload): uncompressed length "
                          f"{declared} -> {v}", patch(data, (pos, "<q", v)), "stream"))
    if codec == "zstd":
        fcs, width = _zstd_content_size_field(data, pos + 8)
        assert width >= 4, width
        for v in (2 ** 31 - 1, 2 ** (8 * width) - 1):
            cases.append(Case(f"1 MiB column (zstd): frame content size -> {v}",
                              patch(data, (fcs, "<Q" if width == 8 else "<I", v)), "stream"))
            cases.append(Case(f"1 MiB column (zstd): frame content size and declared length -> {v}",
                              patch(data, (fcs, "<Q" if width == 8 else "<I", v), (pos, "<q", v)), "stream"))
    return cases


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_buffer_declaring_giant_length(codec, workdir):
    """ArrowInvalid, quickly, without allocating anything near the declared length."""
    problems = []
    for case in compression_cases(codec):
        result = {}

        def run(case=case):
            result["reports"] = check(case.data, case.label, workdir, ways=ways_for(case.fmt, fast=True))

        start = time.perf_counter()
        try:
            peak = _peak_while(run)
        except Escaped as exc:
            problems.append(str(exc))
            continue
        took = time.perf_counter() - start
        problems += _verdict(case, result["reports"], ("x",))
        limit = 32 << 20  # the inputs are at most ~0.6 MiB; decoding one is ~1 MiB
        if peak > limit:
            problems.append(f"{case.label}: peak traced allocation {peak >> 20} MiB (limit {limit >> 20})")
        if took > 5:
            problems.append(f"{case.label}: took {took:.1f} s")
    assert not problems, "\n".join(problems)


# -- lengths no buffer backs: null columns, empty structs, batches without columns -----------

@functools.lru_cache(maxsize=None)
def bufferless(kind: str) -> bytes:
    pa = pytest.importorskip("pyarrow")
    if kind == "null":
        table = pa.table({"n": pa.nulls(3)})
    elif kind == "empty struct":
        table = pa.table({"e": pa.array([{}, {}, {}], pa.struct([]))})
    else:
        table = pa.Table.from_pydict({"a": [1, 2, 3]}).drop_columns(["a"])
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _claim_rows(kind: str, rows: int) -> bytes:
    """The bufferless stream with its batch (and node) lengths set to ``rows``."""
    data = bufferless(kind)
    lay = Layout.of(data, "stream")
    m = lay.of_kind("batch")[0]
    edits = [(m.length_at, "<q", rows)]
    edits += [(m.node_at(i), "<q", rows) for i in range(m.n_nodes)]
    return patch(data, *edits)


@pytest.mark.parametrize("kind", [
    "null", "empty struct", "no columns",
])
def test_rows_no_buffer_backs(kind, tmp_path):
    """A batch claiming 2**40 rows of a type with no buffers (null, struct<>, no columns at all).

    Nothing in the input backs those rows, so the declared length must not size an allocation or
    a loop: touching everything answers ArrowInvalid (or works) within seconds and 2 GiB.
    """
    path = tmp_path / "rows.bin"
    path.write_bytes(_claim_rows(kind, 2 ** 40))
    proc = run_isolated(
        f"data = open({str(path)!r}, 'rb').read()\n"
        f"try:\n"
        f"    rep = h.open_and_touch(lambda: h.arrowmm.open_stream(data), {kind!r})\n"
        f"except h.Escaped as exc:\n"
        f"    print(exc); raise SystemExit(3)\n"
        f"print(rep.steps())\n", timeout=20, mem=384 << 20)
    assert proc.returncode == 0, f"return code {proc.returncode}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"


# =========================================================================================
# Found on the way: message wording, the list conversion fallback, honest depth
# =========================================================================================

def test_value_range_errors_name_the_slot(workdir):
    """validate(full=True) on a decimal beyond its precision says which value (CONTRACT: where)."""
    data = _poke("primitive", "stream", "dec", 1, 0, "<q", 10 ** 12)  # low word of value[0]
    reports = check(data, "decimal value[0] = 10**12 in decimal128(10, 2)", workdir,
                    ways=("open_stream(bytes)",))
    exc = reports["open_stream(bytes)"].first(f"batch 0.column({_col('primitive', 'dec')}).validate")
    assert isinstance(exc, ArrowInvalid), reports
    assert names_a_location(exc, allow_known=False), str(exc)


def test_list_offsets_inside_with_a_failing_child(workdir):
    """large_list<list<string>>: a middle outer offset far past the child, and a string that is
    not UTF-8 below it.  to_pylist() must answer ArrowInvalid."""
    key, fmt = "nested", "stream"
    data = _poke(key, fmt, "ll", 1, 3, "<q", 2 ** 40)  # outer offsets[3] (ends untouched)
    _m, pos, _n = _buffer_of(key, fmt, "ll", 6)  # the strings' data
    data = patch(data, (pos, "<B", 0xFF))
    case = Case("nested stream: ll offset[3] -> 2**40 and string data byte 0 -> 0xff", data, fmt,
                "value", _col(key, "ll"))
    reports = check(data, case.label, workdir, ways=("open_stream(bytes)",))
    assert not _verdict(case, reports, ("ll",))


def test_nesting_just_inside_the_limit_reads(workdir):
    """The depth limit refuses hostile schemas, not deep honest ones: 60 nested lists read back."""
    pa = pytest.importorskip("pyarrow")
    arr = pa.array([1, None, 3], pa.int64())
    for _ in range(60):
        arr = pa.ListArray.from_arrays(pa.array([0, 1, 1, len(arr)], pa.int32()), arr)
    batch = pa.record_batch({"deep": arr})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    reports = check(sink.getvalue(), "60 nested lists", workdir, ways=FAST_STREAM_WAYS)
    for way, rep in reports.items():
        assert not rep.errors and rep.values == [batch.to_pylist()], f"{way}: {rep.errors}"
