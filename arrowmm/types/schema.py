"""``Schema``: the fields of a record batch, in order, with schema-level metadata; printed as
pyarrow's ``Schema.to_string`` prints it.

``serialize`` and ``Schema(producer)`` are provided from above (``arrowmm.ipc.messages`` and
``arrowmm.interop`` fill their hooks in ``arrowmm.hooks``), so this layer imports nothing from
those.
"""
from __future__ import annotations

import json
from typing import Iterator, Mapping, Optional

from .. import hooks
from ..errors import ArrowInvalid
from .encoded import DictionaryType
from .extension import ExtensionType, extension_type_of
from .fields import Field, as_field, field_items, freeze_metadata, lookup_field

__all__ = ["Schema"]


class Schema:
    """The fields of a record batch, in order, plus schema-level custom metadata."""

    __slots__ = ("fields", "_metadata", "endianness", "_index", "_ext")
    # (declared for type checkers, which do not read __slots__)
    fields: tuple[Field, ...]
    endianness: str

    def __init__(self, fields, metadata: Optional[Mapping[str, str]] = None,
                 endianness: str = "little"):
        set_ = object.__setattr__
        if hasattr(fields, "__arrow_c_schema__") and not isinstance(fields, (list, tuple, Mapping)):
            imported = hooks.import_c_schema(fields)  # (pyarrow's, polars', any producer's)
            fields, metadata = imported.fields, imported.metadata if metadata is None else metadata
        fields = tuple(field_items(fields))
        if any(type(f) is not Field for f in fields):
            fields = tuple(map(as_field, fields))
        set_(self, "fields", fields)
        set_(self, "_metadata", freeze_metadata(metadata))
        set_(self, "endianness", endianness)
        set_(self, "_index", None)  # name -> indices, made by the first lookup by name
        set_(self, "_ext", None)  # each field's extension type, resolved once on first use

    @classmethod
    def _of_fields(cls, fields: tuple, metadata: Optional[Mapping[str, str]] = None,
                   endianness: str = "little") -> "Schema":
        """A schema of ``fields``, a tuple of ``Field`` as a reader builds it, without
        ``__init__``'s conversions (a tenth of the open of a 10^6-field file went to them)."""
        self = object.__new__(cls)
        set_ = object.__setattr__
        set_(self, "fields", fields)
        set_(self, "_metadata", freeze_metadata(metadata))
        set_(self, "endianness", endianness)
        set_(self, "_index", None)
        set_(self, "_ext", None)
        return self

    @property
    def metadata(self) -> Optional[dict[str, str]]:
        """The schema's custom metadata: a dict of its own for each caller, as pyarrow's is (a
        schema is shared: by every reader of one footer, and between threads; changing the
        dict you got changes nothing else: ``with_metadata`` makes a schema with new
        metadata)."""
        md = self._metadata
        return None if md is None else dict(md)

    def extension_types(self) -> tuple:
        """Each field's registered extension type (None for the others), resolved once per
        schema: what is registered when the schema is first read decides, as in pyarrow."""
        ext = self._ext
        if ext is None:
            ext = tuple(extension_type_of(f) for f in self.fields)
            object.__setattr__(self, "_ext", ext)
        return ext

    def _name_index(self) -> dict:
        index = self._index
        if index is None:  # (threads may both build it: the same dict, one is kept)
            index = {}
            for i, f in enumerate(self.fields):
                index.setdefault(f.name, []).append(i)
            object.__setattr__(self, "_index", index)
        return index

    def __setattr__(self, name, value):
        raise AttributeError("Schema is immutable")

    @property
    def names(self) -> list:
        """The fields' names, in order (``pyarrow.Schema.names``)."""
        return [f.name for f in self.fields]

    @property
    def types(self) -> list:
        """The fields' types, in order (``pyarrow.Schema.types``)."""
        return [f.type for f in self.fields]

    def __len__(self):
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __getitem__(self, i):
        return self.field(i)

    def field(self, i) -> Field:
        """The field at index ``i`` (negative from the end) or named ``i``
        (``pyarrow.Schema.field``); a name that is absent or repeated raises ``KeyError``, an
        index out of range ``IndexError``."""
        index = self._name_index() if isinstance(i, str) else None
        return lookup_field(self.fields, i, "schema", index)

    def get_field_index(self, name: str) -> int:
        """Index of the field called ``name``; -1 when absent or ambiguous (pyarrow's rule)."""
        hits = self._name_index().get(name, ())
        return hits[0] if len(hits) == 1 else -1

    def _cmp_key(self):
        md = tuple(sorted(self.metadata.items())) if self.metadata else None
        return (self.fields, md)

    def __eq__(self, other):
        return isinstance(other, Schema) and self._cmp_key() == other._cmp_key()

    def __hash__(self):
        return hash(self._cmp_key())

    def __reduce__(self):
        return (Schema, (self.fields, self.metadata, self.endianness))

    def equals(self, other, check_metadata: bool = False) -> bool:
        """Whether ``other`` has equal fields in the same order (names, types,
        nullability); with ``check_metadata=True`` field and schema metadata must match too
        (``pyarrow.Schema.equals``)."""
        if check_metadata:
            return self == other
        return (isinstance(other, Schema) and len(self) == len(other)
                and all(a.equals(b) for a, b in zip(self.fields, other.fields)))

    def with_metadata(self, metadata) -> "Schema":
        """A copy of this schema with custom ``metadata`` in place of its own
        (``pyarrow.Schema.with_metadata``)."""
        return Schema(self.fields, metadata, self.endianness)

    # pyarrow's ``Schema`` editing API: each returns a new schema, with this one's metadata

    def remove_metadata(self) -> "Schema":
        """A copy of this schema without custom metadata (its fields keep theirs)."""
        return Schema._of_fields(self.fields, None, self.endianness)

    def _with_fields(self, fields: tuple) -> "Schema":
        return Schema._of_fields(fields, self._metadata, self.endianness)

    def _checked_field(self, field) -> Field:
        if not isinstance(field, Field):
            raise TypeError(f"Argument 'field' has incorrect type (expected arrowmm.Field, got "
                            f"{type(field).__name__})")
        return field

    def _checked_index(self, i, limit: int, verb: str) -> int:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"field index must be an int, got {type(i).__name__}")
        if not 0 <= i <= limit:
            raise ArrowInvalid(f"Invalid column index to {verb} field: {i} (the schema has "
                               f"{len(self.fields)} fields)")
        return i

    def append(self, field: Field) -> "Schema":
        """This schema with ``field`` added at the end (a repeated name is allowed, as in
        pyarrow)."""
        return self._with_fields(self.fields + (self._checked_field(field),))

    def insert(self, i: int, field: Field) -> "Schema":
        """This schema with ``field`` inserted at position ``i`` (0 to ``len(schema)``;
        ``ArrowInvalid`` otherwise, as pyarrow)."""
        field = self._checked_field(field)
        i = self._checked_index(i, len(self.fields), "add")
        return self._with_fields(self.fields[:i] + (field,) + self.fields[i:])

    def remove(self, i: int) -> "Schema":
        """This schema without its field at position ``i`` (``ArrowInvalid`` out of range)."""
        i = self._checked_index(i, len(self.fields) - 1, "remove")
        return self._with_fields(self.fields[:i] + self.fields[i + 1:])

    def set(self, i: int, field: Field) -> "Schema":
        """This schema with ``field`` in place of its field at position ``i``.  (pyarrow
        appends when ``i`` is one past the end; here that is out of range, ``ArrowInvalid``,
        as for any other index without a field to replace.)"""
        field = self._checked_field(field)
        i = self._checked_index(i, len(self.fields) - 1, "set")
        return self._with_fields(self.fields[:i] + (field,) + self.fields[i + 1:])

    def get_all_field_indices(self, name: str) -> list:
        """The positions of every field named ``name`` (empty when there is none)."""
        return [k for k, f in enumerate(self.fields) if f.name == name]

    def empty_table(self):
        """A table of this schema with no rows (``pyarrow.Schema.empty_table``)."""
        return hooks.empty_table(self)

    @property
    def pandas_metadata(self) -> Optional[dict]:
        """The ``pandas`` metadata entry (what pandas wrote about its index and columns), read
        as JSON; None without one.  Text that is not JSON raises ``ArrowInvalid``."""
        text = (self._metadata or {}).get("pandas")
        if text is None:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as e:  # (RecursionError: JSON nested too deep)
            raise ArrowInvalid(f"schema metadata 'pandas' is not JSON: {e}") from None

    def serialize(self) -> bytes:
        """The schema as one IPC schema message (pyarrow's ``Schema.serialize``);
        ``arrowmm.read_schema(buf)`` reads it."""
        return hooks.serialize_schema(self)

    def to_string(self, truncate_metadata: bool = True, show_field_metadata: bool = True,
                  show_schema_metadata: bool = True) -> str:
        """The schema as pyarrow's ``Schema.to_string`` prints it: each field, the children of
        nested types (``child i, ...``), field and schema metadata, long values cut as Arrow
        C++ cuts them unless ``truncate_metadata=False`` (so are names and types longer than
        100 bytes, as pyarrow cuts them)."""
        out = []
        options = (truncate_metadata, show_field_metadata)
        for f in self.fields:
            out.append("\n")
            _print_field(out, f, 0, options)
        if show_schema_metadata and self.metadata:
            out.append("\n-- schema metadata --")
            _print_metadata(out, self.metadata, 0, truncate_metadata)
        return "".join(out)[1:]

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return "arrowmm.Schema\n" + str(self)

    def __arrow_c_schema__(self):
        return hooks.export_c_schema(self)


