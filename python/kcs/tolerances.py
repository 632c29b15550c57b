"""Recommended tolerances (tolerances.json, written by `kcs reduce`) applied
to one shape and output count.

The file (format "kcs-tolerances", version 1):

    {"format": "kcs-tolerances", "version": 1, "false_alarm_target": p,
     "recommendations": [
       {"op", "dtype_in", "dtype_out", "acc" ("any" matches every accumulator),
        "metric", "form": "power" | "envelope", "u", "c", "alpha", "alpha_ci",
        "envelope": [[n, eta0], ...],
        "valid": {"n_min", "n_max", "outputs_fitted": N0, "outputs_max", ...},
        "outputs_rule": "log_power", "outputs_exponent": gamma,
        "torch": {"points": [[n, rtol, atol], ...], "outputs": N0},
        "heldout": {...}}, ...]}

For reduction length n = k and N outputs:

    power:     eta0(n) = c * n**alpha * u
    envelope:  eta0(n) interpolated log-log between the points; no
               extrapolation: outside the points eta is NaN
    eta(n, N) = eta0(n) * max(1, (ln(2N/p) / ln(2 N0/p))**gamma)   ("log_power")

The factor is the union bound over N outputs of a Weibull-type tail
P(|e| > t) ~ exp(-(t/b)**(1/gamma)), gamma fitted by `kcs reduce` from the
output counts it saw (1/2: a Gaussian tail, the older "sqrt_log" rule,
still read; 1: exponential); it never shrinks a tolerance below the fit.
N outside [outputs_fitted, outputs_max] (the validated output counts) or k
outside [n_min, n_max] warns (ToleranceScopeWarning, valid=False).
torch's (rtol, atol) are interpolated log-log over the points (NaN outside
them) and scaled by the same factor, with N0 = torch.outputs.
"""
import json
import math
import os
import warnings

FORMAT = "kcs-tolerances"
VERSION = 1


class ToleranceError(ValueError):
    """The tolerances file is malformed, or no (or more than one)
    recommendation matches the request."""


class ToleranceOutOfScope(ToleranceError):
    """tolerance(..., strict=True) asked outside the recommendation's scope:
    k outside its validity range, or an absolute metric asked for inputs
    other than those it was fitted on."""


class ToleranceScopeWarning(UserWarning):
    """tolerance() answered outside the recommendation's scope (valid=False)."""


def _read(source):
    if isinstance(source, dict):
        return source, "<dict>"
    if hasattr(source, "read"):
        return json.load(source), getattr(source, "name", "<stream>")
    path = os.fspath(source)
    with open(path, "r", encoding="utf-8") as fh:
        try:
            return json.load(fh), path
        except json.JSONDecodeError as e:
            raise ToleranceError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None


def _num(rec, key, where, positive=False):
    v = rec.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ToleranceError(f"{where}: {key}: expected a finite number, got {v!r}")
    if positive and v <= 0:
        raise ToleranceError(f"{where}: {key}: must be > 0, got {v!r}")
    return float(v)


def _interp_loglog(points, n, where):
    """Value at n on the piecewise log-log line through points [(x, y)],
    sorted by x; NaN outside [x_first, x_last]. A segment with a zero end is
    interpolated linearly in log x (log 0 does not exist)."""
    if not points:
        raise ToleranceError(f"{where}: no points")
    xs = [p[0] for p in points]
    if n < xs[0] or n > xs[-1]:
        return float("nan")
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= n <= x1:
            if n == x0:
                return y0
            if n == x1:
                return y1
            t = (math.log(n) - math.log(x0)) / (math.log(x1) - math.log(x0))
            if math.isnan(y0) or math.isnan(y1):
                return float("nan")
            if y0 > 0 and y1 > 0:
                return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))
            return y0 + t * (y1 - y0)
    return points[-1][1]  # n == xs[-1] with a single point


