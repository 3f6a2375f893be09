"""Hive partitioning: ``key=value`` folder names become columns, as pyarrow.dataset reads them.

A value that every file's folder gives as an integer within int32 (ASCII digits, one optional
``-``) makes an ``int32`` column, anything else ``string`` (pyarrow's inference, less its hex
``0x10``); ``__HIVE_DEFAULT_PARTITION__`` is null, and values are URL-decoded (UTF-8, strictly).
Keys come in the order their folders are first seen.  Each value stays its folder's text until
its field's type is final (inferred, or given by ``schema=``), and is converted once then.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from typing import Dict, List, Optional, Sequence, Tuple

from .. import types as t
from ..errors import ArrowInvalid

__all__ = ["HIVE_NULL", "hive_pairs", "infer_hive", "partition_value"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_INT32 = (-(2**31), 2**31 - 1)
# (str.isdigit() and int() take any Unicode digit, "²" and "١" too: pyarrow reads those as text)
_SIGNED = re.compile(r"-?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")


def hive_pairs(path: str, base: Optional[str]) -> List[Tuple[str, Optional[str]]]:
    """The ``(key, value)`` of each ``key=value`` folder of ``path`` (below ``base``, when
    the dataset was a directory), value None for the hive null."""
    folder = os.path.dirname(path)
    if base:
        folder = os.path.relpath(folder, base)
    out = []
    for part in folder.replace(os.sep, "/").split("/"):
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        if not key:
            continue
        key, value = _decoded(key, part, path), _decoded(value, part, path)
        out.append((key, None if value == HIVE_NULL else value))
    return out


def _decoded(text: str, part: str, path: str) -> str:
    """``text`` URL-decoded: ``ArrowInvalid`` when that is not UTF-8 (unquote's default put
    U+FFFD in, so different folders could read as one value)."""
    try:
        out = urllib.parse.unquote(text, errors="strict")
        out.encode("utf-8")  # (a folder name that was not UTF-8 holds surrogate escapes)
    except UnicodeError:
        raise ArrowInvalid(f"{path}: partition folder {part!r} is not valid UTF-8 after URL "
                           f"decoding") from None
    return out


def _integer(text: str, pattern: "re.Pattern[str]") -> Optional[int]:
    """``text`` as an integer when ``pattern`` matches all of it, else None (as None past 20
    digits: beyond every integer type, and int() refuses 4,300)."""
    if not pattern.fullmatch(text) or len(text.lstrip("-0")) > 20:
        return None
    return int(text)


def _as_int32(text: str) -> Optional[int]:
    v = _integer(text, _SIGNED)
    return v if v is not None and _INT32[0] <= v <= _INT32[1] else None


def infer_hive(per_file: Sequence[List[Tuple[str, Optional[str]]]], paths: Sequence[str]
               ) -> Tuple[List[t.Field], List[Dict[str, Optional[str]]]]:
    """The partition fields, and each file's values as its folders' text (key -> text, None
    for a null or a key its folders lack): ``partition_value`` converts them."""
    keys: List[str] = []
    texts: Dict[str, List[Optional[str]]] = {}
    for pairs, path in zip(per_file, paths):
        seen = set()
        for key, value in pairs:
            if key in seen:
                raise ArrowInvalid(f"{path}: partition key {key!r} appears twice in its folders")
            seen.add(key)
            if key not in texts:
                keys.append(key)
                texts[key] = []
            texts[key].append(value)
    fields = []
    for key in keys:
        given = [v for v in texts[key] if v is not None]
        is_int = bool(given) and all(_as_int32(v) is not None for v in given)
        fields.append(t.Field(key, t.int32() if is_int else t.string(), True))
    values = []
    for pairs in per_file:
        got = dict(pairs)
        values.append({key: got.get(key) for key in keys})
    return fields, values


def partition_value(text: str, field: t.Field, path: str):
    """A folder's ``text`` as a value of ``field`` (integers and strings, as pyarrow parses
    them, less its hex): ``ArrowInvalid`` naming the key, the value and the file when it is
    not one."""
    dtype = field.storage_type
    if isinstance(dtype, t.IntType):
        bits = dtype.bit_width
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if dtype.signed else \
            (0, 2 ** bits - 1)
        v = _integer(text, _SIGNED if dtype.signed else _UNSIGNED)
        if v is not None and low <= v <= high:
            return v
        raise ArrowInvalid(f"{path}: partition value {text!r} of {field.name!r} is not an "
                           f"integer in [{low}, {high}], as the schema's {field.type} says")
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and not dtype.utf8:
        return text.encode("utf-8")  # (binary: the folder's UTF-8 bytes)
    return text
