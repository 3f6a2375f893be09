"""Filter expressions: ``field("x") > 3``, ``&``, ``|``, ``~``, ``isin``, ``is_null``,
``is_valid``, as ``pyarrow.compute.Expression`` spells them.

Why an object and not only tuples: a predicate that nests (``(a > 1) | ~b.isin([...])``) has
no list-of-tuples form, and the same object filters a ``Table`` and a ``Dataset``.  An
Expression is an immutable tree (safe to share between threads); ``evaluate`` in
``arrowmm.compute.predicate`` judges it over a batch's columns.
"""
from __future__ import annotations

import datetime
import decimal
from typing import List, Optional, Union, overload

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["Expression", "field", "filter_value", "COMPARISONS"]

#: The comparison operators and the name pyarrow's repr gives each.
COMPARISONS = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_SCALARS = (bool, int, float, str, bytes, decimal.Decimal, datetime.date, datetime.datetime,
            datetime.time, datetime.timedelta, np.generic)
_NUMPY_SCALARS = (np.integer, np.floating, np.bool_, np.datetime64, np.timedelta64, np.bytes_,
                  np.str_)


def _is_pyarrow(value) -> bool:
    return type(value).__module__.split(".")[0] == "pyarrow"


def _scalar(value, where: str):
    """``value`` checked to be a plain scalar (or None, a null) a filter may compare with.
    numpy's NaT is a null, as in pyarrow, and so is pandas' NaT; a pyarrow scalar is its
    ``as_py()``."""
    if _is_pyarrow(value) and hasattr(value, "as_py"):
        value = value.as_py()
    if value is None or isinstance(value, _SCALARS):
        if isinstance(value, np.generic) and not isinstance(value, _NUMPY_SCALARS):
            raise ArrowInvalid(f"{where}: cannot compare with a numpy {value.dtype} scalar")
        if isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value):
            return None
        if isinstance(value, datetime.date) and value != value:
            return None  # pandas' NaT (a datetime equal to nothing): a null as numpy's
        return value
    if isinstance(value, Expression):
        raise ArrowNotImplementedError(f"{where}: comparing two expressions is not supported; "
                                       f"compare a field with a scalar value")
    raise ArrowInvalid(f"{where}: {type(value).__name__} {value!r} is not a scalar value")


def filter_value(value, where: str):
    """A filter value as an ``Expression`` holds it (``_scalar``): the dataset's tuples
    (``arrowmm.dataset.filters``) take the same values, NaT and pyarrow scalars too."""
    return _scalar(value, where)


