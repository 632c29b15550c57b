"""Reading a kcs dataset (HDF5, schema versions 1 and 2) into pandas.

The file is the one `kcs run` writes: /cases (one row per case), /results
(one row per case x rank x trial slot, slots beyond a case's trials have
status "skipped"), /provenance/ranks (one row per rank: backend, device,
implementation) and /samples (float64 [n_cases, n_ranks, n_samples]; schema 1:
/samples/<case_id>, float64 [n_ranks, n_samples]).
Every field of those tables carries "<field>.description" and
"<field>.units" attributes; load() copies them into ``df.attrs``.
"""
import math
import os
import warnings

import h5py
import numpy as np
import pandas as pd

from . import digest as _digest

SCHEMA_VERSION = 2          # the version kcs writes
SCHEMA_VERSIONS = (1, 2)    # the versions this package reads (1: /samples/<case_id>)

# Columns that keep their name from /provenance/ranks; the others are renamed
# so that the joined table has one meaning per column name.
_RANK_RENAME = {
    "variant": "implementation",  # what the rank ran: backend:device variant schedule acc
    "status": "rank_status",
    "device": "device_index",
}
_CASE_RENAME = {"variant": "case_variant"}


def _decode(col):
    if col.dtype.kind == "S":
        return np.char.decode(col, "utf-8", "replace").astype(object)
    return col


def _table(ds):
    arr = ds[()]
    return pd.DataFrame({name: _decode(arr[name]) for name in arr.dtype.names})


def _docs(ds, rename=None):
    out = {}
    for name in ds.dtype.names:
        d = ds.attrs.get(f"{name}.description")
        u = ds.attrs.get(f"{name}.units")
        if d is None and u is None:
            continue
        key = (rename or {}).get(name, name)
        out[key] = {"description": _s(d), "units": _s(u)}
    return out


def _s(x):
    if x is None:
        return None
    return x.decode() if isinstance(x, bytes) else str(x)


def _attrs(f):
    out = {}
    for k, v in f.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def _open(path):
    path = os.fspath(path)
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise OSError(f"{path}: cannot open as HDF5 ({e})") from None
    schema = _s(f.attrs.get("schema"))
    version = f.attrs.get("schema_version")
    if schema != "kcs":
        f.close()
        raise ValueError(f"{path}: not a kcs dataset (root attribute schema is {schema!r})")
    if version is None or int(version) not in SCHEMA_VERSIONS:
        f.close()
        raise ValueError(f"{path}: kcs schema version {version}, this package reads "
                         f"{', '.join(map(str, SCHEMA_VERSIONS))}")
    for obj in ("cases", "results", "provenance/ranks"):
        if obj not in f:
            f.close()
            raise ValueError(f"{path}: /{obj} missing (a reduction-only file? load() reads "
                             f"the datasets `kcs run` writes)")
    # the content digests kcs sealed the raw groups with (docs/dataset.md)
    try:
        verified = _digest.check(f)
    except OSError as e:  # no libxxhash: nothing to compute them with
        warnings.warn(f"{path}: content digests not checked ({e})", stacklevel=3)
        verified = True
    except ValueError:
        f.close()
        raise
    if not verified:
        warnings.warn(f"{path}: no content digests (written by a kcs before them): its raw data "
                      f"is unverified", stacklevel=3)
    return f


def _rank_table(f):
    ranks = _table(f["provenance/ranks"]).rename(columns=_RANK_RENAME)
    ranks["device"] = [f"{b}:{i} {m}".rstrip() for b, i, m in
                       zip(ranks["backend"], ranks["device_index"], ranks["model"])]
    return ranks


def _case_table(f):
    ds = f["cases"]
    cases = _table(ds).rename(columns=_CASE_RENAME)
    cases["shape"] = [tuple(int(v) for v in row) for row in
                      cases[["m", "n", "k", "batch"]].itertuples(index=False)]
    # held-out shape classes: listed in an attribute (None where the file
    # does not say: older files, or too many to list)
    ids = ds.attrs.get("held_out_cases")
    if ids is not None and "held_out_count" in ds.attrs:
        held = set() if isinstance(ids, h5py.Empty) else {int(x) for x in np.atleast_1d(ids)}
        cases["held_out"] = [int(c) in held for c in cases["case_id"]]
    else:
        cases["held_out"] = None
    return cases


def output_len(op, m, n, k, batch):
    """Number of output elements of an op call (kcs_op_out_len)."""
    nb = batch if batch > 0 else 1
    table = {
        "gemm": m * n, "batched_gemm": nb * m * n, "reduce_sum": m, "dot": 1,
        "softmax": m * k, "layernorm": m * k, "rmsnorm": m * k,
        "attention": nb * m * k, "gather": n * k, "allreduce": k, "elementwise": m * k,
        "norm": m,
    }
    return table.get(op, 0)


def sample_positions(n_out, n_samples):
    """Flat row-major output index of each sample column: floor(j*N/n_samples),
    computed in double precision exactly as kcs does (protocol.c)."""
    if n_out == 0:
        return np.zeros(n_samples, dtype=np.int64)
    return np.array([int(math.floor(float(j) * float(n_out) / n_samples))
                     for j in range(n_samples)], dtype=np.int64)


