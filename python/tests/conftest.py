"""Shared fixtures: the kcs binary ($KCS or PATH), the source tree
($KCS_SRC or this file's repository) and a dataset from `kcs run`."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # protocol_grader

SRC = os.environ.get("KCS_SRC") or os.path.abspath(os.path.join(HERE, "..", ".."))


@pytest.fixture(scope="session")
def kcs_bin():
    import kcs
    try:
        return kcs.find_kcs()
    except kcs.KcsNotFound as e:
        pytest.skip(f"these tests run the kcs binary: {e}")


@pytest.fixture(scope="session")
def src_dir():
    return SRC


def _mpiexec():
    m = os.environ.get("MPIEXEC") or shutil.which("mpiexec") or shutil.which("mpirun")
    return m


@pytest.fixture(scope="session")
def small_dataset(kcs_bin, tmp_path_factory):
    """tests/studies/small.yaml under mpiexec -n 4: 4 cases, 4 ranks (ranks
    0-2 conform, rank 3 accumulates in bf16), 2 trials, 16 samples."""
    mpi = _mpiexec()
    if not mpi:
        pytest.skip("no mpiexec: the small study needs 4 ranks")
    out = tmp_path_factory.mktemp("ds") / "small.h5"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpi, "-n", "4", "--allow-run-as-root", "--oversubscribe", kcs_bin, "run",
           os.path.join(SRC, "tests", "studies", "small.yaml"), "-o", str(out), "-q"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, (p.returncode, p.stderr)
    return str(out)
