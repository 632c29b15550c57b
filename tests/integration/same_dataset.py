"""same_dataset.py REF OUT: OUT is a complete kcs dataset equal to REF
(every table and sample row, of schema 1 or 2, /provenance/ranks status and variant, the plan
hash), except time_ns, the host-dependent provenance and the numbers in
reasons (worker pids and log paths name the run, not the result). Exit 1 with the
first difference. Used by the disk-full, lock and faithful-resume tests."""
import re
import sys

import h5py
import numpy as np


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def run_free(col):
    """A text column with what names this run's processes (worker pids, the
    worker log's path) masked: a reason is the same reason in another run."""
    return [re.sub(rb"[0-9]+", b"N", v) for v in col]


def same(x, y):
    if x.dtype.kind == "f":
        return np.array_equal(x, y, equal_nan=True)
    return np.array_equal(x, y)


def samples(f):
    """{case_id: [n_ranks, n_samples]} of either schema: 2 (one dataset
    [n_cases, n_ranks, n_samples], row i = row i of /cases) or 1 (a group of
    /samples/<case_id>), so that datasets of both compare."""
    g = f["samples"]
    if isinstance(g, h5py.Dataset):
        return {str(int(c)): g[i] for i, c in enumerate(f["cases"]["case_id"][:])}
    return {c: g[c][:] for c in g}


def main(ref, out):
    with h5py.File(ref, "r") as a, h5py.File(out, "r") as b:
        assert int(b.attrs["complete"]) == 1, "not complete"
        assert s(a.attrs["plan_hash"]) == s(b.attrs["plan_hash"]), "plan_hash differs"
        ra, rb = a["results"][:], b["results"][:]
        assert len(ra) == len(rb), ("results rows", len(ra), len(rb))
        for name in ra.dtype.names:
            if name in ("message", "signature"):
                assert run_free(ra[name]) == run_free(rb[name]), f"results.{name} differs"
            elif name != "time_ns":
                assert same(ra[name], rb[name]), f"results.{name} differs"
        assert np.array_equal(a["cases"][:], b["cases"][:]), "cases differ"
        pa, pb = a["provenance/ranks"][:], b["provenance/ranks"][:]
        for name in ("rank", "backend", "variant", "status"):
            assert np.array_equal(pa[name], pb[name]), f"provenance/ranks.{name} differs"
        sa, sb = samples(a), samples(b)
        assert sorted(sa) == sorted(sb), "sample sets differ"
        for c in sa:
            assert same(sa[c], sb[c]), f"samples of case {c} differ"
        assert s(a["study"][()]) == s(b["study"][()]), "study text differs"


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2])
    except (AssertionError, KeyError, OSError) as e:
        print(f"{sys.argv[2]}: differs from {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
