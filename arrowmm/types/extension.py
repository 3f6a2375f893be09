"""Extension types (pyarrow's ``ExtensionType``) and the registry that reads recognise them by.

An extension type is a logical type over a storage type; what IPC and the C data interface
carry is the storage, named in the field metadata (``EXTENSION_NAME``,
``EXTENSION_METADATA``).  ``resolve_extension`` turns that metadata back into the registered
type; ``arrowmm.types.fields.Field`` calls it on first use.
"""
from __future__ import annotations

from typing import Optional

from ..errors import ArrowInvalid, ArrowKeyError
from .base import DataType

__all__ = ["EXTENSION_NAME", "EXTENSION_METADATA", "ExtensionType", "register_extension_type",
           "unregister_extension_type", "extension_type_of", "resolve_extension"]


#: The field metadata keys that carry an extension type through IPC and the C data interface.
EXTENSION_NAME = "ARROW:extension:name"
EXTENSION_METADATA = "ARROW:extension:metadata"


class ExtensionType(DataType):
    """A logical type over a storage type, as pyarrow's ``pyarrow.ExtensionType``.

    Subclass it like pyarrow's: call ``super().__init__(storage_type, extension_name)``,
    define ``__arrow_ext_serialize__(self) -> bytes`` and the classmethod
    ``__arrow_ext_deserialize__(cls, storage_type, serialized)``, and optionally
    ``__arrow_ext_class__(self)`` (the array class, an ``arrowmm.ExtensionArray`` subclass).
    Register an instance with ``arrowmm.register_extension_type`` so reads recognise it.

    A field made with one (``Field(name, ext_type)``) or read with its name in the metadata
    has it as ``Field.type``, as in pyarrow; the field stores ``storage_type`` (the layout
    every reader and writer follows) and names the extension in ``storage_metadata``
    (``ARROW:extension:name``, ``ARROW:extension:metadata``), and the arrays a batch hands
    out carry it as their ``type``.
    """

    __slots__ = ("_storage", "_name", "__dict__")

    def __init__(self, storage_type: DataType, extension_name: str):
        if not isinstance(storage_type, DataType) or isinstance(storage_type, ExtensionType):
            raise ArrowInvalid(f"an extension type's storage must be a plain arrowmm DataType, "
                               f"got {storage_type!r}")
        object.__setattr__(self, "_storage", storage_type)
        object.__setattr__(self, "_name", str(extension_name))

    def __setattr__(self, name, value):  # subclasses keep their parameters, as pyarrow's do
        object.__setattr__(self, name, value)

    @property
    def _key(self):
        return (type(self), self._name, self._storage, bytes(self.__arrow_ext_serialize__()))

    storage_type = property(lambda self: self._storage)
    extension_name = property(lambda self: self._name)
    buffer_count = property(lambda self: self._storage.buffer_count)
    byte_width = property(lambda self: self._storage.byte_width)
    num_buffers = property(lambda self: self._storage.num_buffers)
    has_variadic_buffers = property(lambda self: self._storage.has_variadic_buffers)
    num_fields = 0  # (pyarrow's: the storage type's children are not the extension's)

    def field(self, i: int):
        """pyarrow's ``DataType.field``: an extension type has no child fields of its own
        (its storage type's are ``storage_type.field(i)``)."""
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"Expected int index, got type '{type(i)}'")
        raise IndexError(f"field index {i} out of range for {str(self)!r}, which has no child "
                         f"field of its own (its storage type's: storage_type.field)")

    @property
    def children(self) -> tuple:
        """The storage type's children (a nested storage's fields; empty otherwise)."""
        return self._storage.children

    def __arrow_ext_serialize__(self) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} must define __arrow_ext_serialize__")

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: DataType, serialized: bytes):
        raise NotImplementedError(f"{cls.__name__} must define __arrow_ext_deserialize__")

    def __arrow_ext_class__(self):
        """The array class for this type; None means ``arrowmm.ExtensionArray``."""
        return None

    def field_metadata(self) -> dict:
        """The two metadata entries that name this type on a field."""
        serialized = bytes(self.__arrow_ext_serialize__())
        return {EXTENSION_NAME: self._name,
                EXTENSION_METADATA: serialized.decode("utf-8", "surrogateescape")}

    def wrap_value(self, value):
        """One storage value (a Python object, not None) as this type's Python value; the
        storage value itself unless a subclass says otherwise."""
        return value

    def unwrap_value(self, value):
        """One Python value of this type (not None) as its storage value, for building arrays
        from Python values; the value itself unless a subclass says otherwise."""
        return value

    def __reduce__(self):
        return (_rebuild_extension, (type(self), self._storage, bytes(self.__arrow_ext_serialize__())))

    def __str__(self):
        return f"extension<{self._name}<{type(self).__name__}>>"

    def __repr__(self):
        return f"{type(self).__name__}({self})"

    # (``DataType.__arrow_c_schema__`` exports it: the C exporter writes an extension type as
    # its storage, named in the metadata, as a field of it would be)


