"""`python3 -m pip install --no-deps ./python` (the documented command)
with no network and no setuptools or wheel needed: the package's own build
backend (python/build_backend/kcs_build.py) is standard library only. Run
with this interpreter and with the `python3` on PATH when that is another
one (a pyenv Python without wheel failed before: invalid command
'bdist_wheel')."""
import os
import shutil
import subprocess
import sys

import pytest

PKG = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _interpreters():
    found = [sys.executable]
    other = shutil.which("python3")
    if other and os.path.realpath(other) != os.path.realpath(sys.executable):
        found.append(other)
    return found


def _has_pip(py):
    return subprocess.run([py, "-m", "pip", "--version"], capture_output=True,
                          timeout=120).returncode == 0


def _copy_sources(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                            "*.egg-info", "tests"))
    return src


def _variants():
    """(interpreter, build isolation): pip's default on every interpreter,
    and --no-build-isolation (the form older docs gave) on this one."""
    return [(py, True) for py in _interpreters()] + [(sys.executable, False)]


@pytest.mark.parametrize("py,isolation", _variants())
def test_pip_install_offline(tmp_path, py, isolation):
    if not _has_pip(py):
        pytest.skip(f"{py} has no pip")
    src = _copy_sources(tmp_path)
    before = sorted(os.listdir(src))
    target = tmp_path / "target"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    cmd = [py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
           str(target), str(src)]
    if not isolation:
        cmd.insert(5, "--no-build-isolation")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                       cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    # the sources are left as they were: no build/, egg-info or caches
    assert sorted(os.listdir(src)) == before
    got = subprocess.run(
        [py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import kcs, kcs.tolerances; "
                   "print(kcs.__file__); print(kcs.__version__)", str(target)],
        capture_output=True, text=True, timeout=120, env=env, cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    where, version = got.stdout.split()
    assert where.startswith(str(target))
    meta = (target / f"kcs-{version}.dist-info" / "METADATA").read_text()
    assert "Requires-Dist: numpy" in meta and "Requires-Python: >=3.9" in meta
    record = (target / f"kcs-{version}.dist-info" / "RECORD").read_text()
    assert "kcs/check.py,sha256=" in record


def test_the_backends_toml_reader_agrees_with_tomllib():
    tomllib = pytest.importorskip("tomllib")
    sys.path.insert(0, os.path.join(PKG, "build_backend"))
    try:
        import kcs_build
    finally:
        sys.path.pop(0)
    with open(os.path.join(PKG, "pyproject.toml"), "rb") as fh:
        want = tomllib.load(fh)["project"]
    assert kcs_build.project(use_tomllib=False) == want
