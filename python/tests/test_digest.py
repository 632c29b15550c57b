"""The content digests `kcs run` seals a dataset with, checked from Python
(kcs.digest, the canonical form of docs/dataset.md implemented a second
time): they match the C implementation's, kcs.load refuses an edited
dataset naming the group, and warns on one without digests."""
import shutil
import warnings

import h5py
import numpy as np
import pytest

import kcs
from kcs import digest


def test_digests_match_the_c_implementation(small_dataset):
    with h5py.File(small_dataset, "r") as f:
        for obj in digest.RAW:
            recorded = f.attrs["digest_" + obj[1:]]
            recorded = recorded.decode() if isinstance(recorded, bytes) else recorded
            assert digest.digest(f, obj) == recorded, obj
        assert digest.check(f) is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sealed dataset loads without a warning
        assert len(kcs.load(small_dataset)) > 0


def test_edited_dataset_is_refused(small_dataset, tmp_path):
    p = tmp_path / "edited.h5"
    shutil.copy(small_dataset, p)
    with h5py.File(p, "r+") as f:
        s = f["samples"][()]
        s[0, 0, 0] = s[0, 0, 0] + 1.0
        f["samples"][...] = s
    with pytest.raises(ValueError, match="/samples: content digest"):
        kcs.load(p)


def test_without_digests_warns(small_dataset, tmp_path):
    p = tmp_path / "old.h5"
    shutil.copy(small_dataset, p)
    with h5py.File(p, "r+") as f:
        for k in [k for k in f.attrs if k.startswith("digest_")]:
            del f.attrs[k]
    with pytest.warns(UserWarning, match="unverified"):
        df = kcs.load(p)
    assert len(df) > 0


def test_partly_removed_digests_are_refused(small_dataset, tmp_path):
    p = tmp_path / "part.h5"
    shutil.copy(small_dataset, p)
    with h5py.File(p, "r+") as f:
        del f.attrs["digest_results"]
    with pytest.raises(ValueError, match="digest_results is missing"):
        kcs.load(p)
