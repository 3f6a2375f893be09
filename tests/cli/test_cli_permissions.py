"""A new file ``arrowmm repair`` or ``arrowmm convert`` writes from another is never more readable
than its source (round 3 review, finding 9: a 0600 file was repaired into a 0644 one, and
``convert`` without ``--statistics`` widened 0604 to 0644), as ``cp`` gives a copy its source's
mode; a destination that exists keeps its own."""
from __future__ import annotations

import contextlib
import os
import stat

import numpy as np
import pyarrow as pa

import arrowmm
from arrowmm.cli.main import main


@contextlib.contextmanager
def _umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_repaired_and_converted_copies_keep_at_most_the_source_permissions(tmp_path, capsys):
    src = tmp_path / "private.arrow"
    arrowmm.write_file(str(src), {"x": np.arange(5)}, statistics=False)
    os.chmod(src, 0o600)
    commands = {  # new destination: what each command line writes it through
        "repaired.arrow": ["repair", src],  # write_atomically(narrow_to=src)
        "converted.arrow": ["convert", src],  # new_file(DerivedPath)
        "converted.arrows": ["convert", src],  # new_stream(DerivedPath)
        "zstd.arrow": ["convert", src, "--compression", "zstd"],
        "statistics.arrow": ["convert", src, "--statistics"],  # add_statistics(narrow_to=src)
    }
    with _umask(0o022):
        for mode in (0o600, 0o604, 0o640):
            os.chmod(src, mode)
            for name, command in commands.items():
                dst = tmp_path / f"{mode:o}.{name}"
                assert main([*map(str, command[:2]), str(dst), *command[2:]]) == 0, name
                assert _mode(dst) == mode, (name, oct(mode), oct(_mode(dst)))
        # an existing destination keeps its mode; a looser source does not widen a new copy
        # past the umask
        os.chmod(tmp_path / "600.converted.arrow", 0o640)
        os.chmod(src, 0o666)
        assert main(["convert", str(src), str(tmp_path / "600.converted.arrow")]) == 0
        assert _mode(tmp_path / "600.converted.arrow") == 0o640
        assert main(["convert", str(src), str(tmp_path / "open.arrow")]) == 0
        assert _mode(tmp_path / "open.arrow") == 0o644
    capsys.readouterr()
    assert pa.ipc.open_file(str(tmp_path / "640.zstd.arrow")).read_all()["x"].to_pylist() == \
        [0, 1, 2, 3, 4]
