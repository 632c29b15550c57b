"""kcs.load on a dataset written by `kcs run` (tests/studies/small.yaml),
checked against the file read directly with h5py."""
import math
import os
import re
import shutil

import h5py
import numpy as np
import pytest

import kcs


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def test_one_row_per_trial(small_dataset):
    df = kcs.load(small_dataset)
    with h5py.File(small_dataset, "r") as f:
        cases = f["cases"][()]
        ranks = f["provenance/ranks"][()]
        res = f["results"][()]
    n_ranks = len(ranks)
    expected = int(sum(int(t) for t in cases["trials"])) * n_ranks
    assert len(df) == expected
    assert not df.duplicated(["case_id", "rank", "trial"]).any()
    assert "verdict" in df.columns and "tau" in df.columns
    # every (case, rank, trial < trials) of the file is a row, nothing else
    keys = {(int(r["case_id"]), int(r["rank"]), int(r["trial"])) for r in res
            if s(r["status"]) != "skipped"}
    assert keys == set(zip(df["case_id"], df["rank"], df["trial"]))
    assert set(df["status"]) == {"ok"}


def test_joined_columns_match_the_file(small_dataset):
    df = kcs.load(small_dataset)
    with h5py.File(small_dataset, "r") as f:
        cases = {int(c["case_id"]): c for c in f["cases"][()]}
        ranks = {int(r["rank"]): r for r in f["provenance/ranks"][()]}
        res = f["results"][()]
    by_key = {(int(r["case_id"]), int(r["rank"]), int(r["trial"])): r for r in res}
    for row in df.itertuples(index=False):
        c, r = cases[row.case_id], ranks[row.rank]
        assert row.contract == s(c["contract"]) and row.op == s(c["op"])
        assert (row.m, row.n, row.k, row.batch) == (c["m"], c["n"], c["k"], c["batch"])
        assert row.shape == (int(c["m"]), int(c["n"]), int(c["k"]), int(c["batch"]))
        assert row.dtype_in == s(c["dtype_in"]) and row.input_dist == s(c["input_dist"])
        assert row.implementation == s(r["variant"])
        assert row.device == f"{s(r['backend'])}:{int(r['device'])} {s(r['model'])}"
        raw = by_key[(row.case_id, row.rank, row.trial)]
        assert row.verdict == s(raw["verdict"])
        assert row.tau == raw["tau"] and row.output_digest == raw["output_digest"]


def test_verdicts_of_the_small_study(small_dataset):
    df = kcs.load(small_dataset)
    conform = df[df["rank"] < 3]
    bf16 = df[df["rank"] == 3]
    assert (conform["verdict"] == "within_tolerance").all()
    assert (conform["tau"] < 1).all()
    assert (bf16["verdict"] == "violation").all()
    assert bf16["signature"].str.contains("accumulator-narrower-than-declared").all()
    assert bf16["implementation"].str.contains("acc=bf16").all()


def test_every_field_is_described(small_dataset):
    with h5py.File(small_dataset, "r") as f:
        for table in ("results", "cases", "provenance/ranks"):
            ds = f[table]
            for name in ds.dtype.names:
                d = ds.attrs.get(f"{name}.description")
                u = ds.attrs.get(f"{name}.units")
                assert d is not None and len(s(d)) > 8, (table, name)
                assert u is not None and len(s(u)) > 0, (table, name)
        g = f["samples"]
        assert "floor(j * N / n_samples)" in s(g.attrs["positions"])
    df = kcs.load(small_dataset)
    fields = df.attrs["fields"]
    assert fields["tau"]["units"] == "1"
    assert fields["time_ns"]["units"] == "ns"
    # renamed rank columns keep their documentation
    assert "implementation" in fields and "device_index" in fields


def test_docs_list_every_field(small_dataset, src_dir):
    # the dataset's reference moved from the README to docs/dataset.md (issue 41)
    doc = open(os.path.join(src_dir, "docs", "dataset.md"), encoding="utf-8").read()
    for table in ("results", "cases"):
        section = doc.split(f"`/{table}`:", 1)[1].split("\n\n`/", 1)[0]
        listed = set(re.findall(r"^\| `([a-z_0-9]+)` \|", section, re.M))
        with h5py.File(small_dataset, "r") as f:
            missing = [n for n in f[table].dtype.names if n not in listed]
        assert not missing, f"docs/dataset.md lacks /{table} fields {missing}"


