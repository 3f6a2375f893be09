"""A process forked while a writer is open, which ends normally, leaves the parent's write be.

A defect review 13 proved: the child's interpreter finalizes its copy of the writer, which
aborted it: for ``append_file`` that cut the parent's append under it (the parent's
``close()`` then reported success over a footer naming zeroed batches); for ``new_file`` it
removed the parent's temporary (the parent's ``close()`` failed with FileNotFoundError),
on a local disk or on an fsspec store written through a temporary.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

_FORKED_CHILD = textwrap.dedent("""
    import json, os, sys, numpy as np, arrowmm
    path, kind = sys.argv[1], sys.argv[2]
    schema = arrowmm.schema([("t", arrowmm.int64())])
    store = None
    if kind == "append":
        with arrowmm.new_file(path, schema) as w:
            w.write({"t": np.arange(3)})
        writer = arrowmm.append_file(path)
    elif kind == "store":  # (an fsspec store written through a temporary beside the target)
        from fsspec.implementations.dirfs import DirFileSystem
        from fsspec.implementations.local import LocalFileSystem
        store = DirFileSystem(path=os.path.dirname(path), fs=LocalFileSystem())
        path = os.path.basename(path)
        writer = arrowmm.new_file(path, schema, filesystem=store)
    else:
        writer = arrowmm.new_file(path, schema)
    writer.write({"t": np.arange(3, 6)})
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # (its interpreter finalizes its copy of the writer)
    os.waitpid(pid, 0)
    writer.write({"t": np.arange(6, 9)})
    writer.close()
    with arrowmm.open_file(path, filesystem=store) as r:
        print(json.dumps(r.read_all().column("t").to_pylist()))
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("kind", ["append", "new_file", "store"])
def test_a_forked_child_that_exits_leaves_the_parents_writer_be(tmp_path, kind):
    path = str(tmp_path / "out.arrow")
    done = subprocess.run([sys.executable, "-c", _FORKED_CHILD, path, kind],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = list(range(9)) if kind == "append" else list(range(3, 9))
    assert json.loads(done.stdout.splitlines()[-1]) == expected
    assert os.listdir(tmp_path) == ["out.arrow"]  # (no temporary left)
