"""``Field``: a named, typed column or child, with nullability and custom metadata; and the
helpers that turn what users pass (fields, types, ``(name, type)`` pairs, mappings) into
fields, and look fields up by index or name."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional, Union

from .. import hooks
from ..errors import ArrowInvalid
from .aliases import type_for_alias
from .base import DataType
from .extension import EXTENSION_METADATA, EXTENSION_NAME, ExtensionType, resolve_extension

__all__ = ["Field", "freeze_metadata", "field_items", "as_field", "lookup_field", "child_key"]


#: ``Field._ext`` before the field's extension type has been looked up
_UNRESOLVED = object()


class Field:
    """A named, typed column (or child), with nullability and custom metadata.

    As in pyarrow, ``type`` is the type users see: for an extension field (one made from an
    ``ExtensionType``, or one whose metadata names a registered extension) it is the
    extension type, and ``metadata`` leaves out the two ``ARROW:extension:*`` entries.
    What IPC and the C data interface carry is the storage field: ``storage_type`` (the
    physical layout every reader, writer and kernel follows; ``type`` for the other fields)
    and ``storage_metadata`` (the metadata with the extension entries).  Code that plans
    buffers reads ``storage_type``, so the meaning is plain at each call site.

    The extension type of a field read from metadata is looked up once, on first use: what is
    registered then decides, as pyarrow decides when it reads the schema.

    ``dictionary_id`` is the IPC dictionary id of a dictionary-encoded field;
    it is bookkeeping for the reader and writer and takes no part in equality.
    """

    __slots__ = ("name", "storage_type", "nullable", "storage_metadata", "dictionary_id", "_ext")
    #: ``_ext`` of a field whose metadata may name an extension type not looked up yet (what
    #: the schema reader's C walk sets, as ``__init__`` does).
    UNRESOLVED_EXTENSION = _UNRESOLVED
    # (declared for type checkers, which do not read __slots__)
    name: str
    storage_type: DataType
    nullable: bool
    storage_metadata: Optional[dict[str, str]]
    dictionary_id: Optional[int]

    def __init__(self, name: str, type: Union[DataType, str], nullable: bool = True,  # noqa: A002
                 metadata: Optional[Mapping[str, str]] = None, dictionary_id: Optional[int] = None):
        if isinstance(type, str):  # (an alias, as pyarrow takes: "int64", "utf8", ...)
            type = type_for_alias(type)  # noqa: A001
        if not isinstance(type, DataType):
            raise ArrowInvalid(f"field {name!r}: type must be an arrowmm DataType, got {type!r}")
        ext = _UNRESOLVED
        if isinstance(type, ExtensionType):  # stored as its storage, named in the metadata
            metadata = {**(dict(metadata) if metadata else {}), **type.field_metadata()}
            ext, type = type, type.storage_type  # noqa: A001
        set_ = object.__setattr__
        set_(self, "name", str(name))
        set_(self, "storage_type", type)
        set_(self, "nullable", bool(nullable))
        set_(self, "storage_metadata", freeze_metadata(metadata))
        set_(self, "dictionary_id", dictionary_id)
        set_(self, "_ext", ext)

    def __setattr__(self, name, value):
        raise AttributeError("Field is immutable")

    @property
    def extension_type(self) -> Optional[ExtensionType]:
        """The field's extension type: the one it was made with, or the registered one its
        metadata names (None for plain fields and unregistered extensions)."""
        ext = self._ext
        if ext is _UNRESOLVED:  # (threads may both resolve it: the same answer, one is kept)
            ext = resolve_extension(self.storage_type, self.storage_metadata)
            object.__setattr__(self, "_ext", ext)
        return ext

    @property
    def type(self) -> DataType:
        """The field's type as pyarrow gives it: the extension type for extension fields,
        else the storage type."""
        return self.extension_type or self.storage_type

    @property
    def logical_type(self) -> DataType:
        """Deprecated alias of ``type`` (kept from when ``type`` was the storage type)."""
        return self.type

    @property
    def metadata(self):
        """Custom metadata as pyarrow shows it: without the ``ARROW:extension:*`` entries
        when the field is an extension type (``storage_metadata`` keeps them).  A dict of
        its own for each caller, as pyarrow's: fields are shared (by every reader of one
        footer, between threads), so changing it changes nothing else."""
        md = self.storage_metadata
        if md and self.extension_type is not None:
            md = {k: v for k, v in md.items() if k not in (EXTENSION_NAME, EXTENSION_METADATA)}
            return md or None
        return None if md is None else dict(md)

    def _cmp_key(self):
        md = tuple(sorted(self.storage_metadata.items())) if self.storage_metadata else None
        return (self.name, self.storage_type, self.nullable, md)

    def __eq__(self, other):
        return isinstance(other, Field) and self._cmp_key() == other._cmp_key()

    def __hash__(self):
        return hash(self._cmp_key())

    def __reduce__(self):
        return (Field, (self.name, self.type, self.nullable, self.metadata, self.dictionary_id))

    def equals(self, other, check_metadata: bool = False) -> bool:
        """Whether ``other`` is a field of the same name, type and nullability; with
        ``check_metadata=True`` its custom metadata must match too (``pyarrow.Field.equals``)."""
        if check_metadata:
            return self == other
        return (isinstance(other, Field) and self.name == other.name
                and self.type == other.type and self.nullable == other.nullable)

    def with_type(self, type: DataType) -> "Field":  # noqa: A002  (pyarrow's name)
        """A copy of this field with type ``type`` (``pyarrow.Field.with_type``)."""
        return Field(self.name, type, self.nullable, self.metadata, self.dictionary_id)

    def with_storage_type(self, storage_type: DataType) -> "Field":
        """This field over another physical type, its stored metadata kept (the reader and
        writer use it to swap a layout, say a dictionary's index type)."""
        return Field(self.name, storage_type, self.nullable, self.storage_metadata,
                     self.dictionary_id)

    def with_nullable(self, nullable: bool) -> "Field":
        """A copy of this field, nullable or not (``pyarrow.Field.with_nullable``)."""
        return Field(self.name, self.storage_type, nullable, self.storage_metadata,
                     self.dictionary_id)

    def with_name(self, name: str) -> "Field":
        """A copy of this field named ``name`` (``pyarrow.Field.with_name``)."""
        return Field(name, self.type, self.nullable, self.metadata, self.dictionary_id)

    def with_metadata(self, metadata) -> "Field":
        """A copy of this field with custom ``metadata`` (a mapping of str or bytes) in
        place of its own (``pyarrow.Field.with_metadata``)."""
        return Field(self.name, self.type, self.nullable, metadata, self.dictionary_id)

    def remove_metadata(self) -> "Field":
        """A copy of this field without custom metadata (``pyarrow.Field.remove_metadata``;
        an extension field stays one)."""
        return Field(self.name, self.type, self.nullable, None, self.dictionary_id)

    def flatten(self) -> list:
        """A struct field's children as top-level fields named ``parent.child``, nullable when
        the struct is; any other field as itself (``pyarrow.Field.flatten``)."""
        from .nested import StructType  # (nested types are made of fields: a level above)
        if type(self.type) is not StructType:
            return [self]
        return [Field(f"{self.name}.{child.name}", child.type,
                      child.nullable or self.nullable, child.metadata)
                for child in self.type.fields]

    @property
    def extension_name(self) -> Optional[str]:
        """``ARROW:extension:name`` from the stored metadata, when the field names one
        (registered or not)."""
        md = self.storage_metadata
        return md.get(EXTENSION_NAME) if md else None

    def _short(self):
        return f"{self.name}: {self.type}{'' if self.nullable else ' not null'}"

    def __str__(self):
        return self._short()

    def __repr__(self):
        return f"arrowmm.Field<{self._short()}>"

    def __arrow_c_schema__(self):
        return hooks.export_c_schema(self)


def freeze_metadata(metadata):
    if not metadata:
        return None if metadata is None else {}
    out = {}
    for k, v in dict(metadata).items():
        k = k.decode("utf-8", "surrogateescape") if isinstance(k, (bytes, bytearray)) else str(k)
        v = v.decode("utf-8", "surrogateescape") if isinstance(v, (bytes, bytearray)) else str(v)
        out[k] = v
    return out


def field_items(fields):
    if isinstance(fields, (list, tuple)):
        return list(fields)
    if isinstance(fields, Mapping):
        return [Field(k, v) for k, v in fields.items()]
    return list(fields)


def as_field(f, default_name: str = "") -> Field:
    if isinstance(f, Field):
        return f
    if isinstance(f, DataType):
        return Field(default_name, f)
    if isinstance(f, tuple) and len(f) == 2:
        return Field(f[0], f[1])
    raise ArrowInvalid(f"expected a Field, a DataType or a (name, type) pair, got {f!r}")


def lookup_field(fields, i, what, index=None):
    if isinstance(i, str):
        hits = index.get(i, ()) if index is not None else [k for k, f in enumerate(fields) if f.name == i]
        if len(hits) != 1:
            raise KeyError(f"{what} has {'no' if not hits else len(hits)} field(s) named {i!r}")
        return fields[hits[0]]
    n = len(fields)
    k = int(i)
    if not -n <= k < n:
        raise IndexError(f"{what} field index {i} out of range for {n} fields")
    return fields[k]


def child_key(field: Field, named: bool = True) -> tuple:
    """A child field as its nested type's equality compares it (pyarrow's ``==``): its type as
    users see it (the extension type of an extension child, else the storage type), its
    nullability, and its name when ``named`` (struct and union children; a list's or a map's
    child names are not part of the type).  Custom metadata takes no part."""
    return (field.name if named else None, field.type, field.nullable)
