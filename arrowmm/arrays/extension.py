"""Extension arrays, and Arrow's canonical extension types with their values.

An ``ExtensionArray`` wraps its storage array (``.storage``) and carries the extension type as
its ``type``; its values are the storage's, turned into the type's Python values (``uuid.UUID``
for ``arrow.uuid``, ``bool`` for ``arrow.bool8``).  Batches keep the storage arrays and hand
out the wrapped ones (``wrap``), so everything under them (loader, writer, C data export)
only ever sees storage.

The canonical types (https://arrow.apache.org/docs/format/CanonicalExtensions.html) are
registered here on import, as Arrow C++ registers them: ``arrow.uuid``, ``arrow.json``,
``arrow.bool8``, ``arrow.fixed_shape_tensor``, ``arrow.variable_shape_tensor``, ``arrow.opaque``.  Names, metadata bytes and
printed forms follow pyarrow's, so files and capsules pass between the two unchanged.
"""
from __future__ import annotations

import json
import math
import uuid as _uuid
from typing import Optional, Sequence

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowKeyError
from .array import Array, exported_array, exported_schema, imported_array, make_array
from .provenance import copied_view, copy_reason

__all__ = [
    "ExtensionArray", "UuidType", "JsonType", "Bool8Type", "FixedShapeTensorType", "OpaqueType",
    "UuidArray", "JsonArray", "Bool8Array", "FixedShapeTensorArray", "OpaqueArray",
    "VariableShapeTensorType", "VariableShapeTensorArray", "variable_shape_tensor",
    "uuid", "json_", "bool8", "fixed_shape_tensor", "opaque", "wrap", "storage_of",
]


def storage_of(array: Array) -> Array:
    """The storage array of an extension array; any other array itself."""
    return array.storage if isinstance(array, ExtensionArray) else array


class ExtensionArray(Array):
    """An array of an extension type: ``storage`` holds the values, ``type`` the extension.

    Make one with ``ExtensionArray.from_storage(ext_type, storage)`` (pyarrow's spelling);
    the type's ``__arrow_ext_class__`` picks the subclass."""

    __slots__ = ("storage",)

    def __init__(self, type: t.ExtensionType, storage: Array):  # noqa: A002  (pyarrow's name)
        storage = storage_of(storage)
        super().__init__(type, storage.length, storage._buffers, storage.children,
                         storage._null_count, storage.offset, storage.dictionary)
        self.storage = storage

    @staticmethod
    def from_storage(typ: t.ExtensionType, storage) -> "ExtensionArray":
        """``storage`` (an arrowmm array, or any object exporting ``__arrow_c_array__``) viewed
        as ``typ``, whose storage type it must have."""
        if not isinstance(typ, t.ExtensionType):
            raise ArrowInvalid(f"from_storage needs an ExtensionType, got {typ!r}")
        if not isinstance(storage, Array) and hasattr(storage, "__arrow_c_array__"):
            storage = imported_array(storage)
        if not isinstance(storage, Array):
            raise ArrowInvalid(f"from_storage needs an array, got {type(storage).__name__}")
        storage = storage_of(storage)
        if storage.type != typ.storage_type:
            raise ArrowInvalid(f"the storage array is {storage.type}, but {typ} stores "
                               f"{typ.storage_type}")
        return (typ.__arrow_ext_class__() or ExtensionArray)(typ, storage)

    # -- everything delegated to the storage ------------------------------------------------
    @property
    def null_count(self) -> int:
        """The storage array's null count."""
        return self.storage.null_count

    @property
    def validity(self):
        """The storage array's validity bitmap, or None."""
        return self.storage.validity

    def logical_validity(self):
        """The storage array's logical validity (its nulls are the extension's)."""
        return self.storage.logical_validity()

    @property
    def is_zero_copy(self) -> bool:
        """Whether the storage is read without a copy (not decompressed, swapped or realigned)."""
        return copy_reason(self.storage) is None

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "ExtensionArray":
        out = self.storage.slice(offset, length)
        return self if out is self.storage else type(self)(self.type, out)

    def take(self, indices) -> "ExtensionArray":
        return type(self)(self.type, self.storage.take(indices))

    def filter(self, mask) -> "ExtensionArray":
        return type(self)(self.type, self.storage.filter(mask))

    def validate(self, full: bool = False, path: str = "array") -> None:
        self.storage.validate(full, path)

    def _pylist(self, temporal):
        values = self.storage._pylist(temporal)
        wrap_value = self.type.wrap_value
        if type(self.type).wrap_value is t.ExtensionType.wrap_value:
            return values
        return [None if v is None else wrap_value(v) for v in values]

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> np.ndarray:
        """The storage's numpy form (subclasses give their own where pyarrow does)."""
        return self.storage.to_numpy(zero_copy_only, writable)

    def buffers(self):
        return self.storage.buffers()

    def __reduce__(self):
        return (_rebuild_array, (self.type, self.storage))

    # -- the Arrow PyCapsule interface: the storage, the extension named in the schema -----
    def __arrow_c_schema__(self):
        return exported_schema(t.Field("", self.type))

    def __arrow_c_array__(self, requested_schema=None):
        _, array_capsule = exported_array(self.storage, requested_schema)
        return exported_schema(t.Field("", self.type)), array_capsule


