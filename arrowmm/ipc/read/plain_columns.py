"""Record batches of a few plain fixed-width columns built at once, without a loader.

Why: a lazy batch (``MessageBatchDecoder.plain_record_batch``) pays for its laziness with a
header record, a ``BatchLoader`` and, at the first touch of a column, the loader's lock-free
path and the batch's publication of the column: for a one-row batch of a column or two (a
shared-memory channel's small messages) that is most of the consumer's work, and every
column is touched anyway.  A schema of at most ``MAX_COLUMNS`` plain fixed-width columns
(integers, floats, decimals, temporal types) has each column read and checked in C
(``_batch_walk.plain_fixed_parts``, the loader's own check) and made an Array at once: two
Python objects per column and the batch.  Anything unusual (a buffer out of the body, too
small, misaligned, overlapping the one before, a length other than the batch's) gives None,
and the caller makes the lazy batch, whose loader reports it exactly as for any message.
"""
from __future__ import annotations

from typing import Optional

from ... import types as t
from ...arrays.batch import RecordBatch
from ...format import MetadataVersion
from ..core.byteorder import NATIVE
from ._batch_walk import overlapping_buffer, plain_fixed_parts
from .loader import SchemaPlan

__all__ = ["PlainColumns", "MAX_COLUMNS"]

#: The widest schema built at once: beyond it a lazy batch's one-column-at-a-time decoding
#: pays (a reader of one column of many decodes only that one).
MAX_COLUMNS = 8


class PlainColumns:
    """Batches of ``schema`` made with their columns built (``batch``), when the schema is
    at most ``MAX_COLUMNS`` plain fixed-width columns in this machine's byte order
    (``usable``); see the module doc.

    Examples
    --------
    >>> import arrowmm
    >>> PlainColumns(arrowmm.schema([("x", arrowmm.int64())])).usable
    True
    >>> PlainColumns(arrowmm.schema([("s", arrowmm.string())])).usable
    False
    """

    __slots__ = ("schema", "specs")

    def __init__(self, schema: t.Schema):
        self.schema = schema
        specs = SchemaPlan.build(schema, MetadataVersion.V5).plain_specs
        usable = (0 < len(specs) <= MAX_COLUMNS and all(s is not None for s in specs)
                  and not any(e is not None for e in schema.extension_types())
                  and schema.endianness == NATIVE)
        self.specs = specs if usable else None

    @property
    def usable(self) -> bool:
        """Whether ``batch`` can build this schema's batches."""
        return self.specs is not None

    def batch(self, num_rows: int, nodes, buffers, body) -> Optional[RecordBatch]:
        """The batch of a plain message of ``num_rows`` rows whose ``nodes`` and ``buffers``
        (``StructPairs`` of the header's vectors, of the schema's counts) lie in ``body`` (a
        ``BufferView``), every column built and checked; None when the schema is not
        ``usable`` or anything in the message is unusual (the lazy batch says what)."""
        specs = self.specs
        if specs is None or overlapping_buffer(buffers) >= 0:
            return None
        columns = []
        for cls, dtype, align, width, ni, bi in specs:
            parts = plain_fixed_parts(nodes, buffers, ni, bi, num_rows, body, width, align)
            if parts is None:
                return None
            columns.append(cls(dtype, num_rows, parts[1:], (), parts[0]))
        return RecordBatch(self.schema, num_rows, columns)
