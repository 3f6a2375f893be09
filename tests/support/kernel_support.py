"""Guard pages for kernel tests: input that ends right where an inaccessible page begins."""
import contextlib
import ctypes
import mmap
import sys

import pytest

PAGE = mmap.PAGESIZE


@contextlib.contextmanager
def guarded(data):
    """Read-only ``data`` ending exactly where an inaccessible page begins, so a
    kernel reading even one byte past the end crashes instead of passing."""
    if not sys.platform.startswith("linux"):
        pytest.skip("guard pages need mprotect")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    size = (len(data) // PAGE + 2) * PAGE
    m = mmap.mmap(-1, size)
    start = size - PAGE - len(data)
    m[start:start + len(data)] = data
    anchor = ctypes.c_char.from_buffer(m)
    assert libc.mprotect(ctypes.addressof(anchor) + size - PAGE, PAGE, 0) == 0
    del anchor
    view = memoryview(m)[start:start + len(data)].toreadonly()
    try:
        yield view
    finally:
        view.release()
        m.close()