def _rebuild_array(typ, storage):
    return ExtensionArray.from_storage(typ, storage)


def wrap(ext: Optional[t.ExtensionType], storage: Array) -> Array:
    """``storage`` as an array of ``ext`` (itself when ``ext`` is None)."""
    if ext is None:
        return storage
    return (ext.__arrow_ext_class__() or ExtensionArray)(ext, storage)


def _json_metadata(serialized: bytes, what: str) -> dict:
    try:
        out = json.loads(serialized.decode("utf-8")) if serialized.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # (RecursionError: too deep)
        raise ArrowInvalid(f"{what}: extension metadata is not JSON ({e})") from None
    if not isinstance(out, dict):
        raise ArrowInvalid(f"{what}: extension metadata must be a JSON object, got {out!r}")
    return out


# -- arrow.uuid --------------------------------------------------------------------------------
class UuidType(t.ExtensionType):
    """``arrow.uuid``: 16 bytes per value (``fixed_size_binary[16]``), ``uuid.UUID`` values."""

    def __init__(self):
        super().__init__(t.FixedSizeBinaryType(16), "arrow.uuid")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        if storage_type != t.FixedSizeBinaryType(16):
            raise ArrowInvalid(f"arrow.uuid must be stored as fixed_size_binary[16], got {storage_type}")
        return cls()

    def __arrow_ext_class__(self):
        return UuidArray

    def wrap_value(self, value):
        return _uuid.UUID(bytes=bytes(value))

    def unwrap_value(self, value):
        return value.bytes if isinstance(value, _uuid.UUID) else value

    def __str__(self):
        return "extension<arrow.uuid>"


class UuidArray(ExtensionArray):
    """``arrow.uuid`` values: 16-byte UUIDs, read as ``uuid.UUID``."""

    __slots__ = ()


# -- arrow.json --------------------------------------------------------------------------------
_JSON_STORAGE = (t.BinaryType(True), t.BinaryType(True, large=True), t.BinaryViewType(True))


class JsonType(t.ExtensionType):
    """``arrow.json``: JSON text in a string (``string``, ``large_string`` or ``string_view``)
    column; values are the ``str`` as stored, as pyarrow gives them."""

    def __init__(self, storage_type: t.DataType = t.BinaryType(True)):
        if storage_type not in _JSON_STORAGE:
            raise ArrowInvalid(f"arrow.json must be stored as string, large_string or "
                               f"string_view, got {storage_type}")
        super().__init__(storage_type, "arrow.json")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls(storage_type)

    def __arrow_ext_class__(self):
        return JsonArray

    def __str__(self):
        return "extension<arrow.json>"