def test_samples(small_dataset):
    sm = kcs.load(small_dataset, samples=True)
    with h5py.File(small_dataset, "r") as f:
        n_ranks = int(f.attrs["n_ranks"])
        n_samples = int(f.attrs["n_samples"])
        cases = f["cases"][()]
        # schema 2: one dataset [n_cases, n_ranks, n_samples], row i = row i of /cases
        assert f["samples"].shape == (len(cases), n_ranks, n_samples)
        raw = {int(c["case_id"]): f["samples"][i] for i, c in enumerate(cases)}
    assert len(sm) == len(cases) * n_ranks * n_samples
    for c in cases:
        cid, n_out = int(c["case_id"]), int(c["m"]) * int(c["n"])
        part = sm[sm["case_id"] == cid]
        for r in range(n_ranks):
            row = part[part["rank"] == r].sort_values("sample")
            assert np.array_equal(row["value"].to_numpy(), raw[cid][r])
            # positions: column j is flat index floor(j * m*n / n_samples)
            want = [math.floor(j * n_out / n_samples) for j in range(n_samples)]
            assert row["index"].tolist() == want
    # the conforming ranks sampled the same positions of the same product:
    # they agree far below the values' size
    for cid in raw:
        v = raw[cid]
        assert np.max(np.abs(v[0] - v[1])) < 1e-3 * np.max(np.abs(v[0]))


def test_not_a_kcs_file(tmp_path):
    p = tmp_path / "other.h5"
    with h5py.File(p, "w") as f:
        f.attrs["schema"] = "something-else"
    with pytest.raises(ValueError, match="not a kcs dataset"):
        kcs.load(p)
    with pytest.raises(OSError, match="cannot open"):
        kcs.load(tmp_path / "missing.h5")


def test_held_out_cases(small_dataset, kcs_bin, tmp_path):
    # the small study names its shapes: nothing is held out
    df = kcs.load(small_dataset)
    assert (df["held_out"] == False).all()  # noqa: E712
    # a contract's own shapes come with its held-out classes (C-CMP-03)
    import os
    import subprocess
    from conftest import SRC
    study = tmp_path / "held.yaml"
    study.write_text(
        "name: held\nseed: 3\n"
        f"contracts: [\"{os.path.join(SRC, 'contracts', 'C-CMP-03', 'C-CMP-03.yaml')}\"]\n"
        "placement: [{ backend: cpu, variant: native }]\n"
        "cases:\n  - { contract: C-CMP-03, op: gemm, dtype_in: fp32, inputs: [normal], "
        "trials: 1 }\n")
    out = tmp_path / "held.h5"
    p = subprocess.run([kcs_bin, "run", str(study), "-o", str(out), "-q"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    df = kcs.load(out)
    shapes = {tuple(s[:3]): h for s, h in zip(df["shape"], df["held_out"])}
    # C-CMP-03: measurement shapes [[64,64,64],[128,64,256],[64,128,128,2]],
    # held_out [[48,80,96],[63,65,127],[1,200,33],[17,5,300,3]], and 4 shapes
    # drawn over its precondition (held_out_draw: 4), one with m above 256
    listed = {(64, 64, 64): False, (128, 64, 256): False, (64, 128, 128): False,
              (48, 80, 96): True, (63, 65, 127): True, (1, 200, 33): True,
              (17, 5, 300): True}
    assert {s: h for s, h in shapes.items() if s in listed} == listed
    drawn = {s: h for s, h in shapes.items() if s not in listed}
    assert len(drawn) == 4 and all(drawn.values()), drawn
    assert max(s[0] for s in drawn) > 256, drawn
    assert "held-out" in df.attrs["fields"]["held_out"]["description"]


def test_schema1_samples(small_dataset, tmp_path):
    """A schema 1 file (one /samples/<case_id> per case) loads as the same
    samples: the file rewritten in that form, read back."""
    old = tmp_path / "schema1.h5"
    shutil.copy(small_dataset, old)
    with h5py.File(old, "r+") as f:
        whole = f["samples"][()]
        attrs = dict(f["samples"].attrs)
        ids = [int(c) for c in f["cases"]["case_id"]]
        del f["samples"]
        g = f.create_group("samples")
        for k, v in attrs.items():
            g.attrs[k] = v
        for i, c in enumerate(ids):
            g[str(c)] = whole[i]
        f.attrs["schema_version"] = np.int32(1)
        for k in [k for k in f.attrs if k.startswith("digest_")]:
            del f.attrs[k]  # schema 1 files predate content digests
    a = kcs.load(small_dataset, samples=True)
    with pytest.warns(UserWarning, match="unverified"):
        b = kcs.load(old, samples=True)
    assert len(a) == len(b) > 0
    assert a.reset_index(drop=True).equals(b.reset_index(drop=True))
