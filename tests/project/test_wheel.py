"""The binary wheel (issue 31): ``tools/build_wheel.sh`` makes a manylinux wheel holding the
compiled modules and the Spark connector's jar, and that wheel installs and works in a new
virtual environment where no C compiler can be found.

The wheel is built once per session with ``--from-tree``, which reuses what the last build left
in ``build/`` (after the Quick start's two commands it compiles nothing: seconds, plus pip's
isolated build environment); ``ARROWMM_WHEEL=path/to/arrowmm-...whl`` tests a wheel built
beforehand instead. Installing it fetches arrowmm's dependencies as wheels (``--only-binary``),
from pip's cache or the index.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.feather  # noqa: F401  (loads pa.feather, used below)
import pytest

ROOT = Path(__file__).resolve().parents[2]
JAR = "arrowmm/spark/jvm/arrowmm-spark.jar"
COMPILERS = ("gcc", "cc", "clang", "c++", "g++", "x86_64-linux-gnu-gcc")


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("ARROWMM_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(["bash", str(ROOT / "tools" / "build_wheel.sh"), sys.executable,
                           "--from-tree", "--out", str(out)],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def bare_venv(tmp_path_factory) -> tuple[str, dict]:
    """A new venv, and an environment whose PATH is that venv's bin/ alone (python, pip and the
    scripts pip installs: installing wheels needs nothing else), with CC and CXX naming
    /bin/false, so that a build from source would fail rather than find a compiler."""
    venv = str(tmp_path_factory.mktemp("venv"))
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv}/bin", VIRTUAL_ENV=venv, CC="/bin/false", CXX="/bin/false",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    return venv, env


def _run(env, *args, cwd, timeout=600):
    proc = subprocess.run(list(args), env=env, cwd=str(cwd), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-3000:]}{proc.stderr[-5000:]}"
    return proc.stdout


def test_the_wheel_is_manylinux_and_holds_every_module_and_the_jar(wheel):
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert f"-{tag}-{tag}-" in wheel.name and "manylinux" in wheel.name, wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    assert JAR in names
    assert "arrowmm/py.typed" in names
    modules = sorted(os.path.relpath(p, ROOT)[:-len(".pyx")]
                     for p in glob.glob(str(ROOT / "arrowmm" / "**" / "_*.pyx"), recursive=True))
    assert modules, "no Cython modules found in the tree"
    for module in modules:
        built = [n for n in names if n.startswith(module + ".") and n.endswith(".so")]
        assert built, f"{module}: no compiled module in {wheel.name}"
    assert not [n for n in names if n.endswith((".c", ".pyx"))], "sources in the wheel"


def test_the_wheel_installs_and_runs_without_a_compiler(wheel, bare_venv, tmp_path):
    venv, env = bare_venv
    python = f"{venv}/bin/python"
    # no compiler is reachable from inside: not by name on PATH, not as sysconfig's CC
    probe = _run(env, python, "-c", "import json, shutil, subprocess, sysconfig\n"
                 "names = [*%r, sysconfig.get_config_var('CC').split()[0]]\n"
                 "found = {n: shutil.which(n) for n in names}\n"
                 "try:\n    subprocess.run(['gcc', '--version'], capture_output=True)\n    found['run gcc'] = True\n"
                 "except FileNotFoundError:\n    pass\n"
                 "print(json.dumps({n: p for n, p in found.items() if p}))" % (COMPILERS,),
                 cwd=tmp_path)
    assert json.loads(probe) == {}, f"a compiler is reachable: {probe}"

    _run(env, python, "-m", "pip", "install", "-q", "--only-binary=:all:", str(wheel),
         cwd=tmp_path, timeout=900)

    # the installed package, not the source tree; the jar beside it
    where = json.loads(_run(env, python, "-c", "import json, arrowmm, arrowmm.spark.jar as j\n"
                            "print(json.dumps([arrowmm.__file__, j.jar_path()]))", cwd=tmp_path))
    assert all(p.startswith(venv) for p in where), where
    assert where[1].endswith(JAR)

    out = _run(env, f"{venv}/bin/arrowmm", "demo", "--local", "--batches", "5", "--rows", "2000",
               cwd=tmp_path)
    assert "arrowmm demo" in out

    # a file pyarrow wrote, opened and read by the installed arrowmm
    path = tmp_path / "smoke.arrow"
    table = pa.table({"x": pa.array([1, None, 3, 4], pa.int64()),
                      "name": ["a", "bb", None, "dddd"]})
    pa.feather.write_feather(table, str(path), compression="zstd", chunksize=2)
    got = json.loads(_run(env, python, "-c", "import json, sys, arrowmm\n"
                          "with arrowmm.open_file(sys.argv[1]) as r:\n"
                          "    t = r.read_all()\n"
                          "    print(json.dumps([r.num_record_batches, t.column('x').to_pylist(),\n"
                          "                      t.column('name').to_pylist()]))",
                          str(path), cwd=tmp_path))
    assert got == [2, [1, None, 3, 4], ["a", "bb", None, "dddd"]]