class JsonArray(ExtensionArray):
    """``arrow.json`` values: JSON text in a string column, read as the strings."""

    __slots__ = ()


# -- arrow.bool8 -------------------------------------------------------------------------------
class Bool8Type(t.ExtensionType):
    """``arrow.bool8``: one byte per boolean (``int8``; 0 is False, anything else True)."""

    def __init__(self):
        super().__init__(t.IntType(8, True), "arrow.bool8")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        if storage_type != t.IntType(8, True):
            raise ArrowInvalid(f"arrow.bool8 must be stored as int8, got {storage_type}")
        return cls()

    def __arrow_ext_class__(self):
        return Bool8Array

    def wrap_value(self, value):
        return value != 0

    def unwrap_value(self, value):
        return int(value) if isinstance(value, (bool, np.bool_)) else value

    def __str__(self):
        return "extension<arrow.bool8>"


class Bool8Array(ExtensionArray):
    """``arrow.bool8`` values: booleans stored one byte each (numpy's own layout)."""

    __slots__ = ()

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> np.ndarray:
        """A ``bool`` numpy view of the bytes when nothing is null (pyarrow's zero-copy case).

        A byte other than 0 or 1 is no valid numpy bool, so such data refuses the view (and
        converts with ``zero_copy_only=False``); nulls give an object array with None."""
        raw = self.storage.values()
        if self.null_count == 0 and not writable:
            if raw.size and int(raw.view(np.uint8).max()) > 1:
                if zero_copy_only:
                    raise ArrowInvalid("arrow.bool8 values other than 0 and 1 have no bool view; "
                                       "use to_numpy(zero_copy_only=False)")
                return raw != 0
            return raw.view(np.bool_)
        if zero_copy_only:
            raise ArrowInvalid(f"{self.null_count} null value(s): an arrow.bool8 array with "
                               f"nulls has no numpy view (use zero_copy_only=False)")
        if self.null_count == 0:
            return raw != 0
        out = (raw != 0).astype(object)
        out[~self.validity_mask()] = None
        return out