def _points(raw, width, where):
    if not isinstance(raw, list) or not raw:
        raise ToleranceError(f"{where}: expected a non-empty list of [n, ...] points")
    pts = []

    def number(v):
        return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)

    for i, p in enumerate(raw):
        # a value kcs could not compute is null: NaN here, so that a k that
        # needs it gets NaN rather than a number made up
        if (not isinstance(p, list) or len(p) != width or not number(p[0])
                or any(v is not None and not number(v) for v in p[1:])):
            raise ToleranceError(f"{where}[{i}]: expected {width} finite numbers (values may be "
                                 f"null), got {p!r}")
        if p[0] <= 0 or any(v is not None and v < 0 for v in p[1:]):
            raise ToleranceError(f"{where}[{i}]: n must be > 0 and values >= 0, got {p!r}")
        pts.append([float(v) if v is not None else float("nan") for v in p])
    pts.sort(key=lambda p: p[0])
    for a, b in zip(pts, pts[1:]):
        if a[0] == b[0]:
            raise ToleranceError(f"{where}: two points at n = {a[0]:g}")
    return pts


def outputs_factor(outputs, outputs_fitted, p, exponent=0.5):
    """max(1, (ln(2N/p) / ln(2 N0/p))**exponent): how much the largest of N
    errors exceeds the largest of the N0 it was fitted on (log_power rule;
    exponent 1/2 is the older sqrt_log rule)."""
    if outputs < 1 or outputs_fitted < 1:
        raise ToleranceError(f"output counts must be >= 1 (N = {outputs}, N0 = {outputs_fitted})")
    if not 0 < p < 1:
        raise ToleranceError(f"false_alarm_target must be in (0, 1), got {p}")
    return max(1.0, (math.log(2.0 * outputs / p) / math.log(2.0 * outputs_fitted / p)) ** exponent)


def _matches(rec, op, dtype_in, acc, dtype_out, metric):
    if rec.get("op") != op or rec.get("dtype_in") != dtype_in:
        return False
    if acc is not None and rec.get("acc") not in ("any", acc):
        return False
    if dtype_out is not None and rec.get("dtype_out") != dtype_out:
        return False
    if metric is not None and rec.get("metric") != metric:
        return False
    return True


def _describe(rec):
    return (f"op={rec.get('op')} dtype_in={rec.get('dtype_in')} dtype_out={rec.get('dtype_out')} "
            f"acc={rec.get('acc')} metric={rec.get('metric')}")


