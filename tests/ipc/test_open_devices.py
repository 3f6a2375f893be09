"""A pipe or device opened as an IPC file is read whole only when it begins as one: an
endless device (``/dev/zero``) is refused at its first bytes, not read until memory runs
out."""
import os
import subprocess
import sys

import pytest

_ENDLESS = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a runaway read would end here
import arrowmm
try:
    arrowmm.open_file("/dev/zero")
except BaseException as error:
    print(type(error).__name__, error)
"""


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_device_is_refused_at_its_first_bytes():
    # (it was read whole before the magic was looked at: until memory ran out)
    done = subprocess.run([sys.executable, "-c", _ENDLESS], capture_output=True, text=True)
    assert done.stdout.startswith("ArrowInvalid /dev/zero: does not start with the Arrow "
                                  "file magic"), done.stdout + done.stderr
