"""A record batch built in place in a channel's slot (``Channel.reserve``): no copy at all.

Why: ``send`` copies each batch once into the ring; for a producer that makes its data (a
sensor feed, a reader decoding into memory) that copy is the cost left, and the data could
as well be made where it goes.  ``reserve`` takes the next slot, lays out the header of the
schema's template with the sizes of every buffer, and hands numpy arrays that *are* the
slot's buffers; ``commit`` counts the nulls, checks the offsets and publishes the batch,
``abort`` (or an exception in the ``with`` block) publishes nothing and the slot is used by
the next batch.  Consumers are unchanged: the message is the one ``send`` would lay out.

Columns: fixed-width types (integers, floats, decimals, dates, times, timestamps,
durations, intervals), booleans and (large) strings and binaries, each with a validity
bitmap.  Nested and dictionary columns are refused (``send`` takes them).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from .. import types as t
from .._core._bitmap import count_set_bits
from .._core._utf8 import check_utf8_offsets
from ..errors import ArrowInvalid
from ..format.batch_header import RecordBatchTemplate

__all__ = ["SlotBatch", "slot_plan"]

_ALIGN = 64  # (as SharedMap.write_batch lays out bodies: every buffer 64-byte aligned)
_FIXED = (t.IntType, t.FloatType, t.DecimalType, t.DateType, t.TimeType, t.TimestampType,
          t.DurationType, t.IntervalType)


def _padded(n: int) -> int:
    return n + (-n & (_ALIGN - 1))


def slot_plan(schema: t.Schema, num_rows: int, data_sizes: Optional[Dict[str, int]],
              where: str) -> List[tuple]:
    """Per column ``(name, kind, [buffer sizes])`` for ``num_rows`` rows: kind ``"fixed"``
    (validity, values), ``"bool"`` (validity, bits) or ``"binary"`` (validity, offsets, data
    of ``data_sizes[name]`` bytes).  ``ArrowInvalid`` for a column type built elsewhere, a
    missing or unknown data size."""
    if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
        raise ArrowInvalid(f"{where}: num_rows must be an int >= 0, got {num_rows!r}")
    sizes = dict(data_sizes or {})
    bits = (num_rows + 7) // 8
    plan = []
    for field in schema:
        dtype, name = field.type, field.name
        if isinstance(dtype, _FIXED):
            plan.append((name, "fixed", [bits, num_rows * dtype.byte_width]))
        elif isinstance(dtype, t.BoolType):
            plan.append((name, "bool", [bits, bits]))
        elif isinstance(dtype, t.BinaryType):
            if name not in sizes:
                raise ArrowInvalid(f"{where}: column {name!r} ({dtype}) needs its data size in "
                                   f"bytes: reserve(num_rows, {{{name!r}: nbytes}})")
            nbytes = sizes.pop(name)
            if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
                raise ArrowInvalid(f"{where}: data size of {name!r} must be an int >= 0, got "
                                   f"{nbytes!r}")
            if dtype.offset_dtype.itemsize == 4 and nbytes > 2**31 - 1:  # (no offset reaches
                raise ArrowInvalid(  # the end of such data)
                    f"{where}: data size of {name!r} is {nbytes:,} bytes; {dtype}'s 32-bit "
                    f"offsets reach {2**31 - 1:,} (large_{dtype} reaches past)")
            plan.append((name, "binary",
                         [bits, (num_rows + 1) * dtype.offset_dtype.itemsize, nbytes]))
        else:
            raise ArrowInvalid(f"{where}: column {name!r} is {dtype}: reserve builds fixed-width, "
                               f"boolean, string and binary columns (send takes the others)")
    if sizes:
        raise ArrowInvalid(f"{where}: data sizes given for {sorted(sizes)}, which are not string "
                           f"or binary columns of the channel")
    return plan


class SlotBatch:
    """A batch being built in a channel's slot (``Channel.reserve``); use it as a context
    manager: the end of the ``with`` block commits, an exception aborts.

    ``values(name)``: the column's values as a writable numpy array over the slot (fixed-width
    columns: ``num_rows`` values of the column's numpy type; booleans: the packed bits, LSB
    first, as ``uint8``).  ``validity(name)``: its bitmap (``uint8``, LSB first), every row
    valid to begin with.  ``offsets(name)``/``data(name)``: a string or binary column's
    ``num_rows + 1`` offsets (zeros to begin with) and its ``uint8`` data bytes.  Fill them,
    then ``commit()``: the batch is published and its number returned.  The arrays become
    read-only then (consumers read the slot in place, and a later batch reuses it), and after
    an abort; a view the caller derived from one of them is the caller's to stop writing.
    """

    def __init__(self, channel, plan, template: RecordBatchTemplate, num_rows: int,
                 mapping, start: int, n: int, s: int, finish):
        self.num_rows = num_rows
        self.sequence: Optional[int] = None
        self._channel_name = channel.name
        self._segment = channel._seg  # (checked before the commit reads the slot)
        self._plan = plan
        self._tpl = template
        self._start = start
        self._n, self._s = n, s
        self._finish = finish  # finish(publish: bool, nbytes) -> releases the channel
        self._done = False
        self._arrays = {}
        self._handed: list = []  # every array given out, made read-only at commit or abort
        header = bytearray(template.header)
        body = 0
        layout = []
        for k, (name, kind, sizes) in enumerate(plan):
            header[template.nodes_at + 16 * k:template.nodes_at + 16 * k + 8] = \
                num_rows.to_bytes(8, "little")
            for size in sizes:
                layout.append((body, size))
                body += _padded(size)
        for i, (offset, size) in enumerate(layout):
            at = template.buffers_at + 16 * i
            header[at:at + 16] = offset.to_bytes(8, "little") + size.to_bytes(8, "little")
        header[template.rows_at:template.rows_at + 8] = num_rows.to_bytes(8, "little")
        header[template.body_at:template.body_at + 8] = body.to_bytes(8, "little")
        self.nbytes = len(header) + body
        mv = memoryview(mapping)
        mv[start:start + len(header)] = header
        data = start + len(header)
        i = 0
        for name, kind, sizes in plan:
            views = []
            for size in sizes:
                offset, _ = layout[i]
                at = data + offset
                pad = _padded(size) - size
                if pad:
                    mv[at + size:at + size + pad] = bytes(pad)  # (padding is zero, as send's)
                views.append(np.frombuffer(mapping, np.uint8, size, at))
                i += 1
            views[0][:] = 0xFF  # every row valid until the producer says otherwise
            if num_rows % 8:
                views[0][-1] = (1 << (num_rows % 8)) - 1
            if kind == "binary":
                views[1][:] = 0  # (offsets all 0: empty values, until the producer writes)
            self._arrays[name] = (kind, views)
        mv.release()
        self._types = {f.name: f.type for f in channel.schema}

    def _column(self, name: str, kinds):
        self._check_open()
        got = self._arrays.get(name)
        if got is None:
            raise ArrowInvalid(f"channel {self._channel_name!r}: no column {name!r} in the "
                               f"batch being built (columns: {list(self._arrays)})")
        if got[0] not in kinds:
            raise ArrowInvalid(f"channel {self._channel_name!r}: column {name!r} is "
                               f"{self._types[name]}, which has no such buffer here")
        return got[1]

    def validity(self, name: str) -> np.ndarray:
        """Column ``name``'s validity bitmap in the slot, writable bytes (all rows valid
        until cleared: bit ``i`` of the bytes is row ``i``)."""
        return self._hand(self._column(name, ("fixed", "bool", "binary"))[0])

    def values(self, name: str) -> np.ndarray:
        """Column ``name``'s values buffer in the slot, writable, typed as the column (a
        boolean column's packed bits as bytes); fixed-width and boolean columns only."""
        kind, views = self._arrays.get(name, (None, None))
        buf = self._column(name, ("fixed", "bool"))[1]
        if kind == "bool":
            return self._hand(buf)
        dtype = self._types[name]
        np_dtype = getattr(dtype, "numpy_dtype", None) or np.dtype(f"V{dtype.byte_width}")
        return self._hand(buf.view(np_dtype) if buf.size else np.zeros(0, np_dtype))

    def offsets(self, name: str) -> np.ndarray:
        """Binary/string column ``name``'s offsets in the slot, writable (all zero at first:
        every value empty)."""
        buf = self._column(name, ("binary",))[1]
        return self._hand(buf.view(self._types[name].offset_dtype))

    def data(self, name: str) -> np.ndarray:
        """Binary/string column ``name``'s value bytes in the slot, writable."""
        return self._hand(self._column(name, ("binary",))[2])

    def __getitem__(self, name: str) -> np.ndarray:
        """``batch[name]``: ``values(name)`` (fixed-width and boolean columns)."""
        return self.values(name)

    def _hand(self, array: np.ndarray) -> np.ndarray:
        self._handed.append(array)
        return array

    def _seal(self) -> None:
        """Make every array given out read-only: the slot is published (or goes to the next
        batch), and a write through a kept array would change what consumers read."""
        for array in self._handed:
            array.flags.writeable = False
        self._handed = []

    def _check_open(self) -> None:
        if self._done:
            raise ArrowInvalid(f"channel {self._channel_name!r}: this reserved batch was "
                               f"{'committed' if self.sequence is not None else 'aborted'}")

    def commit(self) -> int:
        """Count each column's nulls, check string offsets and UTF-8, publish; returns the
        batch's number.  ``ArrowInvalid`` (and nothing published: the reservation is aborted)
        when an offset goes backwards or past its data, or a string column's value (not null)
        is not valid UTF-8, as ``send`` refuses it."""
        self._check_open()
        self._seal()  # (before the checks: what they pass is what is published)
        rows = self.num_rows
        nulls = []
        try:
            self._segment.check()  # (cut short meanwhile: reading the slot would be SIGBUS)
            for name, (kind, views) in self._arrays.items():
                nulls.append(rows - count_set_bits(views[0], 0, rows) if rows else 0)
                if kind == "binary":
                    offs = views[1].view(self._types[name].offset_dtype)
                    if rows and (offs[0] < 0 or np.any(offs[1:] < offs[:-1])
                                 or offs[-1] > views[2].size):
                        raise ArrowInvalid(
                            f"channel {self._channel_name!r}: column {name!r}: offsets must "
                            f"rise from >= 0 to at most the {views[2].size} data bytes reserved "
                            f"(first {int(offs[0])}, last {int(offs[-1])})")
                    if rows and self._types[name].utf8:
                        try:
                            check_utf8_offsets(views[2], offs, rows,
                                               views[0] if nulls[-1] else None, 0, name)
                        except ArrowInvalid as exc:
                            raise ArrowInvalid(f"channel {self._channel_name!r}: column "
                                               f"{name!r}: {exc}") from None
        except BaseException:
            self.abort()
            raise
        self._done = True
        self.sequence = self._finish(True, self.nbytes, nulls)
        self._arrays = {}
        return self.sequence

    def abort(self) -> None:
        """Publish nothing; the slot goes to the next batch (idempotent)."""
        if self._done:
            return
        self._done = True
        self._seal()
        self._arrays = {}
        self._finish(False, 0, None)

    def __del__(self):
        # (a reservation dropped without commit or abort: nothing is published, and the
        # channel is not left locked)
        try:
            self.abort()
        except Exception:  # noqa: BLE001  # pragma: no cover (interpreter shutdown)
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __repr__(self):
        state = ("committed" if self.sequence is not None else
                 "aborted" if self._done else "open")
        return (f"<arrowmm.shm.SlotBatch of {self._channel_name!r}: {self.num_rows} rows, "
                f"{self.nbytes} bytes, {state}>")
