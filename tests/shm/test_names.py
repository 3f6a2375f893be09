"""The one check of shared-memory names (``arrowmm.shm.names``): a character shown as nothing
is refused wherever a name is taken, whatever its general category (review 19: F6: a combining
grapheme joiner, a variation selector or a Hangul filler passed, and "data" + U+034F listed as
"data" next to the real one).  The characters below are written out from Unicode's
Default_Ignorable_Code_Point list, not taken from the module's table.
"""
from __future__ import annotations

import os
import sys

import pytest

import arrowmm
from arrowmm import shm
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel
from arrowmm.shm.names import check_name

PREFIX = f"amm-names-{os.getpid()}-"
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])

# the first and last of each Default_Ignorable_Code_Point range (and one inside the long ones)
IGNORABLE = [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180E, 0x180F,
             0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x2065, 0x206F, 0x3164, 0xFE00, 0xFE0F,
             0xFEFF, 0xFFA0, 0xFFF0, 0xFFF8, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0000,
             0xE0001, 0xE0100, 0xE01EF, 0xE0FFF]
# their visible neighbours (letters, marks, symbols), and names in other scripts
VISIBLE = [0x034E, 0x115E, 0x1161, 0x17B3, 0x17B6, 0x3163, 0x3165, 0xFE10, 0xFFA1, 0x1D172,
           0x1D17B, 0x00E9, 0x30C7]


@pytest.mark.parametrize("code", IGNORABLE, ids=lambda code: f"U+{code:04X}")
def test_a_character_shown_as_nothing_is_refused(code):
    bad = f"data{chr(code)}"
    with pytest.raises(ArrowInvalid, match="invalid channel name") as info:
        check_name(bad, "channel")
    assert repr(bad) in str(info.value) and f"U+{code:04X}" in str(info.value)
    assert "at index 4" in str(info.value)


@pytest.mark.parametrize("code", VISIBLE, ids=lambda code: f"U+{code:04X}")
def test_visible_characters_next_to_them_are_kept(code):
    assert check_name(f"data{chr(code)}", "channel") == f"data{chr(code)}"


@pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                    reason="segments and channels need /dev/shm")
@pytest.mark.parametrize("code", [0x034F, 0xFE0F, 0x3164, 0xE0100], ids=lambda code: f"U+{code:04X}")
def test_share_and_channels_refuse_them(name, code):
    bad = f"{name}{chr(code)}"
    for call in (lambda: shm.share(arrowmm.record_batch({"x": [1]}), name=bad),
                 lambda: Channel.create(bad, SCHEMA, capacity=1 << 16, slots=2),
                 lambda: Channel.attach(bad)):
        with pytest.raises(ArrowInvalid, match="an invisible character"):
            call()
    assert not any(n.startswith(name) for n in os.listdir("/dev/shm"))