# -- arrow.fixed_shape_tensor ------------------------------------------------------------------
class FixedShapeTensorType(t.ExtensionType):
    """``arrow.fixed_shape_tensor``: each value a tensor of ``shape`` (``value_type``
    elements, row-major in the order ``permutation`` gives), stored as a ``fixed_size_list``."""

    def __init__(self, value_type: t.DataType, shape: Sequence[int],
                 dim_names: Optional[Sequence[str]] = None,
                 permutation: Optional[Sequence[int]] = None):
        shape = [int(s) for s in shape]
        if any(s < 0 for s in shape):
            raise ArrowInvalid(f"arrow.fixed_shape_tensor shape must not be negative, got {shape}")
        if dim_names is not None:
            dim_names = [str(d) for d in dim_names]
            if len(dim_names) != len(shape):
                raise ArrowInvalid(f"arrow.fixed_shape_tensor has {len(shape)} dimensions but "
                                   f"{len(dim_names)} dim_names")
        if permutation is not None:
            permutation = [int(p) for p in permutation]
            if sorted(permutation) != list(range(len(shape))):
                raise ArrowInvalid(f"arrow.fixed_shape_tensor permutation {permutation} is not a "
                                   f"permutation of {len(shape)} dimensions")
        self.value_type = value_type
        self.shape = shape
        self.dim_names = dim_names or None
        self.permutation = permutation or None
        size = math.prod(shape) if shape else 1
        super().__init__(t.FixedSizeListType(t.Field("item", value_type), size),
                         "arrow.fixed_shape_tensor")

    @property
    def ndim(self) -> int:
        """The number of dimensions of each tensor (``len(shape)``)."""
        return len(self.shape)

    def physical_shape(self) -> list:
        """The shape in memory order: ``shape`` permuted by ``permutation``."""
        perm = self.permutation or list(range(self.ndim))
        return [self.shape[p] for p in perm]

    def __arrow_ext_serialize__(self):
        out = {"shape": self.shape}
        if self.permutation:
            out["permutation"] = self.permutation
        if self.dim_names:
            out["dim_names"] = self.dim_names
        return json.dumps(out, separators=(",", ":")).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        md = _json_metadata(serialized, "arrow.fixed_shape_tensor")
        if not isinstance(storage_type, t.FixedSizeListType):
            raise ArrowInvalid(f"arrow.fixed_shape_tensor must be stored as a fixed_size_list, "
                               f"got {storage_type}")
        shape = md.get("shape")
        if not isinstance(shape, list) or not all(isinstance(s, int) for s in shape):
            raise ArrowInvalid(f"arrow.fixed_shape_tensor metadata needs a list of integers "
                               f"'shape', got {shape!r}")
        out = cls(storage_type.value_type, shape, md.get("dim_names"), md.get("permutation"))
        if out.storage_type.list_size != storage_type.list_size:
            raise ArrowInvalid(f"arrow.fixed_shape_tensor shape {shape} holds "
                               f"{out.storage_type.list_size} values, its storage "
                               f"{storage_type.list_size}")
        if storage_type != out.storage_type:  # (another child name: keep the file's storage)
            object.__setattr__(out, "_storage", storage_type)
        return out

    def __arrow_ext_class__(self):
        return FixedShapeTensorArray

    def unwrap_value(self, value):
        """A tensor (numpy array of ``shape``) as its flat storage list, in memory order."""
        if isinstance(value, np.ndarray):
            if list(value.shape) != self.shape:
                raise ArrowInvalid(f"a tensor of shape {list(value.shape)} in a column of shape "
                                   f"{self.shape}")
            if self.permutation:
                value = value.transpose(self.permutation)
            return value.reshape(-1).tolist()
        return value

    def __str__(self):
        parts = [f"value_type={self.value_type}", "shape=[" + ",".join(map(str, self.shape)) + "]"]
        if self.permutation:
            parts.append("permutation=[" + ",".join(map(str, self.permutation)) + "]")
        if self.dim_names:
            parts.append("dim_names=[" + ",".join(self.dim_names) + "]")
        return f"extension<arrow.fixed_shape_tensor[{', '.join(parts)}]>"


class FixedShapeTensorArray(ExtensionArray):
    """Values are tensors: ``a[i]`` is a numpy array of the declared ``shape`` (a zero-copy
    view; the permutation applied as strides), ``to_numpy_ndarray()`` the whole column."""

    __slots__ = ()

    def to_numpy_ndarray(self) -> np.ndarray:
        """Every tensor as one ndarray of shape ``(len, *physical shape)`` over the storage,
        without a copy (pyarrow's ``to_numpy_ndarray``: the permuted shape).  Nulls refuse."""
        if self.null_count:
            raise ArrowInvalid(f"{self.null_count} null tensor(s): to_numpy_ndarray needs "
                               f"every tensor present")
        flat = self.storage._covered_values().to_numpy(zero_copy_only=True)
        return flat.reshape([len(self)] + self.type.physical_shape())

    def _tensor(self, k: int) -> np.ndarray:
        """Tensor ``k`` as a view in its logical shape (dimension order ``shape``)."""
        size = self.type.storage_type.list_size
        flat = self.storage._covered_values().slice(k * size, size).to_numpy(zero_copy_only=True)
        out = flat.reshape(self.type.physical_shape())
        perm = self.type.permutation
        return out if not perm else out.transpose(np.argsort(perm))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return super().__getitem__(i)
        k = int(i)
        if k < 0:
            k += self.length
        if not 0 <= k < self.length:
            raise IndexError(f"index {i} out of range for an array of length {self.length}")
        if not self.validity_mask()[k]:
            return None
        return self._tensor(k)

    @staticmethod
    def from_numpy_ndarray(obj, dim_names: Optional[Sequence[str]] = None
                           ) -> "FixedShapeTensorArray":
        """Tensors from an ndarray whose first dimension counts them (copied in C order, with
        the identity permutation, as pyarrow's ``from_numpy_ndarray`` does for such arrays)."""
        arr = np.ascontiguousarray(obj)
        if arr.ndim < 2:
            raise ArrowInvalid(f"from_numpy_ndarray needs at least 2 dimensions (tensors, then "
                               f"their shape), got {arr.ndim}")
        value_type = _NUMPY_VALUE_TYPES.get(arr.dtype.newbyteorder("=").str[1:])
        if value_type is None:
            raise ArrowInvalid(f"from_numpy_ndarray: no Arrow value type for numpy {arr.dtype}")
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        typ = FixedShapeTensorType(value_type, arr.shape[1:], dim_names, list(range(arr.ndim - 1)))
        flat = arr.reshape(-1)
        child = make_array(value_type, flat.size, [None, copied_view(flat.view(np.uint8), "from numpy")])
        storage = make_array(typ.storage_type, arr.shape[0], [None], [child], null_count=0)
        return FixedShapeTensorArray(typ, storage)


