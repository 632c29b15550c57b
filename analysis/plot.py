#!/usr/bin/env python3
"""Figures of a reduced kcs dataset (run by `kcs reduce`, or by hand).

    plot.py ANALYSIS.h5 OUT_DIR [DATASET.h5]

Reads the /analysis tables that kcs reduce (REPORT_DIR/analysis.h5, with the
dataset it reduced for /provenance/ranks and /cases) or kcs detect (its own
dataset) wrote and
renders PNG files into OUT_DIR:
  fig_divergence_g<G>.png  divergence vs n (= k) on log-log, every rank
                           against the oracle and every rank pair, with
                           n*u and sqrt(n)*u guides
  fig_torch_g<G>.png       fraction of conforming outputs flagged vs k:
                           torch's default tolerance, the contract's and
                           kcs's recommended one
  fig_signatures.png       ordering-signature classes, rank x case
  fig_detection_c<C>.png   detection probability vs injected corruption in
                           units of the data (every detector on one axis)
  fig_tolerance_<I>.png    recommendation I of OUT_DIR/tolerances.json: its
                           fitted form (eta0(n), N0 outputs) against every
                           trial's divergence, the validity range shaded
Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-matplotlib);
exits with status 3 and a one-line message when they are missing.
"""
import os
import sys

try:
    import h5py
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.stderr.write("plot.py: %s (install python3-h5py python3-matplotlib)\n" % e)
    sys.exit(3)


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def save(fig, out, name, made):
    """lay out, write out/name (110 dpi), close, and note it in made"""
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)
    made.append(name)


def divergence(f, out):
    groups = f["analysis/baseline_groups"][:]
    pts = f["analysis/divergence_points"][:]
    ranks = f["provenance/ranks"][:]
    names = [s(r["variant"]) for r in ranks]
    made = []
    for g in groups:
        gid = int(g["group"])
        u = float(g["u"])
        conf = set(int(x) for x in s(g["conforming"]).split(",") if x)
        p = pts[pts["group"] == gid]
        if len(p) == 0:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
        cmap = plt.get_cmap("tab10")
        ks_all = np.unique(p["k"])
        for ax, vs_oracle in ((axes[0], True), (axes[1], False)):
            sel = p[p["rank_b"] == -1] if vs_oracle else p[p["rank_b"] >= 0]
            keys = sorted(set(zip(sel["rank_a"], sel["rank_b"])))
            for i, (a, b) in enumerate(keys):
                q = sel[(sel["rank_a"] == a) & (sel["rank_b"] == b)]
                q = q[np.isfinite(q["abs_div"]) & (q["abs_div"] > 0)]
                if len(q) == 0:
                    continue
                ks = np.unique(q["k"])
                med = np.array([np.median(q["abs_div"][q["k"] == k]) for k in ks])
                if vs_oracle:
                    label = "%d %s%s" % (a, names[a], "" if a in conf else " (non-conforming)")
                else:
                    label = "%d–%d" % (a, b)
                style = "-" if (vs_oracle and a in conf) or (not vs_oracle) else "--"
                color = cmap(i % 10)
                ax.scatter(q["k"], q["abs_div"], s=6, color=color, alpha=0.35)
                ax.plot(ks, med, style, color=color, lw=1.2, label=label)
            # guides anchored at the smallest k of the conforming medians
            ref = p[(p["rank_b"] == -1) & np.isin(p["rank_a"], list(conf))] if conf else p
            ref = ref[np.isfinite(ref["abs_div"]) & (ref["abs_div"] > 0)]
            if len(ref) and len(ks_all) > 1:
                k0 = ks_all.min()
                d0 = np.median(ref["abs_div"][ref["k"] == k0]) if np.any(ref["k"] == k0) else np.median(ref["abs_div"])
                kk = np.array([ks_all.min(), ks_all.max()], dtype=float)
                ax.plot(kk, d0 * kk / k0, "k:", lw=1, label="∝ n·u")
                ax.plot(kk, d0 * np.sqrt(kk / k0), "k-.", lw=1, label="∝ √n·u")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("n = k (reduction length)")
            ax.set_ylabel("max |y − y'|")
            ax.set_title(("against the fp64 oracle" if vs_oracle else "between ranks (trial 0 samples)"))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6, ncol=1 if vs_oracle else 3)
        fig.suptitle("group %d: %s %s→%s acc %s, %s inputs (u = %.3g)"
                     % (gid, s(g["op"]), s(g["dtype_in"]), s(g["dtype_out"]), s(g["dtype_acc"]),
                        s(g["input_dist"]), u))
        save(fig, out, "fig_divergence_g%d.png" % gid, made)
        t = f["analysis/torch_compare"][:]
        t = t[t["group"] == gid]
        if len(t) and np.any(t["n_trials"] > 0):
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot(t["k"], t["torch_frac"], "o-", label="torch assert_close defaults")
            ax.plot(t["k"], t["contract_frac"], "s-", label="contract η")
            ax.set_xscale("log", base=2)
            ax.set_ylim(-0.05, 1.05)
            ax.set_xlabel("k")
            ax.set_ylabel("fraction of conforming outputs flagged")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
            save(fig, out, "fig_torch_g%d.png" % gid, made)
    return made


