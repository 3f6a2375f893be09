"""Projection at open: a reader that exposes some columns of a file, in a given order.

``resolve_columns`` turns what a user passes as ``columns=`` (names, indices, or dotted paths
into struct columns: ``"s.a"``) into what to read of the file's schema, with errors that name
the column asked for and the ones there are; ``ProjectedLoader`` makes a batch's column ``k``
that column of the file (or that field of a struct column), decoded lazily like any other:
the columns not asked for are never decoded.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ... import types as t
from ...arrays.field_paths import nested_field, struct_field_path
from ...errors import ArrowInvalid

__all__ = ["resolve_columns", "project_schema", "ProjectedLoader"]


def resolve_columns(schema: t.Schema, columns) -> list:
    """What to read for each of ``columns``: an index into ``schema`` (a name or an index,
    negative from the end), or ``(index, path, name)`` for a dotted path into a struct column
    (a top-level column of that exact name wins)."""
    if isinstance(columns, (str, bytes, int)) or not hasattr(columns, "__iter__"):
        raise ArrowInvalid(f"columns must be a list of column names or indices, got "
                           f"{type(columns).__name__} {columns!r}")
    names = schema.names
    out = []
    for c in columns:
        if isinstance(c, bool) or not isinstance(c, (str, int)):
            raise ArrowInvalid(f"columns: {c!r} is a {type(c).__name__}; a column is named by "
                               f"its name (str) or its index (int)")
        if isinstance(c, int):
            k = c + len(names) if c < 0 else c
            if not 0 <= k < len(names):
                raise ArrowInvalid(f"columns: index {c} out of range for a schema of "
                                   f"{len(names)} columns {names}")
            out.append(k)
            continue
        hits = [k for k, n in enumerate(names) if n == c]
        if len(hits) == 1:
            out.append(hits[0])
        elif hits:
            raise ArrowInvalid(f"columns: {c!r} names {len(hits)} columns of the schema; "
                               f"pick one by its index {hits}")
        elif "." in c and c.split(".", 1)[0] in names:
            top, *path = c.split(".")
            k = resolve_columns(schema, [top])[0]
            nested_field(schema.fields[k], path, c)  # (checks the path: ArrowInvalid if wrong)
            out.append((k, tuple(path), c))
        else:
            raise ArrowInvalid(f"columns: no column named {c!r}; the schema has {names}")
    return out


def project_schema(schema: t.Schema, indices: Sequence) -> t.Schema:
    """The fields ``indices`` (as ``resolve_columns`` gives them) of ``schema``, its metadata
    and byte order kept; a struct field's path is named as it was asked for (``"s.a"``)."""
    return t.Schema([schema.fields[k] if isinstance(k, int) else
                     nested_field(schema.fields[k[0]], k[1], k[2]) for k in indices],
                    schema.metadata, endianness=schema.endianness)


def _top(k) -> int:
    return k if isinstance(k, int) else k[0]


class ProjectedLoader:
    """A batch loader whose column ``k`` is column ``indices[k]`` of ``loader`` (a
    ``BatchLoader``): decoding one decodes that column only."""

    __slots__ = ("loader", "indices")

    def __init__(self, loader, indices: Sequence[int]):
        self.loader = loader
        self.indices = tuple(indices)

    @property
    def num_rows(self) -> int:
        return self.loader.num_rows

    @property
    def header(self):
        return self.loader.header

    def prefetch(self, ks, then=None) -> Optional[dict]:
        tops = {}  # (top column -> the first of ``ks`` reading it: ``then`` is that one's)
        for k in ks:
            tops.setdefault(_top(self.indices[k]), k)
        return self.loader.prefetch(sorted(tops), None if then is None else
                                    lambda top, decoded: then(tops[top], decoded))

    def column(self, k: int, decoded: Optional[dict] = None):
        what = self.indices[k]
        if isinstance(what, int):
            return self.loader.column(what, decoded)
        return struct_field_path(self.loader.column(what[0], decoded), what[1])
