"""Checks a kcs dataset written by tests/studies/small.yaml (and a second
run of it): schema attributes, table shapes, input digests, verdicts."""
import sys

import h5py
import numpy as np


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def main(a_path, b_path):
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        assert s(a.attrs["schema"]) == "kcs", a.attrs["schema"]
        assert int(a.attrs["schema_version"]) == 2
        for key in ("software_version", "git_hash", "created", "command_line", "study_name",
                    "plan_hash", "n_ranks"):
            assert key in a.attrs, f"root attribute {key} missing"
        assert int(a.attrs["n_ranks"]) == 4
        assert s(a.attrs["plan_hash"]) == s(b.attrs["plan_hash"])

        cases, res = a["cases"][:], a["results"][:]
        assert isinstance(res, np.ndarray) and res.dtype.names, "results is not a structured array"
        n_cases = len(cases)
        assert n_cases == 4, n_cases  # 2 shapes x 2 inputs
        trials = int(cases["trials"].max())
        assert len(res) == n_cases * 4 * trials, (len(res), n_cases, trials)

        # Row layout: (case, rank, trial); every slot written by its rank.
        for idx, r in enumerate(res):
            c, rest = divmod(idx, 4 * trials)
            rank, trial = divmod(rest, trials)
            assert (r["case_id"], r["rank"], r["trial"]) == (c, rank, trial), (idx, r)
            assert s(r["status"]) == "ok", (idx, r["status"])

        # Inputs: nonzero digests, identical across the two runs (every rank
        # agreed on them in-run, or the run would have failed).
        assert np.all(cases["input_digest"] != 0)
        assert np.array_equal(cases["input_digest"], b["cases"]["input_digest"][:])
        # Outputs: deterministic implementations give identical digests.
        assert np.array_equal(res["output_digest"], b["results"]["output_digest"][:])

        ranks = a["provenance/ranks"][:]
        assert [s(x) for x in ranks["backend"]] == ["cpu"] * 4
        assert all(s(x) == "ok" for x in ranks["status"])

        verdict = np.array([s(x) for x in res["verdict"]])
        sig = np.array([s(x) for x in res["signature"]])
        rank = res["rank"]
        # ranks 0..2 conform (fp32 or wider accumulation).
        assert np.all(verdict[rank < 3] == "within_tolerance"), verdict[rank < 3]
        # rank 3 accumulates in bf16 while the contract declares fp32.
        assert np.all(verdict[rank == 3] == "violation"), verdict[rank == 3]
        assert all("accumulator-narrower-than-declared" in x for x in sig[rank == 3]), sig
        # Conforming ranks differ from each other (different schedules) yet
        # stay below eta; the bf16 rank is far above it.
        assert np.all(res["tau"][rank < 3] < 1.0)
        assert np.all(res["tau"][rank == 3] > 1.0)
        assert np.all(res["guard_ok"] == 1)

        smp = a["samples"]  # schema 2: [n_cases, n_ranks, n_samples]
        assert isinstance(smp, h5py.Dataset) and smp.shape == (n_cases, 4, 16), smp
        assert np.all(np.isfinite(smp[:]))
        assert "C-PRC-01" in a["contracts"]
        assert b"name: small" in a["study"][()] if isinstance(a["study"][()], bytes) \
            else "name: small" in s(a["study"][()])
    print("check_dataset: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
