"""Previews of values, laid out the way pyarrow's ``repr`` lays them out.

An array prints as pyarrow's ``PrettyPrint`` does (one value per line, the first and last
ten when there are more than twenty); a batch prints its schema then one line per column.
Values print as Arrow C++ prints them: ``null``, ``true``, strings in double quotes, binary
as upper-case hex, floats in their shortest form (``1``, ``2.5``, ``1e+20``).
"""
from __future__ import annotations

import datetime
import math
import uuid

__all__ = ["format_value", "array_lines", "inline_values", "preview", "WINDOW"]

#: values shown from each end of a long array (pyarrow's default window)
WINDOW = 10


def _float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(v)
    if text.endswith(".0"):
        text = text[:-2]
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        text = f"{mantissa}e{sign}{digits}"
    return text


def format_value(v) -> str:
    """One value as Arrow C++ prints it inside an array."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex().upper()
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, uuid.UUID):
        return v.bytes.hex().upper()
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}: {format_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(format_value(x) for x in v) + "]"
    return str(v)


def array_lines(head, tail) -> str:
    """The bracketed, one-per-line body of an array repr."""
    if not head and tail is None:
        return "[]"
    body = ",\n".join(f"  {format_value(v)}" for v in head)
    if tail is not None:  # (pyarrow puts no comma after the ellipsis)
        body += ",\n  ...\n" + ",\n".join(f"  {format_value(v)}" for v in tail)
    return "[\n" + body + "\n]"


def inline_values(head, tail) -> str:
    """The one-line form of a column in a batch repr: ``[1,2,...,29]``."""
    parts = [format_value(v) for v in head]
    if tail is not None:
        parts.append("...")
        parts.extend(format_value(v) for v in tail)
    return "[" + ",".join(parts) + "]"


def preview(array):
    """(head, tail) Python values of ``array`` for a repr (tail None when all fit)."""
    n = len(array)
    if n <= 2 * WINDOW:
        return array.to_pylist(), None
    return array.slice(0, WINDOW).to_pylist(), array.slice(n - WINDOW, WINDOW).to_pylist()