_NUMPY_VALUE_TYPES = {**{f"i{n}": t.IntType(n * 8, True) for n in (1, 2, 4, 8)},
                      **{f"u{n}": t.IntType(n * 8, False) for n in (1, 2, 4, 8)},
                      **{f"f{n}": t.FloatType(n * 8) for n in (2, 4, 8)}}


# -- arrow.variable_shape_tensor ---------------------------------------------------------------
class VariableShapeTensorType(t.ExtensionType):
    """``arrow.variable_shape_tensor``: each value a tensor of ``ndim`` dimensions and a shape
    of its own, stored as ``struct<data: list<value_type>, shape: fixed_size_list<int32>[ndim]>``
    (``shape`` the logical shape; ``data`` row-major in the order ``permutation`` gives)."""

    def __init__(self, value_type: t.DataType, ndim: int,
                 dim_names: Optional[Sequence[str]] = None,
                 permutation: Optional[Sequence[int]] = None,
                 uniform_shape: Optional[Sequence[Optional[int]]] = None):
        ndim = int(ndim)
        if ndim < 0:
            raise ArrowInvalid(f"arrow.variable_shape_tensor ndim must be >= 0, got {ndim}")
        if dim_names is not None:
            dim_names = [str(d) for d in dim_names]
            if dim_names and len(dim_names) != ndim:
                raise ArrowInvalid(f"arrow.variable_shape_tensor has {ndim} dimensions but "
                                   f"{len(dim_names)} dim_names")
        if permutation is not None:
            permutation = [int(p) for p in permutation]
            if permutation and sorted(permutation) != list(range(ndim)):
                raise ArrowInvalid(f"arrow.variable_shape_tensor permutation {permutation} is "
                                   f"not a permutation of {ndim} dimensions")
        if uniform_shape is not None:
            uniform_shape = [None if u is None else int(u) for u in uniform_shape]
            if uniform_shape and len(uniform_shape) != ndim:
                raise ArrowInvalid(f"arrow.variable_shape_tensor has {ndim} dimensions but "
                                   f"uniform_shape {uniform_shape}")
        self.value_type = value_type
        self.ndim = ndim
        self.dim_names = dim_names or None
        self.permutation = permutation or None
        self.uniform_shape = uniform_shape or None
        super().__init__(t.StructType([
            t.Field("data", t.ListType(t.Field("item", value_type))),
            t.Field("shape", t.FixedSizeListType(t.Field("item", t.IntType(32, True)), ndim))]),
            "arrow.variable_shape_tensor")

    def __arrow_ext_serialize__(self):
        out = {}
        if self.permutation:
            out["permutation"] = self.permutation
        if self.dim_names:
            out["dim_names"] = self.dim_names
        if self.uniform_shape:
            out["uniform_shape"] = self.uniform_shape
        return json.dumps(out, separators=(",", ":")).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        md = _json_metadata(serialized, "arrow.variable_shape_tensor")
        fields = storage_type.fields if isinstance(storage_type, t.StructType) else ()
        if len(fields) != 2 or not isinstance(fields[0].type, t.ListType) or \
                not isinstance(fields[1].type, t.FixedSizeListType) or \
                fields[1].type.value_type != t.IntType(32, True):
            raise ArrowInvalid(f"arrow.variable_shape_tensor must be stored as struct<data: list, "
                               f"shape: fixed_size_list<int32>>, got {storage_type}")
        out = cls(fields[0].type.value_type, fields[1].type.list_size, md.get("dim_names"),
                  md.get("permutation"), md.get("uniform_shape"))
        object.__setattr__(out, "_storage", storage_type)  # (the file's names and list kind)
        return out

    def __arrow_ext_class__(self):
        return VariableShapeTensorArray

    def unwrap_value(self, value):
        """A tensor (numpy array of ``ndim`` dimensions) as its storage row."""
        if isinstance(value, np.ndarray):
            if value.ndim != self.ndim:
                raise ArrowInvalid(f"a tensor of {value.ndim} dimensions in a column of "
                                   f"{self.ndim}")
            shape = list(value.shape)
            if self.permutation:
                value = value.transpose(self.permutation)
            return {"data": value.reshape(-1).tolist(), "shape": shape}
        return value

    def __str__(self):
        parts = [f"value_type={self.value_type}", f"ndim={self.ndim}"]
        if self.permutation:
            parts.append("permutation=[" + ",".join(map(str, self.permutation)) + "]")
        if self.dim_names:
            parts.append("dim_names=[" + ",".join(self.dim_names) + "]")
        if self.uniform_shape:
            parts.append("uniform_shape=[" + ",".join("null" if u is None else str(u)
                                                      for u in self.uniform_shape) + "]")
        return f"extension<arrow.variable_shape_tensor[{', '.join(parts)}]>"


