"""Standard input is named ``<stdin>`` by every command, validate and info too (they printed
``-:``), and a reason that names its input already is not prefixed with the name again."""
import importlib
import io
import subprocess
import sys

import pyarrow as pa
import pytest

from tests.support.helpers import ipc_bytes

cli_main = importlib.import_module("arrowmm.cli.main")  # (the module, not its main)


def _stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_validate_and_info_name_standard_input_as_the_other_commands(fmt, monkeypatch, capsys):
    data = ipc_bytes(pa.table({"x": [1, 2, 3]}), fmt=fmt)
    kind = f"Arrow IPC {fmt}"
    _stdin(monkeypatch, data)
    assert cli_main.main(["validate", "-"]) == 0
    assert capsys.readouterr().out.startswith(f"<stdin>: valid {kind} (1 batches, 3 rows")
    _stdin(monkeypatch, data)
    assert cli_main.main(["info", "-"]) == 0
    assert capsys.readouterr().out.startswith(f"<stdin>: {kind}\n")


def test_an_invalid_standard_input_is_named_once():
    # (a real standard input: the readers name it <stdin>, an in-process stand-in otherwise)
    done = subprocess.run([sys.executable, "-m", "arrowmm", "validate", "-"], capture_output=True,
                          input=b"just some text, no Arrow at all\n", timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert err.startswith("<stdin>: INVALID: not an Arrow IPC file or stream"), err
    assert err.count("<stdin>") == 1 and "-:" not in err


def test_an_invalid_file_is_named_once(tmp_path, capsys):
    path = tmp_path / "cut.arrow"
    path.write_bytes(ipc_bytes(pa.table({"x": [1, 2, 3]}), fmt="file")[:-30])
    assert cli_main.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: INVALID: ") and err.count(str(path)) == 1, err
