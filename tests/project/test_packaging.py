"""What a normal (non-editable) install ships: every package of the source tree.

The tests run against the source tree, where a package missing from ``pyproject.toml``'s list
still imports; a wheel built from that list would not have it, and ``import arrowmm`` fails
there (it happened with ``arrowmm.dataset``)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _listed_packages():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert block, "pyproject.toml lists no packages"
    return set(re.findall(r'"([\w.]+)"', block.group(1)))


def _tree_packages():
    found = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "arrowmm")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            found.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    return found


def test_every_package_of_the_tree_is_shipped():
    tree = _tree_packages()
    assert {"arrowmm", "arrowmm.ipc", "arrowmm.dataset"} <= tree  # (the walk finds packages)
    assert tree - _listed_packages() == set(), "add these to [tool.setuptools] packages"


def test_no_listed_package_is_missing_from_the_tree():
    assert _listed_packages() - _tree_packages() == set()


def test_an_editable_install_reuses_what_a_wheel_build_compiled(tmp_path):
    """The Quick start's second command (``pip install -e``) compiles nothing after its first
    (``pip install .``): both build in ``build/``, and setuptools skips a module whose built copy
    is newer than its sources (an editable install built in a new temporary folder each time, and
    compiled every module again). One small module (``ARROWMM_ONLY``) keeps this to a minute."""
    import shutil
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE",
                 "pyspark_arrowmm.py", "pyspark_arrowmm_python.py"):
        shutil.copy2(os.path.join(ROOT, name), project / name)
    shutil.copytree(os.path.join(ROOT, "arrowmm"), project / "arrowmm",
                    ignore=shutil.ignore_patterns("*.so", "*.c", "*.html", "__pycache__", "src"))
    env = {**os.environ, "ARROWMM_ONLY": "_utf8", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    building = "building 'arrowmm._core._utf8' extension"

    def pip(python, *args):
        proc = subprocess.run([python, "-m", "pip", *args, "-v", "--no-deps"], cwd=str(tmp_path),
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout + proc.stderr

    assert building in pip(sys.executable, "wheel", "-w", str(tmp_path / "wheels"), str(project))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    log = pip(str(venv / "bin" / "python"), "install", "-e", str(project))
    assert building not in log, log[-3000:]
    assert list((project / "arrowmm" / "_core").glob("_utf8*.so")), "not copied into the tree"
