"""Every input in ``tests/regressions/`` goes through every fuzz target and meets only the
library's errors (``ArrowInvalid`` / ``ArrowNotImplementedError``) or none.

The files are what the fuzzer (``fuzz/run.py``) found, plus hand-made inputs for bugs found
otherwise, each named ``<target>-<what>.bin``; README.md in that directory says what each one
broke and where it was fixed.  ``python fuzz/replay.py tests/regressions`` runs the same check
outside pytest (``fuzz/sanitize.sh`` does, under AddressSanitizer).
"""
import os
import sys
from pathlib import Path

import pytest

from test_hostile import address_space_limit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fuzz"))
import harness  # noqa: E402

REGRESSIONS = ROOT / "tests" / "regressions"
FILES = sorted(p.name for p in REGRESSIONS.glob("*.bin"))


def test_there_are_regression_files():
    assert FILES, f"no *.bin files in {REGRESSIONS}"


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("target", list(harness.TARGETS))
def test_regression_input(name, target):
    data = (REGRESSIONS / name).read_bytes()
    with address_space_limit():
        harness.run_target(target, data)


def test_every_file_is_described():
    readme = (REGRESSIONS / "README.md").read_text()
    missing = [n for n in FILES if n not in readme]
    assert not missing, f"describe {missing} in {REGRESSIONS / 'README.md'}"


#: What reading each hand-made input must say (a fragment of the first error), read through
#: ``arrowmm.open`` over a file object (the chunk-fed path) with every batch validated.
EXPECTED_ERRORS = {
    "stream-nesting-1100-lists.bin": "max_nesting",
    "file-schema-dag-2pow40-fields.bin": "more fields than",
    "chunks-metadata-length-2gib.bin": "max_metadata_size",
    "full-lz4-declares-2pow62-bytes.bin": "max_decompressed_size",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_hand_made_inputs_fail_as_described(name):
    import io

    import arrowmm
    data = (REGRESSIONS / name).read_bytes()
    with pytest.raises(arrowmm.ArrowInvalid, match=EXPECTED_ERRORS[name]):
        with arrowmm.open(io.BytesIO(data)) as reader:
            for batch in reader:
                batch.validate(full=True)
