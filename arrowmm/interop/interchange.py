"""Arrow streams from any producer, and the ``requested_schema`` rules of the PyCapsule interface.

Why this module exists: ``RecordBatchReader`` is the public face of a foreign
``ArrowArrayStream`` (pyarrow tables and readers, polars frames, duckdb
results, another arrowmm reader): batches come out as arrowmm ``RecordBatch``
objects over the producer's memory, and the reader exports itself again as a
stream.  The request helpers decide what an exporter does when a consumer asks
for a schema: the same data under other names, nullability or metadata is
served as asked (the buffers are unchanged); another type is served by casting
to it, as pyarrow does; a request that does not describe the same columns is
``ArrowInvalid``.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Optional

from .. import types as t
from ..arrays.batch import RecordBatch, SequentialBatches
from ..errors import ArrowInvalid
from ._cdata import import_schema, import_stream
from ..arrays.pandas_compat import PandasConvertible
from ..arrays.table import Table
from ._cdata import export_schema, export_stream

__all__ = ["RecordBatchReader"]


def _cast_batches(batches: Iterable[RecordBatch], schema: t.Schema) -> Iterator[RecordBatch]:
    """Each batch with ``schema``'s types, its columns cast as ``Array.cast`` casts them."""
    for batch in batches:
        yield RecordBatch.from_arrays([batch.column(k).cast(f.type) for k, f in enumerate(schema)],
                                      schema=schema, metadata=batch.metadata)


class RecordBatchReader(SequentialBatches, PandasConvertible):
    """Record batches pulled from an Arrow C stream, wrapping the producer's memory (no copy).

    Make one with ``RecordBatchReader.from_stream(obj)`` (any object with
    ``__arrow_c_stream__``: a pyarrow Table or RecordBatchReader, a polars
    DataFrame, a duckdb result, an arrowmm reader) or
    ``RecordBatchReader.from_batches(schema, batches)``.  Iterating gives
    arrowmm ``RecordBatch`` objects that stay valid after the reader is
    closed.  ``close()`` (also at the end of a ``with`` block, or when the
    reader is collected) releases the foreign stream exactly once.  The reader
    is itself a stream producer, so ``pyarrow.table(reader)`` consumes it.

    Examples
    --------
    >>> import arrowmm
    >>> src = arrowmm.RecordBatchReader.from_batches(
    ...     arrowmm.schema([("x", arrowmm.int64())]), [arrowmm.record_batch({"x": [1, 2]})])
    >>> with arrowmm.RecordBatchReader.from_stream(src) as reader:
    ...     [b.to_pydict() for b in reader]
    [{'x': [1, 2]}]
    """

    def __init__(self, schema: t.Schema, batches: Iterator[RecordBatch], source=None):
        self._schema = schema
        self._batches = batches
        self._source = source  # the imported stream (closed with the reader), or None
        self._closed = False
        self._failure: Optional[Exception] = None  # the first read's error, raised again

    @classmethod
    def from_stream(cls, data, schema: Optional[t.Schema] = None) -> "RecordBatchReader":
        """Import ``data``'s ``__arrow_c_stream__`` (or an ``"arrow_array_stream"`` capsule).

        ``schema`` is passed to the producer as ``requested_schema``; if the
        producer's stream has other types under the same names, its batches are
        cast to ``schema`` as they are read (as pyarrow does); other names are
        ``ArrowInvalid``.
        """
        requested = wanted = None
        if schema is not None:
            if not hasattr(schema, "__arrow_c_schema__"):
                raise ArrowInvalid(f"schema must be a Schema (or have __arrow_c_schema__), "
                                   f"got {type(schema).__name__}")
            wanted = import_schema(schema.__arrow_c_schema__())
            requested = schema.__arrow_c_schema__()  # the producer may consume this one
        if hasattr(data, "__arrow_c_stream__"):
            capsule = data.__arrow_c_stream__(requested) if requested is not None else \
                data.__arrow_c_stream__()
        elif type(data).__name__ == "PyCapsule":
            capsule = data
        else:
            raise ArrowInvalid(f"RecordBatchReader.from_stream needs an object with "
                               f"__arrow_c_stream__, got {type(data).__name__}")
        stream = import_stream(capsule)
        if wanted is not None and wanted.types != stream.schema.types:
            if wanted.names != stream.schema.names:
                stream.close()
                raise ArrowInvalid(f"the stream has schema\n{stream.schema}\nnot the requested\n"
                                   f"{wanted}\n(a request may change types, not which columns "
                                   f"there are)")
            return cls(wanted, _cast_batches(stream, wanted), stream)
        return cls(stream.schema, stream, stream)

    @classmethod
    def from_batches(cls, schema: t.Schema, batches: Iterable[RecordBatch]) -> "RecordBatchReader":
        """A reader over arrowmm batches (each must have ``schema``), pulled lazily."""
        if not isinstance(schema, t.Schema):
            raise ArrowInvalid(f"schema must be an arrowmm Schema, got {type(schema).__name__}")
        return cls(schema, _checked_batches(schema, batches))

    @property
    def schema(self) -> t.Schema:
        """The schema every batch has."""
        return self._schema

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called (or the ``with`` block left)."""
        return self._closed

    def read_next_batch(self) -> RecordBatch:
        """The next batch; ``StopIteration`` at the end of the stream.  After an error every
        later call raises it again: the batch that failed is gone, so reading on would give a
        table that looks whole (a generator that raised ends, which reads as a clean end)."""
        if self._closed:
            raise ArrowInvalid("the reader is closed")
        if self._failure is not None:
            raise self._failure.with_traceback(None)
        try:
            return next(self._batches)
        except StopIteration:
            raise
        except Exception as exc:
            self._failure = exc
            raise

    def read_all(self) -> Table:
        """Every remaining batch, in order, as an ``arrowmm.Table`` (as pyarrow's)."""
        return Table(self.schema, list(self))

    def _pandas_batches(self):
        return list(self)

    def close(self) -> None:
        """Release the producer's stream now (idempotent); batches already read stay valid."""
        self._closed = True
        if self._source is not None:
            self._source.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<arrowmm.RecordBatchReader{' (closed)' if self._closed else ''}>\n{self._schema}"

    def __arrow_c_schema__(self):
        return export_schema(self._schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """Export the remaining batches as a stream (consuming this reader, as pyarrow does)."""
        if self._closed:
            raise ArrowInvalid("the reader is closed")
        if self._failure is not None:  # (here, rather than at the consumer's first get_next)
            raise self._failure.with_traceback(None)
        return export_stream(self._schema, iter(self), requested_schema)


def _checked_batches(schema: t.Schema, batches: Iterable[RecordBatch]) -> Iterator[RecordBatch]:
    for i, batch in enumerate(batches):
        if not isinstance(batch, RecordBatch):
            raise ArrowInvalid(f"batch {i} is a {type(batch).__name__}, not an arrowmm RecordBatch")
        if not batch.schema.equals(schema):
            raise ArrowInvalid(f"batch {i} has schema {batch.schema.types}, the reader "
                               f"{schema.types}")
        yield batch