class Expression:
    """A predicate over a table's columns (or a field reference, the leaf of one).

    Made by ``arrowmm.field(name)`` (or ``arrowmm.compute.field``) and combined with Python's
    operators; ``bool(expression)`` raises, as pyarrow's does, so that ``a < x < b`` (which
    Python evaluates with ``and``) cannot silently drop half of the test.

    Examples
    --------
    >>> import arrowmm
    >>> e = (arrowmm.field("x") > 3) & ~arrowmm.field("s").isin(["a", "b"])
    >>> e
    <arrowmm.compute.Expression ((x > 3) and invert(is_in(s, ['a', 'b'])))>
    """

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, *args):
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "args", args)

    def __setattr__(self, name, value):
        raise AttributeError("an Expression is immutable")

    # -- building --------------------------------------------------------------------------
    def _compare(self, op: str, other) -> "Expression":
        if self.kind != "field":
            raise ArrowNotImplementedError(f"{self!r} {op} ...: comparisons apply to a field "
                                           f"(arrowmm.field(name)), not to {self.kind}")
        if isinstance(other, Expression):
            if other.kind == "field":
                raise ArrowNotImplementedError(f"{self} {op} {other}: comparing two fields is "
                                               f"not supported; compare a field with a value")
        return Expression("compare", op, self, _scalar(other, f"{self} {op} {other!r}"))

    def __eq__(self, other):  # type: ignore[override]
        return self._compare("==", other)

    def __ne__(self, other):  # type: ignore[override]
        return self._compare("!=", other)

    def __lt__(self, other):
        return self._compare("<", other)

    def __le__(self, other):
        return self._compare("<=", other)

    def __gt__(self, other):
        return self._compare(">", other)

    def __ge__(self, other):
        return self._compare(">=", other)

    __hash__ = None  # type: ignore[assignment]  (== builds an expression, as in pyarrow)

    def _logical(self, other, kind: str) -> "Expression":
        if not isinstance(other, Expression):
            raise ArrowInvalid(f"{self} {kind} {other!r}: both sides must be expressions")
        return Expression(kind, self, other)

    def __and__(self, other):
        return self._logical(other, "and")

    def __or__(self, other):
        return self._logical(other, "or")

    def __rand__(self, other):
        return self._logical(other, "and")

    def __ror__(self, other):
        return self._logical(other, "or")

    def __invert__(self):
        return Expression("not", self)

    def isin(self, values) -> "Expression":
        """True where the field's value is one of ``values`` (a null row matches when
        ``values`` holds None, as pyarrow's ``is_in``; the answer is never null)."""
        self._need_field("isin")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ArrowInvalid(f"{self}.isin: needs a list of values, got {values!r}")
        values = tuple(_scalar(v, f"{self}.isin") for v in values)
        return Expression("isin", self, values)

    def is_null(self) -> "Expression":
        """True where the field is null (a NaN is a value, as pyarrow's default)."""
        self._need_field("is_null")
        return Expression("is_null", self)

    def is_valid(self) -> "Expression":
        """True where the field holds a value."""
        self._need_field("is_valid")
        return Expression("is_valid", self)

    def _need_field(self, what: str) -> None:
        if self.kind != "field":
            raise ArrowNotImplementedError(f"{what} applies to a field, not to {self}")

    # -- reading ---------------------------------------------------------------------------
    def __bool__(self):
        raise ArrowInvalid("an Expression has no truth value: combine with & | ~, not "
                           "'and' / 'or' / 'not' (or a chained comparison such as a < x < b)")

    def equals(self, other) -> bool:
        """Whether ``other`` is the same expression (same tree, same values)."""
        if not isinstance(other, Expression) or self.kind != other.kind:
            return False
        if len(self.args) != len(other.args):
            return False
        for a, b in zip(self.args, other.args):
            if isinstance(a, Expression):
                if not a.equals(b):
                    return False
            elif type(a) is not type(b) or a != b:
                return False
        return True

    def field_names(self) -> List[str]:
        """Every field the expression reads, in order of appearance."""
        out: List[str] = []
        stack = [self]
        while stack:
            e = stack.pop()
            if e.kind == "field":
                if e.args[0] not in out:
                    out.append(e.args[0])
            else:
                stack.extend(reversed([a for a in e.args if isinstance(a, Expression)]))
        return out

    def __str__(self):
        k, a = self.kind, self.args
        if k == "field":
            return a[0]
        if k == "compare":
            return f"({a[1]} {a[0]} {a[2]!r})"
        if k in ("and", "or"):
            return f"({a[0]} {k} {a[1]})"
        if k == "not":
            return f"invert({a[0]})"
        if k == "isin":
            return f"is_in({a[0]}, {list(a[1])!r})"
        return f"{k}({a[0]})"

    def __repr__(self):
        return f"<arrowmm.compute.Expression {self}>"

    def __reduce__(self):
        return (Expression, (self.kind, *self.args))


@overload
def field(name: str, type: None = None) -> "Expression": ...  # noqa: A002


@overload
def field(name: str, type: Union[t.DataType, str], nullable: bool = True,  # noqa: A002
          metadata=None, *, dictionary_id: Optional[int] = None) -> t.Field: ...


def field(name, type: Union[t.DataType, str, None] = None, nullable: bool = True,  # noqa: A002
          metadata=None, *, dictionary_id: Optional[int] = None):
    """A schema ``Field`` (``field(name, type, nullable=True, metadata=None)``, as
    ``pyarrow.field``), or, given a name only, a reference to that column in a filter
    expression (as ``pyarrow.compute.field``).

    pyarrow splits the two: ``pyarrow.field("x")`` with no type raises ``TypeError``, and
    references are made by ``pyarrow.compute.field``.  arrowmm's ``field`` makes both
    (``arrowmm.compute.field`` too), told apart by whether a type is given.

    Examples
    --------
    >>> import arrowmm
    >>> arrowmm.field("x", arrowmm.int64())
    arrowmm.Field<x: int64>
    >>> arrowmm.field("x") >= 3
    <arrowmm.compute.Expression (x >= 3)>
    """
    if type is None:
        if not isinstance(name, str):
            raise ArrowInvalid(f"field(name): a column name (str) is needed, got {name!r}")
        if not nullable or metadata is not None or dictionary_id is not None:
            raise ArrowInvalid(f"field({name!r}) without a type is a column reference: "
                               f"nullable, metadata and dictionary_id need a type")
        return Expression("field", name)
    return t.Field(name, type, nullable, metadata, dictionary_id=dictionary_id)
