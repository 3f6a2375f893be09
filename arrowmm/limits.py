"""How much a file or stream may ask of the reader: the limits on untrusted input.

Every count and length in an IPC file comes from whoever wrote it.  Most are
checked against the bytes really present (a buffer must lie inside its body,
a body inside the file, a vector inside its flatbuffer), which needs no limit.
What the bytes present cannot bound is limited here instead, with defaults far
above what honest files use:

=================================== ========= ================================================
limit                               default   what it bounds
=================================== ========= ================================================
``max_nesting``                     64        depth of nested types (list<list<...>>, structs,
                                              ...); pyarrow's limit too.  At most 128: the
                                              readers recurse per level
``max_fields``                      1,048,576 fields of a schema, counting nested children
``max_metadata_size``               256 MiB   the flatbuffer of one message or of the footer
                                              (a stream's length prefix is refused before any
                                              of it is read)
``max_custom_metadata_size``        64 MiB    keys plus values of one custom-metadata table
                                              (schema, field, message or footer)
``max_dictionary_batches``          65,536    dictionary batches of one dictionary id (the
                                              first one and its deltas / replacements) in a
                                              file or a stream
``max_decompressed_size``           4 GiB     uncompressed length of one compressed buffer
                                              (besides the codec's own expansion bound)
``max_batch_decompressed_size``     16 GiB    uncompressed lengths of the buffers of one
                                              record (or dictionary) batch, summed as its
                                              columns are loaded: each buffer is refused
                                              before it is decoded if it would go beyond
``max_reader_decompression_ratio``  65,536    with the next one, the default budget of one
                                              reader: the uncompressed lengths of every
                                              buffer it decompresses over its life (each
                                              buffer of each message counted once, however
                                              often it is decoded again) may add up to this
                                              many times the source's bytes (a stream read
                                              from a file object: the bytes read so far)...
``min_reader_decompression_budget`` 64 MiB    ...or to this, whichever is more.  A reader
                                              opened with ``max_decompressed_bytes=N`` has
                                              the budget N instead
=================================== ========= ================================================

The per-reader default is set by what legitimate files reach: an all-zero (or all-null)
int64 column of 1 GiB compresses to 33 KB with zstd (32,262:1, pyarrow's writer and
arrowmm's alike; zstd cannot do better than about 32,768:1, a 4-byte block per 128 KiB) and
to 4.4 MB with LZ4 (243:1).  So a 66 KiB zstd file that decodes to 2 GiB may be exactly such
a column, and no default tied to the file's size can refuse it without refusing that file.
What the default does stop is decoding more than the source could honestly hold: buffers
or batches that point at the same compressed bytes (each within the per-buffer bound)
add up to at most 65,536 times the source, however many batches there are (without it,
16 GiB per batch, with no bound over batches).  To read untrusted input with a budget of
your own, pass ``max_decompressed_bytes=`` to ``open_file`` / ``open_stream`` / ``open``.
Readers that know no source size (``read_record_batch``, channels) keep the per-buffer and
per-batch limits only.

Beyond a limit the reader raises ``ArrowInvalid`` naming the limit and how to
raise it.  The limits are process-wide module attributes, read where they are
checked (no per-value lookups); change them with ``set_limits`` or, for a
block of code, ``override``:

>>> import arrowmm
>>> arrowmm.limits.max_nesting
64
>>> with arrowmm.limits.override(max_nesting=128):
...     arrowmm.limits.max_nesting
128
>>> arrowmm.limits.max_nesting
64
"""
from __future__ import annotations

import contextlib
from typing import Dict, Iterator

from .errors import ArrowInvalid

__all__ = ["max_nesting", "max_fields", "max_metadata_size", "max_custom_metadata_size",
           "max_dictionary_batches", "max_decompressed_size", "max_batch_decompressed_size",
           "max_reader_decompression_ratio", "min_reader_decompression_budget", "DEFAULTS",
           "current", "set_limits", "override", "reset"]

#: The defaults, by name.
DEFAULTS: Dict[str, int] = {
    "max_nesting": 64,
    "max_fields": 1 << 20,
    "max_metadata_size": 256 << 20,
    "max_custom_metadata_size": 64 << 20,
    "max_dictionary_batches": 1 << 16,
    "max_decompressed_size": 4 << 30,
    "max_batch_decompressed_size": 16 << 30,
    "max_reader_decompression_ratio": 1 << 16,
    "min_reader_decompression_budget": 64 << 20,
}

#: Largest value each limit accepts (None: any positive int).  Type nesting is walked
#: recursively (parsing, planning, conversion), so it stays well inside Python's recursion limit.
CEILINGS: Dict[str, int] = {"max_nesting": 128}

max_nesting = DEFAULTS["max_nesting"]
max_fields = DEFAULTS["max_fields"]
max_metadata_size = DEFAULTS["max_metadata_size"]
max_custom_metadata_size = DEFAULTS["max_custom_metadata_size"]
max_dictionary_batches = DEFAULTS["max_dictionary_batches"]
max_decompressed_size = DEFAULTS["max_decompressed_size"]
max_batch_decompressed_size = DEFAULTS["max_batch_decompressed_size"]
max_reader_decompression_ratio = DEFAULTS["max_reader_decompression_ratio"]
min_reader_decompression_budget = DEFAULTS["min_reader_decompression_budget"]


def current() -> Dict[str, int]:
    """The limits in force, by name."""
    return {name: globals()[name] for name in DEFAULTS}


def set_limits(**limits: int) -> Dict[str, int]:
    """Set some limits for the whole process; returns the previous values of those set.

    Raises ``ArrowInvalid`` (setting nothing) for an unknown name or a value that is
    not a positive integer within the limit's ceiling.
    """
    for name, value in limits.items():
        if name not in DEFAULTS:
            raise ArrowInvalid(f"unknown limit {name!r}; the limits are {', '.join(DEFAULTS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArrowInvalid(f"limit {name} must be a positive integer, got {value!r}")
        ceiling = CEILINGS.get(name)
        if ceiling is not None and value > ceiling:
            raise ArrowInvalid(f"limit {name} can be at most {ceiling}, got {value}")
    previous = {name: globals()[name] for name in limits}
    globals().update(limits)
    return previous


@contextlib.contextmanager
def override(**limits: int) -> Iterator[Dict[str, int]]:
    """Set limits inside a ``with`` block and restore them after (process-wide, not per thread)."""
    previous = set_limits(**limits)
    try:
        yield current()
    finally:
        globals().update(previous)


def reset() -> None:
    """Back to ``DEFAULTS``."""
    globals().update(DEFAULTS)


class LimitExceeded(ArrowInvalid):
    """Input beyond one of these limits: an ``ArrowInvalid`` that is a refusal of the size,
    not a finding of damage (a reader does not look for an unfinished append or point to
    repair on one)."""


def exceeded(name: str, value: int, what: str) -> ArrowInvalid:
    """The error for ``what`` (value ``value``) beyond limit ``name``."""
    return LimitExceeded(f"{what}: {value:,} is beyond the limit {name}={globals()[name]:,} "
                        f"(arrowmm.set_limits({name}=...) raises it)")
