"""The one check of a shared-memory name, for segments made by ``share`` and for channels.

Why a module of its own: ``segment`` and ``ring`` (and so ``Channel.create`` and
``Channel.attach``) must refuse the same names, for the same reasons, in the same words.

A name is a file name under ``/dev/shm`` (or a ``shm_open`` name): 1 to 255 bytes as the
system sees them (encoded with the file system encoding), no ``/`` or NUL, not starting with
``.`` (hidden: arrowmm's own temporaries).  It must also read as itself wherever it is shown
(``ls /dev/shm``, ``arrowmm shm ls``, an error message): no control character (a newline
would forge a line of output, an escape sequence would drive the terminal), no invisible
character (zero-width, bidirectional overrides, variation selectors, fillers: the name would
read as another), no line or paragraph separator, and no undecodable byte (a lone surrogate).
"""
from __future__ import annotations

import bisect
import os
import unicodedata

from ..errors import ArrowInvalid

__all__ = ["MAX_NAME", "check_name"]

MAX_NAME = 255  # bytes: NAME_MAX

# Unicode general categories a name must not contain, with what each is called in errors
_REFUSED = {"Cc": "a control character", "Cf": "an invisible formatting character",
            "Zl": "a line separator", "Zp": "a paragraph separator",
            "Cs": "an undecodable byte (a lone surrogate)"}

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), first and last:
# characters shown as nothing.  Most are Cf (refused above); the others (combining grapheme
# joiner, variation selectors, Hangul fillers, Mongolian selectors...) are marks or letters
# by category, and "data" + U+034F would list as "data".  unicodedata has no such property.
_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
              (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
              (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
              (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
              (0xE0000, 0xE0FFF))
_IGNORABLE_FIRSTS = [first for first, _ in _IGNORABLE]


def _ignorable(char: str) -> bool:
    k = bisect.bisect_right(_IGNORABLE_FIRSTS, ord(char)) - 1
    return k >= 0 and ord(char) <= _IGNORABLE[k][1]


def check_name(name, what: str) -> str:
    """``name`` if it is a valid shared-memory name, else ``ArrowInvalid`` naming it (its
    ``repr``) and what is wrong; ``what`` says whose name it is ("shared segment",
    "channel")."""
    if not isinstance(name, str):
        raise ArrowInvalid(f"a {what} name must be a str, got {type(name).__name__}")
    for index, char in enumerate(name):
        kind = _REFUSED.get(unicodedata.category(char))
        if kind is None and _ignorable(char):
            kind = "an invisible character"
        if kind is not None:
            raise ArrowInvalid(f"invalid {what} name {name!r}: character {char!r} "
                               f"(U+{ord(char):04X}, {kind}) at index {index}; names must "
                               f"print as themselves (in /dev/shm listings, arrowmm shm ls, "
                               f"errors)")
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:
        raw = None
    if not raw or b"/" in raw or b"\0" in raw or raw.startswith(b".") or len(raw) > MAX_NAME:
        size = "not encodable" if raw is None else f"{len(raw)} bytes"
        raise ArrowInvalid(f"invalid {what} name {name!r} ({size}): 1 to {MAX_NAME} bytes, "
                           f"no '/' or NUL, not starting with '.'")
    return name