def _rebuild_extension(cls, storage, serialized):
    return cls.__arrow_ext_deserialize__(storage, serialized)


#: extension name -> the registered instance whose class deserializes that name
_EXTENSION_REGISTRY: dict = {}
#: (name, storage type, its string, serialized) -> the deserialized type (None: it did not fit)
_EXTENSION_CACHE: dict = {}
_GENERATION = [0]  # bumped by every (un)registration: see registry_generation


def registry_generation() -> int:
    """A number that changes whenever an extension type is registered or unregistered: part
    of the key of anything cached from a parse (``format.footer_cache``), since a schema's
    extension types are resolved against the registry of when it was first read."""
    return _GENERATION[0]


def register_extension_type(ext_type: ExtensionType) -> None:
    """Make reads (files, streams, the C data interface) recognise ``ext_type``'s name:
    pyarrow's ``register_extension_type``.  A name registered already raises ArrowKeyError
    (the canonical ``arrow.*`` types are registered when arrowmm is imported)."""
    if not isinstance(ext_type, ExtensionType):
        raise TypeError(f"register_extension_type takes an ExtensionType instance, got "
                        f"{type(ext_type).__name__}")
    name = ext_type.extension_name
    if name in _EXTENSION_REGISTRY:
        raise ArrowKeyError(f"A type extension with name {name} already defined")
    _EXTENSION_REGISTRY[name] = ext_type
    _EXTENSION_CACHE.clear()
    _GENERATION[0] += 1


def unregister_extension_type(type_name: str) -> None:
    """Forget the extension type registered under ``type_name`` (ArrowKeyError if none)."""
    if type_name not in _EXTENSION_REGISTRY:
        raise ArrowKeyError(f"No type extension with name {type_name} found")
    del _EXTENSION_REGISTRY[type_name]
    _EXTENSION_CACHE.clear()
    _GENERATION[0] += 1


def extension_type_of(field: "Field") -> Optional[ExtensionType]:  # noqa: F821  (fields imports this module: named, not imported)
    """The extension type of ``field`` (``Field.type`` when that is one), or None: a field
    with no extension name, an unregistered name, or metadata its class refuses keeps its
    storage type and its metadata (pyarrow's reading of unknown extensions)."""
    return field.extension_type


def resolve_extension(storage: DataType, md) -> Optional[ExtensionType]:
    """The registered extension type that ``md`` (a field's metadata as stored) names over
    ``storage``, or None."""
    if not md:
        return None
    name = md.get(EXTENSION_NAME)
    if name is None:
        return None
    serialized = md.get(EXTENSION_METADATA, "").encode("utf-8", "surrogateescape")
    key = (name, storage, str(storage), serialized)  # (str: child names, which == ignores)
    try:
        return _EXTENSION_CACHE[key]
    except KeyError:
        pass
    proto = _EXTENSION_REGISTRY.get(name)
    ext = None
    if proto is not None:
        try:
            ext = type(proto).__arrow_ext_deserialize__(storage, serialized)
        except (ArrowInvalid, ValueError, TypeError, KeyError, RecursionError):
            ext = None  # (metadata the class refuses: read as the storage, metadata kept)
        if ext is not None and (not isinstance(ext, ExtensionType) or ext.storage_type != storage):
            ext = None
    if len(_EXTENSION_CACHE) > 4096:
        _EXTENSION_CACHE.clear()
    _EXTENSION_CACHE[key] = ext
    return ext