def load(path, samples=False, skipped=False):
    """A kcs dataset as a pandas DataFrame.

    Default: one row per (case, rank, trial) of /results, joined with the
    case's columns (contract, op, dtype_in/acc/out, m, n, k, batch, shape,
    input_dist, seed, input_digest, trials, case_variant, held_out) and the rank's
    (implementation, device, backend, device_index, vendor, model, arch,
    driver, runtime, uuid, profile, host, rank_status), with the result's
    fields (status, verdict, signature, tau, eta, max_abs, max_rel, max_ulp,
    mean_ulp, backward_err, max_scaled, effective_acc_bits, nan_count,
    inf_count, guard_ok, time_ns, output_digest). Slots beyond a case's
    trials (status "skipped") are left out unless skipped=True.

    samples=True: the sampled outputs instead, one row per (case, rank,
    sample) with columns sample (the column j), index (the flat row-major
    position in the output: floor(j * N / n_samples)), value (float64; NaN
    where the rank produced no output) and the same case and rank columns.
    Samples are trial 0's outputs.

    df.attrs holds the root attributes ("file"), and "fields": for every
    column that the file documents, {"description", "units"}.
    """
    f = _open(path)
    try:
        root = _attrs(f)
        cases = _case_table(f)
        ranks = _rank_table(f)
        fields = {}
        fields.update(_docs(f["provenance/ranks"], _RANK_RENAME))
        fields.update(_docs(f["cases"], _CASE_RENAME))
        if "held_out.description" in f["cases"].attrs:
            fields["held_out"] = {"description": _s(f["cases"].attrs["held_out.description"]),
                                  "units": "none"}
        if samples:
            df = _samples(f, cases, ranks)
            grp = f.get("samples")
            if grp is not None and "description" in grp.attrs:
                fields["value"] = {"description": _s(grp.attrs["description"]),
                                   "units": _s(grp.attrs.get("units"))}
                fields["index"] = {"description": _s(grp.attrs.get("positions")),
                                   "units": "none"}
        else:
            res = _table(f["results"])
            fields.update(_docs(f["results"]))
            if not skipped:
                res = res[res["status"] != "skipped"]
            df = res.merge(cases, on="case_id", how="left", validate="many_to_one")
            df = df.merge(ranks, on="rank", how="left", validate="many_to_one")
            df = df.sort_values(["case_id", "rank", "trial"], kind="stable")
            df = df.reset_index(drop=True)
    finally:
        f.close()
    df.attrs["file"] = root
    df.attrs["fields"] = fields
    df.attrs["path"] = os.fspath(path)
    return df


def _samples(f, cases, ranks):
    grp = f.get("samples")
    frames = []
    n_ranks = len(ranks)
    whole = None
    if isinstance(grp, h5py.Dataset):
        # schema 2: one dataset [n_cases, n_ranks, n_samples], row i = row i of /cases
        whole = np.asarray(grp[()], dtype=np.float64)
        if whole.ndim != 3 or whole.shape[:2] != (len(cases), n_ranks):
            raise ValueError(f"/samples: shape {whole.shape}, expected "
                             f"[{len(cases)}, {n_ranks}, n_samples]")
    for i, row in enumerate(cases.itertuples(index=False)):
        key = str(int(row.case_id))
        if whole is not None:
            vals = whole[i]
        elif grp is None or key not in grp:
            continue
        else:
            vals = np.asarray(grp[key][()], dtype=np.float64)
        if vals.ndim != 2 or vals.shape[0] != n_ranks:
            raise ValueError(f"/samples/{key}: shape {vals.shape}, expected "
                             f"[{n_ranks}, n_samples]")
        ns = vals.shape[1]
        pos = sample_positions(output_len(row.op, row.m, row.n, row.k, row.batch), ns)
        frames.append(pd.DataFrame({
            "case_id": np.repeat(np.int64(row.case_id), n_ranks * ns),
            "rank": np.repeat(np.arange(n_ranks, dtype=np.int32), ns),
            "trial": np.zeros(n_ranks * ns, dtype=np.int32),
            "sample": np.tile(np.arange(ns, dtype=np.int64), n_ranks),
            "index": np.tile(pos, n_ranks),
            "value": vals.reshape(-1),
        }))
    if frames:
        df = pd.concat(frames, ignore_index=True)
    else:
        df = pd.DataFrame({"case_id": pd.Series(dtype=np.int64),
                           "rank": pd.Series(dtype=np.int32),
                           "trial": pd.Series(dtype=np.int32),
                           "sample": pd.Series(dtype=np.int64),
                           "index": pd.Series(dtype=np.int64),
                           "value": pd.Series(dtype=np.float64)})
    df = df.merge(cases, on="case_id", how="left", validate="many_to_one")
    df = df.merge(ranks, on="rank", how="left", validate="many_to_one")
    return df.reset_index(drop=True)
