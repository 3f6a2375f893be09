"""Record batch bodies -> arrays: one depth-first walk with node and buffer cursors.

A ``SchemaPlan`` records, for each top-level column, where its nodes and
buffers start in a record batch, so ``BatchLoader.column(k)`` jumps straight
to column ``k`` and decodes nothing else.  Every buffer goes through
``_Walk._buffer``, the one place that turns a (offset, length) pair from
the file into a ``BufferView`` (checked against the body, decompressed,
re-aligned when it must be), and every array is structurally checked as it is
built.

Compressed buffers decompress when their column is loaded: the buffers of
that column (or, through ``prefetch``, of every column a caller asks for at
once) are decoded together, in threads when there is enough of them.  Memory
the loader makes (decompressed, byte-swapped or re-aligned buffers) is wrapped
in ``CopiedMemory`` (``arrays.provenance``), so ``copy_reason`` / ``Array.is_zero_copy`` can tell it
from memory borrowed from the source; with ``allow_copies=False`` the loader
refuses to make any, naming the column and the reason.  A decompressed column's
values are checked as soon as it is decoded (``_batch_walk.prove_decoded``), and
the verdict kept on it, so its exports and writes do not read it all again.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Optional

from ... import limits
from ... import types as t
from ..._core._flatbuf import StructPairs
from ..._core._region import BufferView, as_view
from ...arrays.array import Array, array_class, make_array
from ._batch_walk import compile_walk, overlapping_buffer, plain_fixed_parts, prove_decoded
from ..core.byteorder import NATIVE, byteswap, swap_kind
from ...arrays.provenance import CopiedMemory, copied_view, copy_reason
from ..core.compression import compressed_size, decompress_many, decompress_payload
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format import MetadataVersion, RecordBatchHeader

__all__ = ["SchemaPlan", "LoadStats", "BatchLoader", "CopiedMemory", "copied_view", "copy_reason"]


@dataclass
class LoadStats:
    """What loading cost beyond borrowing memory: copies are counted, never silent.

    Buffers stored uncompressed inside a compressed body (length prefix -1) are read in place:
    they count as neither decompressed nor copied."""

    columns_loaded: int = 0
    buffers_copied: int = 0  # misaligned buffers copied to aligned memory
    bytes_copied: int = 0
    buffers_swapped: int = 0  # big-endian buffers converted to native order
    buffers_decompressed: int = 0
    bytes_decompressed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False,
                                  compare=False)

    def add(self, other: Optional["LoadStats"], columns: int = 0) -> None:
        """Add the counts of ``other`` (one walk's; None: nothing copied) and ``columns`` loaded
        to these, atomically (walks run in threads)."""
        with self._lock:
            self.columns_loaded += columns
            if other is not None:
                self.columns_loaded += other.columns_loaded
                self.buffers_copied += other.buffers_copied
                self.bytes_copied += other.bytes_copied
                self.buffers_swapped += other.buffers_swapped
                self.buffers_decompressed += other.buffers_decompressed
                self.bytes_decompressed += other.bytes_decompressed

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}


def _counts(f: t.Field, v4: bool):
    """(nodes, fixed buffers, view-typed nodes) one field occupies in a record batch."""
    dtype = f.storage_type
    if isinstance(dtype, t.DictionaryType):
        return 1, 2, 0
    nodes, buffers = 1, dtype.buffer_count
    views = 1 if isinstance(dtype, t.BinaryViewType) else 0
    if v4 and isinstance(dtype, (t.UnionType, t.RunEndEncodedType)):
        buffers += 1  # under V4 every non-null type has a validity slot (Arrow C++'s rule)
    for child in dtype.children:
        n, b, v = _counts(child, v4)
        nodes, buffers, views = nodes + n, buffers + b, views + v
    return nodes, buffers, views


@dataclass(frozen=True)
class SchemaPlan:
    """Where each top-level column starts among a record batch's nodes and buffers."""

    schema: t.Schema
    version: int
    node_starts: tuple
    buffer_starts: tuple  # before variadic buffers of earlier view columns
    view_starts: tuple
    total_nodes: int
    total_buffers: int
    total_views: int

    @classmethod
    def build(cls, schema: t.Schema, version: int = MetadataVersion.V5) -> "SchemaPlan":
        v4 = version < MetadataVersion.V5
        ns, bs, vs = [], [], []
        n = b = v = 0
        for f in schema.fields:
            ns.append(n), bs.append(b), vs.append(v)
            dn, db, dv = _counts(f, v4)
            n, b, v = n + dn, b + db, v + dv
        return cls(schema, version, tuple(ns), tuple(bs), tuple(vs), n, b, v)

    @cached_property
    def fixed_columns(self) -> tuple:
        """Per top-level column, ``(array class, type, alignment)`` when it is a plain
        fixed-width column (integers, floats, temporal, decimal: one node, a validity and a
        values buffer), else None: what ``BatchLoader.column`` loads without a walk."""
        out = []
        for f in self.schema.fields:
            dtype = f.type
            if type(dtype) in _FIXED_TYPES:
                out.append((array_class(dtype), dtype, min(dtype.byte_width, 8), dtype.byte_width))
            else:
                out.append(None)
        return tuple(out)

    @cached_property
    def plain_specs(self) -> tuple:
        """``fixed_columns`` with each column's first node and buffer added, for
        ``BatchLoader.plain_column``; all None when view columns (whose variadic buffers
        shift the later columns' buffers per batch) come first."""
        out = []
        for k, spec in enumerate(self.fixed_columns):
            if spec is None or self.view_starts[k]:
                out.append(None)
            else:
                out.append(spec + (self.node_starts[k], self.buffer_starts[k]))
        return tuple(out)

    @cached_property
    def c_walk(self):
        """This plan compiled for the C export's walk over undecoded columns (``_batch_walk``), or
        None when some column needs the full loader."""
        return compile_walk(self)


class _Path:
    """Where an array sits (message, column, field path), formatted only when an error needs it."""

    __slots__ = ("parent", "column", "name")

    def __init__(self, parent, column, name):
        self.parent = parent
        self.column = column
        self.name = name

    def __str__(self):
        if self.column is not None:
            return f"{self.parent}, column {self.column} ({self.name!r})"
        return f"{self.parent}.{self.name}"


class BatchLoader:
    """Decodes the columns of one record batch (or dictionary batch) on demand.

    ``dictionaries`` maps a dictionary id to its current values array.  A loader is shared by
    every thread that touches its batch: it holds what the message says, never the state of a
    walk (cursors, decoded buffers, counts), which lives in one ``_Walk`` per ``column`` call.
    """

    __slots__ = ("plan", "header", "body", "dictionaries", "where", "stats", "swap", "allow_copies",
                 "_nodes", "_buffers", "_variadic", "_decompressed", "_charged", "_budget_lock",
                 "_plain", "budget")

    def __init__(self, plan: SchemaPlan, header: RecordBatchHeader, body: BufferView,
                 dictionaries: Callable[[int], Array], where: str, stats: Optional[LoadStats] = None,
                 allow_copies: bool = True, budget: Optional[Callable[[dict, bool], bool]] = None):
        self.plan = plan
        # (the reader's budget: ``charge(new charges, quiet)`` of a ``DecompressionBudget``)
        self.budget = budget
        self.allow_copies = allow_copies
        self.header = header
        self.body = body
        self.dictionaries = dictionaries
        self.where = where
        self.stats = stats if stats is not None else LoadStats()
        self.swap = plan.schema.endianness != NATIVE
        nodes, buffers, variadic = header.nodes, header.buffers, header.variadic_counts
        n_nodes, n_buffers = len(nodes), len(buffers)
        if n_nodes != plan.total_nodes:
            raise ArrowInvalid(f"{where}: {n_nodes} field nodes, the schema needs {plan.total_nodes}")
        if len(variadic) != plan.total_views:
            raise ArrowInvalid(f"{where}: {len(variadic)} variadicBufferCounts, the schema has "
                               f"{plan.total_views} binary/string view field(s)")
        extra = 0
        if len(variadic):
            if int(variadic.min()) < 0:
                raise ArrowInvalid(f"{where}: negative variadicBufferCount {int(variadic.min())}")
            if int(variadic.max()) > n_buffers:
                raise ArrowInvalid(f"{where}: variadicBufferCount {int(variadic.max())} exceeds the "
                                   f"{n_buffers} buffers of the message")
            extra = int(variadic.sum())
        if n_buffers != plan.total_buffers + extra:
            raise ArrowInvalid(f"{where}: {n_buffers} buffers, the schema needs "
                               f"{plan.total_buffers + extra}")
        bad = overlapping_buffer(buffers)  # (every header's Buffer vector is a StructPairs)
        if bad >= 0:
            offset, length = buffers.get(bad)
            raise ArrowInvalid(f"{where}: buffer {bad} (offset {offset}, length {length}) starts "
                               f"before the buffer before it ends: a body holds its buffers end to "
                               f"end, in order (a damaged message header?)")
        self._nodes = nodes
        self._buffers = buffers
        self._variadic = variadic
        self._decompressed = 0  # uncompressed bytes declared by the buffers decoded so far
        # (their indices, a decode tried again not counted again; compressed batches only)
        self._charged = set() if header.compression is not None else None
        self._budget_lock = threading.Lock() if header.compression is not None else None
        # (plain_column's per-column specs, when this batch can take that way at all)
        self._plain = plan.plain_specs if header.compression is None and not self.swap and \
            type(body) is BufferView and type(nodes) is StructPairs and \
            type(buffers) is StructPairs else None

    def _reserve(self, charges, quiet: bool = False) -> bool:
        """Add the declared sizes of buffers about to be decompressed (``charges``: pairs of
        buffer index and bytes) to the batch's running total, or raise (or, ``quiet``, return
        False) when the total would go beyond ``limits.max_batch_decompressed_size`` or the
        reader's budget (``budget``) refuses them; nothing is added then.  A buffer counts
        once, however often its decode is tried (a decode that failed, tried again by another
        thread or a later touch, never eats the budget of the batch's other columns)."""
        with self._budget_lock:
            charged = self._charged
            new = {i: n for i, n in charges if i not in charged}
            total = self._decompressed + sum(new.values())
            if total > limits.max_batch_decompressed_size:
                if quiet:
                    return False
                raise limits.exceeded("max_batch_decompressed_size", total,
                                      "decompressed bytes of the batch, this buffer included")
            if self.budget is not None and new and not self.budget(new, quiet):
                return False
            self._decompressed = total
            charged.update(new)
        return True

    def with_dictionaries(self, dictionaries: Callable[[int], Array]) -> "BatchLoader":
        """This loader taking its nested dictionaries from ``dictionaries``: a dictionary batch
        decoded again for a record batch with other dictionaries in force (``DictionaryMemo``).
        The message is not checked again; its decompressed buffers count once."""
        other = BatchLoader.__new__(BatchLoader)
        for name in BatchLoader.__slots__:
            setattr(other, name, getattr(self, name))
        other.dictionaries = dictionaries
        return other

    @property
    def num_rows(self) -> int:
        return self.header.length

    def c_export(self, offset: int, num_rows: int):
        """How the C data interface exports this loader's batch (rows ``offset`` to
        ``offset + num_rows``): ``(column exporter, owner)``.  The exporter walks undecoded
        columns from the message straight into C structs (None when they need decoding: a
        slice, a compressed body, a schema the walk leaves to the loader); the owner is what
        the exported struct keeps alive (the body: not the batch, its loader and header)."""
        walk = None
        if not offset and num_rows == self.header.length and self.header.compression is None:
            walk = self.plan.c_walk
        return walk, self.body

    def _first_buffer(self, k: int) -> int:
        plan = self.plan
        if k >= len(plan.buffer_starts):
            return len(self._buffers)
        vi = plan.view_starts[k]
        return plan.buffer_starts[k] + (int(self._variadic[:vi].sum()) if vi else 0)

    def prefetch(self, ks, then: Optional[Callable[[int, dict], None]] = None) -> Optional[dict]:
        """Decompress the buffers of columns ``ks`` together (in threads when it pays): a dict
        buffer index -> payload (or the error it raised) for ``column(k, decoded)``, so that
        loading them next costs no more decoding.  None for uncompressed batches.

        With ``then``, ``then(k, decoded)`` (what ``column(k, decoded)`` takes) runs as soon as
        column ``k``'s last buffer is decompressed, in that codec job: loaded and checked
        there, its buffers are still in the cache (after the whole batch, 45 MB in rows 2c
        and 1b, they were not); a column with no buffer, or a prefetch that returns None,
        has no call."""
        codec = self.header.compression
        if codec is None or not self.allow_copies:
            return None  # (refusing copies: the walk reports the first buffer that needs one)
        indices = []
        owners = []  # (the column of each buffer)
        for k in ks:
            first = len(indices)
            indices.extend(range(self._first_buffer(k), self._first_buffer(k + 1)))
            owners.extend([k] * (len(indices) - first))
        views = []
        charges = []
        for i in indices:
            offset, size = self._buffers.get(i)
            try:
                view = self.body.slice(offset, size)
            except ArrowInvalid:
                return None  # out of the body: the walk reports it where it belongs
            views.append(view)
            charges.append((i, max(compressed_size(view), 0)))
        if len(views) < 2 or not self._reserve(charges, quiet=True):
            return None  # (beyond the batch's budget: the walk names the buffer that goes over)
        if then is None:
            return dict(zip(indices, decompress_many(views, codec)))
        mine = {k: [i for i, o in zip(indices, owners) if o == k] for k in dict.fromkeys(owners)}
        return dict(zip(indices, decompress_many(
            views, codec, groups=owners, then=lambda k, out: then(k, dict(zip(mine[k], out))))))

    def gather_base(self) -> Optional[tuple]:
        """Where this batch's columns lie in its message, for ``_core._gather`` (one column of
        many batches copied together without an Array per batch): ``(nodes, buffers, body,
        length, node_starts, buffer_starts)``; None for a compressed or byte-swapped batch, or
        one whose vectors are not read from a mapping (those go through ``column``)."""
        plan = self.plan
        if self.header.compression is not None or self.swap:
            return None
        nodes, buffers, body = self._nodes, self._buffers, self.body
        if type(nodes) is not StructPairs or type(buffers) is not StructPairs or \
                type(body) is not BufferView:
            return None
        starts = plan.buffer_starts
        if plan.total_views:  # (variadic buffers of view columns shift the later columns')
            starts = tuple(self._first_buffer(k) for k in range(len(starts)))
        return (nodes, buffers, body, self.header.length, plan.node_starts, starts)

    def column(self, k: int, decoded: Optional[dict] = None) -> Array:
        """Decode top-level column ``k`` (and only it); ``decoded``: what ``prefetch`` gave
        for it, if it was called.  Safe to call from several threads at once (each call walks
        on its own; ``RecordBatch`` makes sure one column is decoded once)."""
        plan = self.plan
        fetch = getattr(self.body, "fetch", None)
        if fetch is not None:  # (a body read by byte ranges: this column's buffers in one read)
            buffers = self._buffers
            fetch([buffers.get(i) for i in range(self._first_buffer(k), self._first_buffer(k + 1))])
        if self.header.compression is None and not self.swap:
            spec = plan.fixed_columns[k]
            if spec is not None:
                array = self._fixed_column(k, spec)
                if array is not None:
                    return array
        elif decoded is None and self.header.compression is not None:
            decoded = self.prefetch((k,))
        walk = _Walk(self, plan.node_starts[k], self._first_buffer(k), plan.view_starts[k],
                     decoded)
        f = plan.schema.fields[k]
        path = _Path(self.where, k, f.name)
        loaded = 0
        try:
            array = walk._load(f, path)
            if array.length != self.header.length:
                raise ArrowInvalid(f"{path}: column length {array.length} differs from the "
                                   f"batch length {self.header.length}")
            if self.header.compression is not None:
                # (checked here, on the decoding thread, while the bytes just decompressed are
                # in the cache: the verdict stays on the column, and its exports check nothing)
                prove_decoded(array)
            loaded = 1
        finally:
            self.stats.add(walk.stats, loaded)
        return array

    def plain_column(self, k: int, publish: Callable[[int, Array], tuple]) -> Optional[Array]:
        """Top-level column ``k`` when it is a plain fixed-width column of an uncompressed,
        native batch over mapped memory, read and checked in C (``plain_fixed_parts``), else
        None (``column`` loads it).  Cheap, so ``RecordBatch`` calls it without taking the
        column's lock: threads racing on one column may each build an Array, ``publish(k,
        array)`` returns the column the batch kept (the first) and whether it is this call's,
        and only that one is counted."""
        specs = self._plain
        if specs is None or specs[k] is None:
            return None
        cls, dtype, align, width, ni, bi = specs[k]
        length = self.header.length
        parts = plain_fixed_parts(self._nodes, self._buffers, ni, bi, length, self.body,
                                  width, align)
        if parts is None:
            return None
        array = cls(dtype, length, parts[1:], (), parts[0])
        kept, won = publish(k, array)
        if won:
            stats = self.stats
            with stats._lock:
                stats.columns_loaded += 1
        return kept

    def _fixed_column(self, k: int, spec) -> Optional[Array]:
        """Plain fixed-width column ``k`` of an uncompressed native batch, built without a
        walk (the per-column cost of a wide batch is mostly the walk's Python overhead), or
        None when anything is unusual (out of range, misaligned, wrong length): the walk then
        loads it, or names what is wrong exactly as it does for every other column."""
        cls, dtype, align, width = spec
        plan = self.plan
        vi = plan.view_starts[k]
        bi = plan.buffer_starts[k] + (int(self._variadic[:vi].sum()) if vi else 0)
        nodes, buffers, body = self._nodes, self._buffers, self.body
        length = self.header.length
        if type(nodes) is StructPairs and type(buffers) is StructPairs and \
                type(body) is BufferView:  # (read and checked in C: the usual case)
            parts = plain_fixed_parts(nodes, buffers, plan.node_starts[k], bi, length, body,
                                      width, align)
            if parts is None:
                return None
            nulls, validity, values = parts
        else:
            nlength, nulls = nodes.get(plan.node_starts[k])
            if nlength != length or length < 0 or nulls < 0 or nulls > length:
                return None
            try:
                validity = body.slice(*buffers.get(bi))
                values = body.slice(*buffers.get(bi + 1))
            except ArrowInvalid:
                return None
            # (PrimitiveArray._check_structure's checks, for offset 0: the walk repeats them)
            if values.size < length * width or \
                    (nulls and validity.size < (length + 7) >> 3) or \
                    (values.size and not values.is_aligned(align)):
                return None
            if not nulls:
                validity = None
        stats = self.stats
        with stats._lock:
            stats.columns_loaded += 1
        return cls(dtype, length, (validity, values), (), nulls)


_FIXED_TYPES = frozenset({t.IntType, t.FloatType, t.DecimalType, t.DateType, t.TimeType,
                          t.TimestampType, t.DurationType, t.IntervalType})

_NOTHING_DECODED = {}  # (only ever popped from: shared by the walks without prefetched buffers)


class _Walk:
    """One depth-first walk over a column's field nodes and buffers: the cursors, the buffers
    ``prefetch`` decoded, and what the walk cost, local to one ``BatchLoader.column`` call."""

    __slots__ = ("loader", "plan", "header", "body", "dictionaries", "swap", "allow_copies", "stats",
                 "_nodes", "_buffers", "_variadic", "_ni", "_bi", "_vi", "_decoded")

    def __init__(self, loader: BatchLoader, ni: int, bi: int, vi: int, decoded: Optional[dict]):
        self.loader = loader
        self.plan = loader.plan
        self.header = loader.header
        self.body = loader.body
        self.dictionaries = loader.dictionaries
        self.swap = loader.swap
        self.allow_copies = loader.allow_copies
        self.stats = None  # a LoadStats once the walk copies or decompresses something
        self._nodes = loader._nodes
        self._buffers = loader._buffers
        self._variadic = loader._variadic
        self._ni = ni
        self._bi = bi
        self._vi = vi
        self._decoded = decoded if decoded is not None else _NOTHING_DECODED

    def _stats(self) -> LoadStats:
        stats = self.stats
        if stats is None:
            stats = self.stats = LoadStats()
        return stats

    # -- cursors ---------------------------------------------------------------------------
    def _node(self, path):
        i = self._ni
        self._ni = i + 1
        length, null_count = self._nodes.get(i)
        if length < 0 or null_count < 0 or null_count > length:
            raise ArrowInvalid(f"{path}: field node {i} has length {length}, null count {null_count}")
        return length, null_count

    def _refuse_copy(self, path, what, i, reason):
        raise ArrowInvalid(f"{path}: {what} (buffer {i}) would have to be {reason}, and copies "
                           f"are refused (allow_copies=False)")

    def _buffer(self, path, what, align: int = 8) -> BufferView:
        i = self._bi
        self._bi = i + 1
        try:
            codec = self.header.compression
            out = self._decoded.pop(i, None)
            if out is None:
                offset, size = self._buffers.get(i)
                view = self.body.slice(offset, size)
                if codec is not None:
                    declared = compressed_size(view)
                    if declared > 0:
                        if not self.allow_copies:
                            raise ArrowInvalid(f"would have to be decompressed ({codec}), and "
                                               f"copies are refused (allow_copies=False)")
                        if declared <= limits.max_decompressed_size:  # (else refused just below)
                            self.loader._reserve(((i, declared),))
                    out = decompress_payload(view, codec, "buffer")
                else:
                    out = view
            if isinstance(out, BaseException):
                raise out
            if isinstance(out, BufferView):
                view = out  # uncompressed, or stored raw in a compressed body: borrowed
            else:
                view = copied_view(out, f"decompressed ({codec})")
                stats = self._stats()
                stats.buffers_decompressed += 1
                stats.bytes_decompressed += view.size
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {what} (buffer {i}): {exc}") from None
        if align > 1 and view.size and not view.is_aligned(align):
            if not self.allow_copies:
                self._refuse_copy(path, what, i, f"copied to {align}-byte aligned memory "
                                                 f"(it starts at byte {view.offset})")
            view = copied_view(as_view(view, copy=True), "re-aligned")
            stats = self._stats()
            stats.buffers_copied += 1
            stats.bytes_copied += view.size
        return view

    def _typed_buffer(self, path, what, kind, align: int = 8) -> BufferView:
        """A buffer of multi-byte values: swapped to native order when the file is not native."""
        view = self._buffer(path, what, align)
        if self.swap and kind not in (None, 1) and view.size:
            if not self.allow_copies:
                self._refuse_copy(path, what, self._bi - 1, "byte-swapped from big-endian")
            try:
                view = copied_view(byteswap(view, kind), "byte-swapped")
            except ArrowInvalid as exc:
                raise ArrowInvalid(f"{path}: {what}: {exc}") from None
            self._stats().buffers_swapped += 1
        return view

    def _validity(self, path, null_count):
        buf = self._buffer(path, "validity bitmap", 1)
        return buf if null_count else None

    # -- per type ---------------------------------------------------------------------------
    def _load(self, f: t.Field, path: str) -> Array:
        dtype = f.storage_type
        loader = _LOADERS.get(type(dtype))
        if loader is None:
            raise ArrowNotImplementedError(f"{path}: cannot load type {dtype}")
        array = loader(self, f, dtype, path)
        array._check_structure(path)
        return array

    def _load_null(self, f, dtype, path):
        length, _ = self._node(path)
        return make_array(dtype, length, [], null_count=length)

    def _load_fixed(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        align = 1 if isinstance(dtype, t.FixedSizeBinaryType) else min(dtype.byte_width, 8)
        if self.swap:
            data = self._typed_buffer(path, "values", swap_kind(dtype), align)
        else:
            data = self._buffer(path, "values", align)
        return array_class(dtype)(dtype, length, (validity, data), (), nulls)

    def _load_bool(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        return make_array(dtype, length, [validity, self._buffer(path, "values", 1)], null_count=nulls)

    def _load_binary_view(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        views = self._typed_buffer(path, "views", "views")
        vi = self._vi
        self._vi = vi + 1
        count = int(self._variadic[vi])
        data = [self._buffer(path, f"variadic data {j}", 1) for j in range(count)]
        return make_array(dtype, length, [validity, views] + data, null_count=nulls)

    def _load_binary(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        width = dtype.offset_dtype.itemsize
        offsets = self._typed_buffer(path, "offsets", width, width)
        data = self._buffer(path, "data", 1)
        return make_array(dtype, length, [validity, offsets, data], null_count=nulls)

    def _load_list(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        width = dtype.offset_dtype.itemsize
        buffers = [validity, self._typed_buffer(path, "offsets", width, width)]
        if isinstance(dtype, t.ListViewType):
            buffers.append(self._typed_buffer(path, "sizes", width, width))
        child = self._load(dtype.value_field, _Path(path, None, dtype.value_field.name))
        return make_array(dtype, length, buffers, [child], null_count=nulls)

    def _load_fixed_size_list(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        child = self._load(dtype.value_field, _Path(path, None, dtype.value_field.name))
        return make_array(dtype, length, [validity], [child], null_count=nulls)

    def _load_struct(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        children = [self._load(c, _Path(path, None, c.name)) for c in dtype.fields]
        return make_array(dtype, length, [validity], children, null_count=nulls)

    def _load_union(self, f, dtype, path):
        length, nulls = self._node(path)
        if self.plan.version < MetadataVersion.V5:
            legacy_validity = self._buffer(path, "pre-1.0 union validity", 1)
            if nulls and legacy_validity.size:
                raise ArrowNotImplementedError(
                    f"{path}: pre-1.0 (V4) union with a top-level validity bitmap and {nulls} null(s)")
        buffers = [self._buffer(path, "type ids", 1)]
        if dtype.mode == "dense":
            buffers.append(self._typed_buffer(path, "offsets", 4, 4))
        children = [self._load(c, _Path(path, None, c.name)) for c in dtype.fields]
        return make_array(dtype, length, buffers, children, null_count=0)

    def _load_dictionary(self, f, dtype, path):
        length, nulls = self._node(path)
        validity = self._validity(path, nulls)
        width = dtype.index_type.byte_width
        indices = self._typed_buffer(path, "indices", width, width)
        if f.dictionary_id is None:
            raise ArrowInvalid(f"{path}: dictionary-encoded field without a dictionary id")
        dictionary = self.dictionaries(f.dictionary_id)
        if dictionary.type != dtype.value_type:
            raise ArrowInvalid(f"{path}: dictionary {f.dictionary_id} holds {dictionary.type}, "
                               f"the field needs {dtype.value_type}")
        return make_array(dtype, length, [validity, indices], null_count=nulls, dictionary=dictionary)

    def _load_run_end_encoded(self, f, dtype, path):
        length, nulls = self._node(path)
        if nulls:
            raise ArrowInvalid(f"{path}: run_end_encoded node declares {nulls} nulls (must be 0)")
        if self.plan.version < MetadataVersion.V5:
            self._buffer(path, "V4 validity slot", 1)  # present under V4, never used
        ends = self._load(dtype.run_end_field, _Path(path, None, "run_ends"))
        values = self._load(dtype.value_field, _Path(path, None, "values"))
        return make_array(dtype, length, [], [ends, values], null_count=0)


_LOADERS = {
    t.NullType: _Walk._load_null,
    t.BoolType: _Walk._load_bool,
    t.IntType: _Walk._load_fixed,
    t.FloatType: _Walk._load_fixed,
    t.DecimalType: _Walk._load_fixed,
    t.DateType: _Walk._load_fixed,
    t.TimeType: _Walk._load_fixed,
    t.TimestampType: _Walk._load_fixed,
    t.DurationType: _Walk._load_fixed,
    t.IntervalType: _Walk._load_fixed,
    t.FixedSizeBinaryType: _Walk._load_fixed,
    t.BinaryType: _Walk._load_binary,
    t.BinaryViewType: _Walk._load_binary_view,
    t.ListType: _Walk._load_list,
    t.ListViewType: _Walk._load_list,
    t.MapType: _Walk._load_list,
    t.FixedSizeListType: _Walk._load_fixed_size_list,
    t.StructType: _Walk._load_struct,
    t.UnionType: _Walk._load_union,
    t.DictionaryType: _Walk._load_dictionary,
    t.RunEndEncodedType: _Walk._load_run_end_encoded,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"IPC loader": _LOADERS}