CLASSES = ["run-to-run-nondeterministic", "batch-variant", "schedule-variant",
           "bitwise-deterministic", "schedule-invariant", "not-run"]


def signatures(f, out):
    if "analysis/signatures" not in f:
        return []
    t = f["analysis/signatures"][:]
    if len(t) == 0:
        return []
    cases = np.unique(t["case_id"])[:400]
    nr = int(t["rank"].max()) + 1
    m = np.full((nr, len(cases)), np.nan)
    idx = {c: i for i, c in enumerate(cases)}
    for row in t:
        c = row["case_id"]
        if c in idx:
            k = s(row["klass"])
            m[int(row["rank"]), idx[c]] = CLASSES.index(k) if k in CLASSES else np.nan
    fig, ax = plt.subplots(figsize=(max(6, min(18, len(cases) * 0.25)), 1.5 + 0.4 * nr))
    cmap = matplotlib.colors.ListedColormap(["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c",
                                             "#98df8a", "#cccccc"])
    im = ax.imshow(m, aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(CLASSES) - 0.5,
                   interpolation="nearest")
    cb = fig.colorbar(im, ax=ax, ticks=range(len(CLASSES)))
    cb.ax.set_yticklabels(CLASSES, fontsize=7)
    ax.set_xlabel("case")
    ax.set_ylabel("rank")
    ax.set_yticks(range(nr))
    step = max(1, len(cases) // 20)
    ax.set_xticks(range(0, len(cases), step))
    ax.set_xticklabels([str(c) for c in cases[::step]], fontsize=7)
    ax.set_title("ordering signatures")
    made = []
    save(fig, out, "fig_signatures.png", made)
    return made


def detection(f, out):
    t = f["analysis/detection"][:]
    made = []
    for c in np.unique(t["case_id"]):
        q = t[t["case_id"] == c]
        kinds = [k for k in ("single", "dense", "row") if any(s(x) == k for x in q["kind"])]
        fig, axes = plt.subplots(1, len(kinds), figsize=(6 * len(kinds), 4.5), sharey=True)
        for ax, kind in zip(np.atleast_1d(axes), kinds):
            r = q[np.array([s(x) == kind for x in q["kind"]])]
            styles = ["o-", "s--", "^:", "v-.", "D-", "x--"]
            data_axis = "magnitude_data" in r.dtype.names
            xcol = "magnitude_data" if data_axis else "magnitude"
            for i, det in enumerate(dict.fromkeys(s(x) for x in r["detector"])):
                d = r[np.array([s(x) == det for x in r["detector"]])]
                order = np.argsort(d[xcol])
                # overlapping curves stay visible: a small vertical offset per detector
                ax.plot(d[xcol][order], d["p_detect"][order] + 0.012 * (i - 2.5),
                        styles[i % len(styles)], ms=3, lw=1.2, label=det)
            ax.axhline(0.99, color="k", ls=":", lw=0.8)
            if not data_axis:
                ax.axvline(1.0, color="grey", ls="--", lw=0.8)
            ax.set_xscale("log")
            ax.set_xlabel("injected corruption: max |Δy| / the row's max |y|" if data_axis
                          else "injected magnitude (× η)")
            ax.set_title({"single": "one element", "dense": "every element",
                          "row": "one row (localized)"}[kind] + " corrupted")
            ax.grid(True, which="both", alpha=0.3)
        np.atleast_1d(axes)[0].set_ylabel("detection probability (curves offset by ±0.03 to stay visible)")
        np.atleast_1d(axes)[-1].legend(fontsize=7)
        x = q[0]
        fig.suptitle("case %d: %s %s %dx%dx%d (%s, η = %.3g)"
                     % (c, s(x["contract"]), s(x["dtype_in"]), x["m"], x["n"], x["k"],
                        s(x["structure"]), x["eta"]))
        save(fig, out, "fig_detection_c%d.png" % c, made)
    return made


def outputs_of(c):
    """kcs_op_out_len of a /cases row"""
    op, m, n, k, b = s(c["op"]), int(c["m"]), int(c["n"]), int(c["k"]), max(1, int(c["batch"]))
    return {"gemm": m * n, "batched_gemm": b * m * n, "reduce_sum": m, "dot": 1,
            "softmax": m * k, "layernorm": m * k, "rmsnorm": m * k, "attention": b * m * k,
            "gather": n * k, "allreduce": k, "elementwise": m * k, "norm": m}.get(op, 0)


def tolerances(f, out):
    import json
    path = os.path.join(out, "tolerances.json")
    if not os.path.exists(path) or "analysis/divergence_points" not in f:
        return []
    tol = json.load(open(path))
    groups = f["analysis/baseline_groups"][:]
    pts = f["analysis/divergence_points"][:]
    pts = pts[pts["rank_b"] == -1]
    names = [s(r["variant"]) for r in f["provenance/ranks"][:]]
    outputs = {int(c["case_id"]): outputs_of(c) for c in f["cases"][:]}
    made = []
    for i, r in enumerate(tol["recommendations"]):
        gids = [int(g["group"]) for g in groups
                if (s(g["op"]), s(g["dtype_in"]), s(g["dtype_out"]), s(g["dtype_acc"]))
                == (r["op"], r["dtype_in"], r["dtype_out"], r["acc"])]
        conf = set()
        for g in groups:
            if int(g["group"]) in gids:
                conf |= set(int(x) for x in s(g["conforming"]).split(",") if x)
        p = pts[np.isin(pts["group"], gids)]
        col = "scaled_div" if r["metric"] == "scaled" else "abs_div"
        p0, N0 = tol["false_alarm_target"], r["valid"]["outputs_fitted"]
        # every point brought to N0 outputs by the outputs rule, as fitted
        rule = np.array([max(1.0, np.sqrt(np.log(2 * max(outputs.get(int(c), N0), 1) / p0)
                                          / np.log(2 * N0 / p0))) for c in p["case_id"]])
        fig, ax = plt.subplots(figsize=(8, 5))
        cmap = plt.get_cmap("tab10")
        for j, rank in enumerate(sorted(set(int(x) for x in p["rank_a"]))):
            sel = (p["rank_a"] == rank) & np.isfinite(p[col]) & (p[col] > 0)
            q = p[sel]
            if len(q) == 0:
                continue
            ok = rank in conf
            ax.scatter(q["k"] * (1 + 0.03 * (j - 2)), q[col] / rule[sel], s=10 if ok else 14,
                       marker="o" if ok else "x", color=cmap(j % 10), alpha=0.5,
                       label="%d %s%s" % (rank, names[rank], "" if ok else " (not conforming)"))
        lo, hi = r["valid"]["n_min"], r["valid"]["n_max"]
        if r["form"] == "power":
            nn = np.geomspace(lo, hi, 64)
            ax.plot(nn, r["c"] * nn ** r["alpha"] * r["u"], "k-", lw=1.8,
                    label="η0 = %.3g·n^%.3f·u (α CI [%.3f, %.3f])"
                    % (r["c"], r["alpha"], r["alpha_ci"][0], r["alpha_ci"][1]))
        else:
            e = np.array(r["envelope"])
            ax.plot(e[:, 0], e[:, 1], "k-", lw=1.8,
                    label="η0 envelope (pooled α = %.3f, no power law fits)" % r["alpha"])
        m = np.array(r["observed_max"])
        ax.plot(m[:, 0], m[:, 1], "k_", ms=12, label="largest conforming divergence per n")
        ax.axvspan(lo / 4, lo, color="grey", alpha=0.15)
        ax.axvspan(hi, hi * 4, color="grey", alpha=0.15, label="outside the validity range")
        ax.set_xlim(lo / 2, hi * 2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n = k")
        ax.set_ylabel("%s divergence of a trial (max over its outputs,\nbrought to N0 = %d by the outputs rule)"
                      % (r["metric"], N0))
        h = r["heldout"]
        ax.set_title("%s %s→%s acc %s: held out %d/%d flagged [%.2g, %.2g] (p = %g)"
                     % (r["op"], r["dtype_in"], r["dtype_out"], r["acc"], h["flagged"], h["trials"],
                        h["ci95"][0], h["ci95"][1], tol["false_alarm_target"]), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
        save(fig, out, "fig_tolerance_%d.png" % i, made)
    return made


class _Both:
    """/analysis/* from the analysis file, everything else from the dataset"""

    def __init__(self, analysis, raw):
        self.analysis, self.raw = analysis, raw
        self.attrs = raw.attrs

    def _of(self, key):
        return self.analysis if key.startswith("analysis") else self.raw

    def __getitem__(self, key):
        return self._of(key)[key]

    def __contains__(self, key):
        return key in self._of(key)


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    path, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    with h5py.File(path, "r") as a, h5py.File(argv[3] if len(argv) == 4 else path, "r") as raw:
        f = _Both(a, raw)
        content = s(f.attrs.get("content", ""))
        if content == "detection":
            made = detection(f, out)
        else:
            made = divergence(f, out) + signatures(f, out) + tolerances(f, out)
    print("plot.py: %d figures in %s" % (len(made), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