class VariableShapeTensorArray(ExtensionArray):
    """Values are tensors: ``a[i]`` is a numpy array of row ``i``'s own shape (a zero-copy
    view, the permutation applied as strides); ``to_pylist()`` gives the storage rows
    (``{"data": [...], "shape": [...]}``)."""

    __slots__ = ()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return super().__getitem__(i)
        k = int(i)
        if k < 0:
            k += self.length
        if not 0 <= k < self.length:
            raise IndexError(f"index {i} out of range for an array of length {self.length}")
        if not self.validity_mask()[k]:
            return None
        return self._tensor(k)

    def _tensor(self, k: int) -> np.ndarray:
        data, shape = self.storage.field(0), self.storage.field(1)
        if not shape.validity_mask()[k] or not data.validity_mask()[k]:
            raise ArrowInvalid(f"variable_shape_tensor row {k}: a null data or shape in a "
                               f"valid tensor")
        dims = shape.slice(k, 1).to_pylist()[0]
        if any(d < 0 for d in dims):
            raise ArrowInvalid(f"variable_shape_tensor row {k}: negative shape {dims}")
        row = data.slice(k, 1)
        offs = row.value_offsets()
        size = int(offs[1] - offs[0])
        if math.prod(dims) != size:
            raise ArrowInvalid(f"variable_shape_tensor row {k}: shape {dims} holds "
                               f"{math.prod(dims)} values, its data {size}")
        flat = row._covered_values().to_numpy(zero_copy_only=True)
        perm = self.type.permutation
        if not perm:
            return flat.reshape(dims)
        return flat.reshape([dims[p] for p in perm]).transpose(np.argsort(perm))