def _print_field(out: list, f: Field, indent: int, options) -> None:
    # (Arrow C++'s SchemaPrinter: a child line is indented by the parent's indent plus the
    # child's, so each level adds more than the one before, as pyarrow prints it)
    dtype = f.type
    name, text = (_cut(f.name), _cut(str(dtype))) if options[0] else (f.name, dtype)
    out.append(f"{name}: {text}{'' if f.nullable else ' not null'}")
    kids = () if isinstance(dtype, (ExtensionType, DictionaryType)) else dtype.children
    for i, child in enumerate(kids):
        out.append("\n" + " " * indent + " " * (indent + 2) + f"child {i}, ")
        _print_field(out, child, indent + 2, options)
    if options[1] and f.metadata:
        out.append("\n" + " " * (indent + 2) + "-- field metadata --")
        _print_metadata(out, f.metadata, indent + 2, options[0])


#: the longest name or type printed whole (Arrow C++'s ``PrettyPrintOptions::element_size_limit``)
_ELEMENT_SIZE_LIMIT = 100


def _cut(text: str) -> str:
    """``text`` cut to 100 bytes of UTF-8 as pyarrow cuts a long name or type."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) <= _ELEMENT_SIZE_LIMIT:
        return text
    return (raw[:_ELEMENT_SIZE_LIMIT].decode("utf-8", "replace")
            + f" (... {len(raw) - _ELEMENT_SIZE_LIMIT} chars omitted)")


def _print_metadata(out: list, metadata, indent: int, truncate: bool) -> None:
    for k, v in metadata.items():
        raw = v.encode("utf-8", "surrogateescape")
        keep = max(10, 70 - len(k.encode("utf-8", "surrogateescape")) - indent)
        text = f"'{v}'" if not truncate or len(raw) <= keep else \
            f"'{raw[:keep].decode('utf-8', 'replace')}' + {len(raw) - keep}"
        out.append("\n" + " " * indent + f"{k}: {text}")
