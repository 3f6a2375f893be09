"""Hive partitioning: ``key=value`` folder names become columns, as pyarrow.dataset reads them.

A value that every file's folder gives as an integer within int32 makes an ``int32`` column,
anything else ``string`` (pyarrow's inference); ``__HIVE_DEFAULT_PARTITION__`` is null, and
values are URL-decoded.  Keys come in the order their folders are first seen.
"""
from __future__ import annotations

import os
import urllib.parse
from typing import Dict, List, Optional, Sequence, Tuple

from .. import types as t
from ..errors import ArrowInvalid

__all__ = ["HIVE_NULL", "hive_pairs", "infer_hive"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_INT32 = (-(2**31), 2**31 - 1)


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
        value = urllib.parse.unquote(value)
        out.append((urllib.parse.unquote(key), None if value == HIVE_NULL else value))
    return out


def _as_int32(text: str) -> Optional[int]:
    s = text.strip()
    if not s or s != text or not (s.lstrip("+-").isdigit()):
        return None
    v = int(s)
    return v if _INT32[0] <= v <= _INT32[1] else None


def infer_hive(per_file: Sequence[List[Tuple[str, Optional[str]]]], paths: Sequence[str]
               ) -> Tuple[List[t.Field], List[Dict[str, object]]]:
    """The partition fields, and each file's values (key -> Python value or None)."""
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
    kinds = {}
    for key in keys:
        given = [v for v in texts[key] if v is not None]
        is_int = bool(given) and all(_as_int32(v) is not None for v in given)
        kinds[key] = is_int
        fields.append(t.Field(key, t.int32() if is_int else t.string(), True))
    values = []
    for pairs in per_file:
        got = dict(pairs)
        values.append({key: (None if got.get(key) is None else
                             _as_int32(got[key]) if kinds[key] else got[key]) for key in keys})
    return fields, values