# -- arrow.opaque ------------------------------------------------------------------------------
class OpaqueType(t.ExtensionType):
    """``arrow.opaque``: values of a type arrowmm does not know, kept as their storage, with
    the type's name and vendor."""

    def __init__(self, storage_type: t.DataType, type_name: str, vendor_name: str):
        self.type_name = str(type_name)
        self.vendor_name = str(vendor_name)
        super().__init__(storage_type, "arrow.opaque")

    def __arrow_ext_serialize__(self):
        return json.dumps({"type_name": self.type_name, "vendor_name": self.vendor_name},
                          separators=(",", ":")).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        md = _json_metadata(serialized, "arrow.opaque")
        if not isinstance(md.get("type_name"), str) or not isinstance(md.get("vendor_name"), str):
            raise ArrowInvalid("arrow.opaque metadata needs string 'type_name' and 'vendor_name'")
        return cls(storage_type, md["type_name"], md["vendor_name"])

    def __arrow_ext_class__(self):
        return OpaqueArray

    def __str__(self):
        return (f"extension<arrow.opaque[storage_type={self.storage_type}, "
                f"type_name={self.type_name}, vendor_name={self.vendor_name}]>")


class OpaqueArray(ExtensionArray):
    """``arrow.opaque`` values: a type another system named, read as its storage's values."""

    __slots__ = ()


# -- factories, named as pyarrow names them ----------------------------------------------------
def uuid() -> UuidType:
    """The ``arrow.uuid`` extension type over ``fixed_size_binary(16)`` (``pyarrow.uuid()``)."""
    return UuidType()


def json_(storage_type: t.DataType = t.BinaryType(True)) -> JsonType:
    """The ``arrow.json`` extension type over ``storage_type``: string, large_string or
    string_view (``pyarrow.json_()``)."""
    return JsonType(storage_type)


def bool8() -> Bool8Type:
    """The ``arrow.bool8`` extension type: booleans as int8 bytes (``pyarrow.bool8()``)."""
    return Bool8Type()


def fixed_shape_tensor(value_type: t.DataType, shape: Sequence[int],
                       dim_names: Optional[Sequence[str]] = None,
                       permutation: Optional[Sequence[int]] = None) -> FixedShapeTensorType:
    """The ``arrow.fixed_shape_tensor`` extension type: each value a tensor of ``shape``
    with elements of ``value_type``, optionally named dimensions and a ``permutation`` of
    them (``pyarrow.fixed_shape_tensor``)."""
    return FixedShapeTensorType(value_type, shape, dim_names, permutation)


def opaque(storage_type: t.DataType, type_name: str, vendor_name: str) -> OpaqueType:
    """The ``arrow.opaque`` extension type: values of a type ``vendor_name`` calls
    ``type_name``, carried as ``storage_type`` (``pyarrow.opaque``)."""
    return OpaqueType(storage_type, type_name, vendor_name)


def variable_shape_tensor(value_type: t.DataType, ndim: int,
                          dim_names: Optional[Sequence[str]] = None,
                          permutation: Optional[Sequence[int]] = None,
                          uniform_shape: Optional[Sequence[Optional[int]]] = None
                          ) -> VariableShapeTensorType:
    """The ``arrow.variable_shape_tensor`` extension type: each value a tensor of ``ndim``
    dimensions and its own shape, elements of ``value_type``; ``uniform_shape`` fixes the
    sizes given (``None`` where they vary)."""
    return VariableShapeTensorType(value_type, ndim, dim_names, permutation, uniform_shape)


for _proto in (UuidType(), JsonType(), Bool8Type(), FixedShapeTensorType(t.IntType(8, True), [1]),
               OpaqueType(t.NullType(), "", ""), VariableShapeTensorType(t.IntType(8, True), 1)):
    try:
        t.register_extension_type(_proto)
    except ArrowKeyError:  # (the module imported again: the first registration stands)
        pass
del _proto
