"""No test skips silently: without the gold files, the run ends saying how many tests skipped
and how to get the files (tests/conftest.py)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_gold_files_are_announced_in_one_line(tmp_path):
    env = {**os.environ, "ARROWMM_GOLD_DIR": str(tmp_path / "absent")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/ipc/test_gold_files.py"], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if "because the Arrow gold files are not in" in ln]
    assert len(lines) == 1, proc.stdout[-3000:]
    skipped = int(lines[0].split()[0])
    assert skipped > 0 and f"{skipped} skipped" in proc.stdout.splitlines()[-1]
    assert "apache/arrow-testing" in lines[0] and "data/arrow-ipc-stream/integration/cpp-21.0.0" in lines[0]