def tolerance(source, *, op, dtype_in, k, outputs, acc=None, dtype_out=None, metric=None,
              inputs=None, strict=False):
    """The recommended tolerance of `source` (a tolerances.json path, an open
    file or the parsed dict) for op/dtype_in at reduction length k, applied
    to `outputs` output elements.

    acc, dtype_out, metric narrow the choice when the file holds several
    recommendations for op and dtype_in (acc=None matches any; a
    recommendation whose acc is "any" matches every acc). Exactly one must
    match, or ToleranceError says which ones exist.

    inputs: the input distribution the caller's data follow (a kcs name:
    normal, uniform_pm1, ...), checked against the one an absolute metric
    was fitted on; None: not checked (scope says which it was).

    Returns {"eta", "rtol", "atol", "metric", "valid", "scope", "scale_free",
    "problems", "warnings"}: eta the tolerance of the recommendation's metric (NaN
    outside an envelope's points); rtol and atol for
    torch.testing.assert_close (None when the file has no torch points; NaN
    outside them; atol is absolute: it holds at the fitted inputs' scale);
    scope what the number holds for: {"op", "dtype_in", "dtype_out", "acc",
    "metric", "inputs", "k", "k_range": [n_min, n_max], "outputs",
    "outputs_fitted", "input_scale"}; scale_free eta as a bound relative to
    |A||B| (|C - C_ref|_ij <= eta (|A||B|)_ij, any input scale: see
    bound()) when the metric is "scaled", else None; valid True when k lies
    in [n_min, n_max], outputs in [outputs_fitted, outputs_max] (the
    validated output counts) and the inputs (when given) suit the metric;
    problems the reasons it is not; warnings the warning issued (a list).

    Outside its scope the tolerance is still computed (power form), so that
    the caller can see by how much, with a ToleranceScopeWarning; with
    strict=True it raises ToleranceOutOfScope instead.
    """
    doc, name = _read(source)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ToleranceError(f"{name}: not a kcs tolerances file (format is "
                             f"{doc.get('format') if isinstance(doc, dict) else type(doc).__name__!r})")
    if doc.get("version") != VERSION:
        raise ToleranceError(f"{name}: version {doc.get('version')!r}, this package reads {VERSION}")
    p = _num(doc, "false_alarm_target", name, positive=True)
    recs = doc.get("recommendations")
    if not isinstance(recs, list):
        raise ToleranceError(f"{name}: recommendations: expected a list")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ToleranceError(f"k must be a positive number, got {k!r}")
    if isinstance(outputs, bool) or not isinstance(outputs, (int, float)) or not outputs >= 1:
        raise ToleranceError(f"outputs must be >= 1, got {outputs!r}")

    hits = [(i, r) for i, r in enumerate(recs)
            if isinstance(r, dict) and _matches(r, op, dtype_in, acc, dtype_out, metric)]
    if not hits:
        for w in doc.get("withheld") or []:
            if isinstance(w, dict) and _matches(w, op, dtype_in, acc, dtype_out, None):
                raise ToleranceError(f"{name}: no recommendation for {_describe(w)}: withheld, "
                                     f"the data were too few ({w.get('missing')})")
    if len(hits) != 1:
        have = "; ".join(_describe(r) for r in recs if isinstance(r, dict)) or "none"
        what = "no recommendation" if not hits else f"{len(hits)} recommendations"
        raise ToleranceError(
            f"{name}: {what} for op={op} dtype_in={dtype_in}"
            + (f" acc={acc}" if acc is not None else "")
            + (f" dtype_out={dtype_out}" if dtype_out is not None else "")
            + (f" metric={metric}" if metric is not None else "")
            + f" (the file has: {have})")
    i, rec = hits[0]
    where = f"{name}: recommendations[{i}]"

    valid_rec = rec.get("valid")
    if not isinstance(valid_rec, dict):
        raise ToleranceError(f"{where}: valid: expected an object")
    n_min = _num(valid_rec, "n_min", f"{where}.valid", positive=True)
    n_max = _num(valid_rec, "n_max", f"{where}.valid", positive=True)
    n0 = _num(valid_rec, "outputs_fitted", f"{where}.valid", positive=True)
    n0_max = valid_rec.get("outputs_max", n0)
    if n0_max is None:
        n0_max = n0
    n0_max = _num({"outputs_max": n0_max}, "outputs_max", f"{where}.valid", positive=True)
    rule = rec.get("outputs_rule", "sqrt_log")
    if rule == "sqrt_log":
        gamma = 0.5
    elif rule == "log_power":
        gamma = _num(rec, "outputs_exponent", where, positive=True)
    else:
        raise ToleranceError(f"{where}: outputs_rule {rule!r}: log_power and sqrt_log are known")

    form = rec.get("form")
    if form == "power":
        c = _num(rec, "c", where)
        alpha = _num(rec, "alpha", where)
        u = _num(rec, "u", where, positive=True)
        eta0 = c * float(k) ** alpha * u
    elif form == "envelope":
        pts = _points(rec.get("envelope"), 2, f"{where}.envelope")
        eta0 = _interp_loglog([(a, b) for a, b in pts], float(k), f"{where}.envelope")
    else:
        raise ToleranceError(f"{where}: form {form!r}: expected power or envelope")
    eta = eta0 * outputs_factor(outputs, n0, p, gamma)

    rtol = atol = None
    tr = rec.get("torch")
    if tr is not None:
        if not isinstance(tr, dict):
            raise ToleranceError(f"{where}.torch: expected an object")
        tpts = _points(tr.get("points"), 3, f"{where}.torch.points")
        tn0 = _num(tr, "outputs", f"{where}.torch", positive=True)
        g = outputs_factor(outputs, tn0, p, gamma)
        rtol = _interp_loglog([(a, b) for a, b, _ in tpts], float(k), f"{where}.torch") * g
        atol = _interp_loglog([(a, c) for a, _, c in tpts], float(k), f"{where}.torch") * g

    mname = rec.get("metric")
    fitted_inputs = rec.get("inputs") if isinstance(rec.get("inputs"), str) else None
    scaled = mname == "scaled"
    problems = []
    if not n_min <= k <= n_max:
        problems.append(f"k = {k:g} is outside the validity range [{n_min:g}, {n_max:g}] "
                        f"(the fit saw no k there: the value is "
                        f"{'extrapolated' if form == 'power' else 'NaN'})")
    if outputs > n0_max:
        problems.append(f"N = {outputs:.0f} outputs is beyond the validated output counts "
                        f"[{n0:g}, {n0_max:g}] (the outputs rule is extrapolated)")
    if inputs is not None and not scaled and fitted_inputs and inputs != fitted_inputs:
        problems.append(f"metric {mname} is absolute and was fitted on {fitted_inputs} inputs, "
                        f"asked for {inputs}: it does not carry over to another input scale")
    if scaled:
        scale = "relative to |A||B|: any input scale"
    elif fitted_inputs:
        scale = f"absolute: holds at the scale of {fitted_inputs} inputs only"
    else:
        scale = "absolute: the input scale it was fitted on is not recorded"
    scope = {"op": op, "dtype_in": dtype_in, "dtype_out": rec.get("dtype_out"),
             "acc": rec.get("acc"), "metric": mname, "inputs": fitted_inputs, "k": k,
             "k_range": [n_min, n_max], "outputs": outputs, "outputs_fitted": n0,
             "outputs_range": [n0, n0_max], "outputs_exponent": gamma, "input_scale": scale}
    if problems:
        what = (f"{name}: the tolerance for op={op} dtype_in={dtype_in} "
                f"dtype_out={rec.get('dtype_out')} acc={rec.get('acc')} (metric {mname}, valid "
                f"for k in [{n_min:g}, {n_max:g}] and N in [{n0:g}, {n0_max:g}] outputs, {scale}) "
                f"asked outside its scope: " + "; ".join(problems))
        if strict:
            raise ToleranceOutOfScope(what)
        warnings.warn(what, ToleranceScopeWarning, stacklevel=2)
    return {
        "eta": eta,
        "rtol": rtol,
        "atol": atol,
        "metric": mname,
        "valid": not problems,
        "scope": scope,
        "scale_free": eta if scaled else None,
        "problems": problems,
        "warnings": [what] if problems else [],
    }


def bound(tol, A, B, C=None):
    """The elementwise bound on |C_kernel - C_ref| that tol (a tolerance()
    answer) gives for the product of A (m x k) and B (k x n) (+ C):
    eta * (|A| @ |B| + |C|) for the scaled metric (any input scale), eta
    everywhere for an absolute one. A numpy array (torch tensors are
    converted); compare with np.abs(got - ref) <= bound(...)."""
    import numpy as np

    def arr(x):
        if hasattr(x, "detach"):
            x = x.detach().cpu().float().numpy()
        return np.asarray(x, dtype=np.float64)

    a, b = arr(A), arr(B)
    mag = np.abs(a) @ np.abs(b)
    if C is not None:
        mag = mag + np.abs(arr(C))
    if tol.get("metric") == "scaled":
        return tol["eta"] * mag
    return np.full(mag.shape, tol["eta"])
