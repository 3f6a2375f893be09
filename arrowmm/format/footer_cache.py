"""Parsed file footers kept by their bytes, so opening the same file again (a dataset scanned
twice, a file opened per request) skips the footer's parse.

Why by content: the key is the footer's bytes themselves (with the parse limits and the
extension registry's generation the parse depends on), so a hit is the parse of exactly
these bytes, whatever file they came from and however it was changed since; nothing can go
stale.  Only footers up to ``MAX_FOOTER_BYTES`` are kept: for those the copy and the hash
(a few microseconds for a 100-column file of 1,000 batches) cost far less than the parse
(about 60 us there), while a huge footer (200,000 batches) is mostly its block vector,
which the parse only views, so a copy would cost more than it saves.  The record handed
out views the cached bytes (read-only), never the caller's mapping, and gets its own
metadata dict.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from .. import limits
from ..types.extension import registry_generation
from .decode import FooterRecord, parse_footer

__all__ = ["parse_footer_cached", "clear", "MAX_FOOTER_BYTES", "MAX_ENTRIES"]

#: The biggest footer kept, in bytes.
MAX_FOOTER_BYTES = 256 * 1024
#: The most footers kept (least recently used dropped first): at most 16 MiB of keys.
MAX_ENTRIES = 64

_CACHE: "OrderedDict[tuple, FooterRecord]" = OrderedDict()
_LOCK = threading.Lock()


def parse_footer_cached(view) -> FooterRecord:
    """``parse_footer`` of ``view`` (a buffer of the footer's bytes), from the cache when the
    same bytes were parsed before under the same limits and extension registry."""
    size = len(view)
    if size > MAX_FOOTER_BYTES:
        return parse_footer(memoryview(view))
    data = bytes(view)
    key = (data, limits.max_nesting, limits.max_fields, limits.max_custom_metadata_size,
           registry_generation())
    with _LOCK:
        record = _CACHE.get(key)
        if record is not None:
            _CACHE.move_to_end(key)
    if record is None:
        record = parse_footer(data)  # (errors are raised, never kept)
        with _LOCK:
            _CACHE[key] = record
            while len(_CACHE) > MAX_ENTRIES:
                _CACHE.popitem(last=False)
    metadata = record.metadata
    return FooterRecord(record.version, record.schema, record.dictionaries,
                        record.record_batches, dict(metadata) if metadata else metadata,
                        record.features)


def clear() -> None:
    """Forget every kept footer."""
    with _LOCK:
        _CACHE.clear()
