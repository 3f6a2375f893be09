"""The exception classes arrowmm raises on purpose.

Each class is also a built-in exception (pyarrow's habit), so callers that
catch ``ValueError`` or ``NotImplementedError`` keep working.
"""

__all__ = ["ArrowError", "ArrowInvalid", "ArrowNotImplementedError", "ArrowKeyError",
           "ArrowIndexError", "ArrowTypeError", "ProducerDiedError", "HookError"]


class ArrowError(Exception):
    """Base of every error arrowmm raises on purpose."""


class ArrowInvalid(ArrowError, ValueError):
    """Malformed, truncated or inconsistent input, or arguments that don't fit."""


class ArrowNotImplementedError(ArrowError, NotImplementedError):
    """Valid input that uses something arrowmm does not support."""


class ArrowKeyError(ArrowError, KeyError):
    """A name that is not registered, or registered already (extension types)."""


class ArrowIndexError(ArrowError, IndexError):
    """A position outside the data (``take`` of an index out of bounds), as pyarrow's."""


class ArrowTypeError(ArrowError, TypeError):
    """Types that do not fit together where pyarrow says so with its own ``ArrowTypeError``
    (a cast between fixed-size lists of different sizes, a struct cast missing a non-nullable
    field)."""


class ProducerDiedError(ArrowError, ConnectionError):
    """The producer of a shared-memory channel died without closing it (``arrowmm.shm.Channel``):
    the batches it published were delivered, and no more will come."""


class HookError(ArrowError, RuntimeError):
    """A hook of ``arrowmm.hooks`` called while empty (only a lower layer of arrowmm was
    imported), or set a second time to another function: a fault of the program, not of data."""
