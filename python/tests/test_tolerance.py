"""kcs.tolerance on hand-written tolerances.json files. Expected values are
derived here by hand from the numbers in each file (chosen so that the
answers are exact: points on a power law, N = N0, N0 squared ...), not by
calling the code under test."""
import io
import json
import math

import pytest

import kcs

P = 0.01
U32 = 2.0 ** -24


def doc(*recs, p=P):
    return {"format": "kcs-tolerances", "version": 1, "false_alarm_target": p,
            "recommendations": list(recs)}


def power(**kw):
    r = {"op": "gemm", "dtype_in": "fp32", "dtype_out": "fp32", "acc": "fp32",
         "metric": "max_scaled", "form": "power", "u": U32, "c": 3.0, "alpha": 0.5,
         "alpha_ci": [0.4, 0.6], "envelope": [],
         "valid": {"n_min": 64, "n_max": 16384, "outputs_fitted": 1024},
         "outputs_rule": "sqrt_log",
         "torch": {"points": [[64, 1e-6, 1e-5], [1024, 4e-6, 4e-5], [16384, 1.6e-5, 1.6e-4]],
                   "outputs": 1024},
         "heldout": {"trials": 100, "flagged": 0}}
    r.update(kw)
    return r


def envelope(**kw):
    r = {"op": "softmax", "dtype_in": "fp16", "dtype_out": "fp16", "acc": "any",
         "metric": "max_abs", "form": "envelope", "u": 2.0 ** -11,
         "envelope": [[256, 8e-4], [1024, 2e-4], [4096, 1e-4]],
         "valid": {"n_min": 256, "n_max": 4096, "outputs_fitted": 4096},
         "outputs_rule": "sqrt_log"}
    r.update(kw)
    return r


def write(tmp_path, d):
    p = tmp_path / "tolerances.json"
    p.write_text(json.dumps(d))
    return p


def test_power_form_at_the_fitted_output_count(tmp_path):
    src = write(tmp_path, doc(power()))
    t = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=1024)
    # c * k^alpha * u = 3 * 64 * 2^-24, factor 1 at N = N0
    assert t["eta"] == pytest.approx(3 * 64 * 2.0 ** -24, rel=1e-12)
    assert t["metric"] == "max_scaled" and t["valid"] is True
    # torch: log-log between (1024, 4e-6, 4e-5) and (16384, 1.6e-5, 1.6e-4):
    # rtol doubles per factor 4 of n, so n^0.5; at 4096 = 1024 * 4: 8e-6
    assert t["rtol"] == pytest.approx(8e-6, rel=1e-12)
    assert t["atol"] == pytest.approx(8e-5, rel=1e-12)


def test_more_outputs_widen_by_the_sqrt_log_rule(tmp_path):
    src = write(tmp_path, doc(power()))
    n0 = 1024
    big = (2 * n0 / P) ** 2 * P / 2  # ln(2N/p) = 2 ln(2 N0/p): factor sqrt(2)
    t = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=big)
    assert t["eta"] == pytest.approx(3 * 8 * U32 * math.sqrt(2), rel=1e-9)
    assert t["rtol"] == pytest.approx(1e-6 * math.sqrt(2), rel=1e-9)
    assert t["atol"] == pytest.approx(1e-5 * math.sqrt(2), rel=1e-9)
    # fewer outputs than fitted never tighten it
    small = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=16)
    assert small["eta"] == pytest.approx(3 * 8 * U32, rel=1e-12)


def test_validity_range(tmp_path):
    src = write(tmp_path, doc(power()))
    inside = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=16384, outputs=1024)
    with pytest.warns(kcs.ToleranceScopeWarning, match=r"k = 65536 is outside the validity "
                                                       r"range \[64, 16384\]"):
        outside = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=65536, outputs=1024)
    assert inside["valid"] is True and outside["valid"] is False
    assert inside["problems"] == [] and len(outside["problems"]) == 1
    with pytest.raises(kcs.ToleranceOutOfScope, match="asked outside its scope"):
        kcs.tolerance(src, op="gemm", dtype_in="fp32", k=65536, outputs=1024, strict=True)
    # the power form is still evaluated outside (3 * 256 * u) ...
    assert outside["eta"] == pytest.approx(3 * 256 * U32, rel=1e-12)
    # ... torch points are not extrapolated
    assert math.isnan(outside["rtol"]) and math.isnan(outside["atol"])


def test_envelope_interpolates_log_log_and_never_extrapolates(tmp_path):
    src = write(tmp_path, doc(envelope()))
    # between (256, 8e-4) and (1024, 2e-4): slope -1 in log-log; at 512: 4e-4
    t = kcs.tolerance(src, op="softmax", dtype_in="fp16", k=512, outputs=4096)
    assert t["eta"] == pytest.approx(4e-4, rel=1e-12)
    assert t["rtol"] is None and t["atol"] is None  # no torch points in the file
    # between (1024, 2e-4) and (4096, 1e-4): slope -1/2; at 2048: 2e-4 / sqrt(2)
    t = kcs.tolerance(src, op="softmax", dtype_in="fp16", k=2048, outputs=4096)
    assert t["eta"] == pytest.approx(2e-4 / math.sqrt(2), rel=1e-12)
    # on a point exactly
    assert kcs.tolerance(src, op="softmax", dtype_in="fp16", k=4096,
                         outputs=4096)["eta"] == pytest.approx(1e-4, rel=1e-15)
    for k in (128, 8192):
        with pytest.warns(kcs.ToleranceScopeWarning, match="NaN"):
            t = kcs.tolerance(src, op="softmax", dtype_in="fp16", k=k, outputs=4096)
        assert math.isnan(t["eta"]) and t["valid"] is False


def test_acc_any_matches_and_choices_are_explicit(tmp_path):
    d = doc(power(), power(acc="bf16", c=30.0), envelope())
    src = write(tmp_path, d)
    # acc "any" matches whatever is asked
    t = kcs.tolerance(src, op="softmax", dtype_in="fp16", k=256, outputs=4096, acc="fp32")
    assert t["eta"] == pytest.approx(8e-4)
    # two gemm fp32 recommendations: acc must choose
    with pytest.raises(kcs.ToleranceError, match="2 recommendations"):
        kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=1024)
    t = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=1024, acc="bf16")
    assert t["eta"] == pytest.approx(30 * 8 * U32, rel=1e-12)
    with pytest.raises(kcs.ToleranceError, match="no recommendation for op=gemm dtype_in=bf16"):
        kcs.tolerance(src, op="gemm", dtype_in="bf16", k=64, outputs=1024)


def test_sources_and_bad_files(tmp_path):
    d = doc(power())
    a = kcs.tolerance(d, op="gemm", dtype_in="fp32", k=1024, outputs=1024)
    b = kcs.tolerance(io.StringIO(json.dumps(d)), op="gemm", dtype_in="fp32", k=1024,
                      outputs=1024)
    assert a == b and a["eta"] == pytest.approx(3 * 32 * U32, rel=1e-12)
    with pytest.raises(kcs.ToleranceError, match="not a kcs tolerances file"):
        kcs.tolerance({"format": "x"}, op="gemm", dtype_in="fp32", k=1, outputs=1)
    with pytest.raises(kcs.ToleranceError, match="version 2"):
        kcs.tolerance(dict(d, version=2), op="gemm", dtype_in="fp32", k=1, outputs=1)
    with pytest.raises(kcs.ToleranceError, match="form 'cubic'"):
        kcs.tolerance(doc(power(form="cubic")), op="gemm", dtype_in="fp32", k=64, outputs=1)
    with pytest.raises(kcs.ToleranceError, match=r"envelope\[1\]"):
        kcs.tolerance(doc(envelope(envelope=[[256, 1e-3], [1024]])), op="softmax",
                      dtype_in="fp16", k=256, outputs=1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kcs-tolerances",\n "version": }')
    with pytest.raises(kcs.ToleranceError, match=r"bad.json:2:"):
        kcs.tolerance(bad, op="gemm", dtype_in="fp32", k=64, outputs=1)


def test_nulls_and_withheld_keys(tmp_path):
    # kcs writes null for a number it could not compute: NaN where needed
    rec = power(torch={"points": [[64, 1e-6, None], [1024, 4e-6, 4e-5]], "outputs": 1024})
    d = doc(rec)
    d["withheld"] = [{"op": "gemm", "dtype_in": "bf16", "dtype_out": "fp32", "acc": "fp32",
                      "missing": "2 implementations, 1 needed more"}]
    t = kcs.tolerance(d, op="gemm", dtype_in="fp32", k=64, outputs=1024)
    assert t["rtol"] == pytest.approx(1e-6) and math.isnan(t["atol"])
    t = kcs.tolerance(d, op="gemm", dtype_in="fp32", k=1024, outputs=1024)
    assert t["atol"] == pytest.approx(4e-5)
    t = kcs.tolerance(d, op="gemm", dtype_in="fp32", k=256, outputs=1024)
    assert t["rtol"] == pytest.approx(2e-6) and math.isnan(t["atol"])
    with pytest.raises(kcs.ToleranceError, match="withheld.*1 needed more"):
        kcs.tolerance(d, op="gemm", dtype_in="bf16", k=64, outputs=1024)


def test_the_answer_states_its_scope(tmp_path):
    src = write(tmp_path, doc(power(inputs="normal")))
    with pytest.warns(kcs.ToleranceScopeWarning, match="N = 4096 outputs is beyond"):
        t = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=4096)
    assert t["scope"] == {"op": "gemm", "dtype_in": "fp32", "dtype_out": "fp32", "acc": "fp32",
                          "metric": "max_scaled", "inputs": "normal", "k": 4096,
                          "k_range": [64.0, 16384.0], "outputs": 4096,
                          "outputs_fitted": 1024.0,
                          # a sqrt_log file without outputs_max: validated at N0 only
                          "outputs_range": [1024.0, 1024.0], "outputs_exponent": 0.5,
                          "input_scale": "absolute: holds at the scale of normal inputs only"}
    # max_scaled is not the reducer's "scaled" metric name: no scale-free form
    assert t["scale_free"] is None


def test_an_absolute_tolerance_is_tied_to_its_inputs(tmp_path):
    src = write(tmp_path, doc(power(metric="abs", inputs="normal")))
    ok = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=1024, inputs="normal")
    assert ok["valid"] is True
    with pytest.warns(kcs.ToleranceScopeWarning, match="fitted on normal inputs, asked for "
                                                       "uniform_pm1"):
        other = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=1024,
                              inputs="uniform_pm1")
    assert other["valid"] is False and other["eta"] == ok["eta"]
    with pytest.raises(kcs.ToleranceOutOfScope):
        kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=1024,
                      inputs="uniform_pm1", strict=True)


def test_the_scale_free_form_and_its_bound(tmp_path):
    np = pytest.importorskip("numpy")
    src = write(tmp_path, doc(power(metric="scaled", inputs="normal")))
    # a scaled tolerance holds at any input scale: other inputs are fine
    t = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=4096, outputs=1024, inputs="large")
    assert t["valid"] is True and t["scale_free"] == t["eta"]
    assert t["scope"]["input_scale"] == "relative to |A||B|: any input scale"
    A = np.array([[1.0, -2.0], [0.5, 0.0]])
    B = np.array([[3.0, 1.0], [-1.0, 4.0]])
    # |A||B| = [[1*3 + 2*1, 1*1 + 2*4], [0.5*3, 0.5*1]] = [[5, 9], [1.5, 0.5]]
    assert np.allclose(kcs.bound(t, A, B), t["eta"] * np.array([[5.0, 9.0], [1.5, 0.5]]),
                       rtol=1e-15)
    C = np.array([[-1.0, 0.0], [0.0, 2.0]])
    assert np.allclose(kcs.bound(t, A, B, C), t["eta"] * np.array([[6.0, 9.0], [1.5, 2.5]]),
                       rtol=1e-15)
    absolute = kcs.tolerance(doc(power(metric="abs")), op="gemm", dtype_in="fp32", k=4096,
                             outputs=1024)
    assert absolute["scale_free"] is None
    assert (kcs.bound(absolute, A, B) == absolute["eta"]).all()


def test_log_power_rule_uses_the_fitted_exponent(tmp_path):
    # ln(2N/p) = 2 ln(2 N0/p): the factor is 2**gamma
    n0 = 1024
    big = (2 * n0 / P) ** 2 * P / 2
    rec = power(outputs_rule="log_power", outputs_exponent=1.25,
                valid={"n_min": 64, "n_max": 16384, "outputs_fitted": n0, "outputs_max": big})
    t = kcs.tolerance(write(tmp_path, doc(rec)), op="gemm", dtype_in="fp32", k=64, outputs=big)
    assert t["eta"] == pytest.approx(3 * 8 * U32 * 2.0 ** 1.25, rel=1e-9)
    assert t["valid"] is True and t["warnings"] == []
    assert t["scope"]["outputs_range"] == [n0, big] and t["scope"]["outputs_exponent"] == 1.25
    with pytest.raises(kcs.ToleranceError, match="outputs_exponent"):
        kcs.tolerance(write(tmp_path, doc(power(outputs_rule="log_power"))), op="gemm",
                      dtype_in="fp32", k=64, outputs=n0)


def test_outputs_beyond_the_validated_range_warn(tmp_path):
    rec = power(outputs_rule="log_power", outputs_exponent=1.0,
                valid={"n_min": 64, "n_max": 16384, "outputs_fitted": 1024,
                       "outputs_max": 4096})
    src = write(tmp_path, doc(rec))
    inside = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=4096)
    assert inside["valid"] is True
    with pytest.warns(kcs.ToleranceScopeWarning, match=r"N = 1048576 outputs is beyond the "
                                                       r"validated output counts \[1024, 4096\]"):
        out = kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=1048576)
    assert out["valid"] is False and len(out["warnings"]) == 1
    assert "1048576" in out["warnings"][0]
    # still evaluated: factor ln(2^21/p) / ln(2^11/p), exponent 1
    f = math.log(2.0 ** 21 / P) / math.log(2.0 ** 11 / P)
    assert out["eta"] == pytest.approx(3 * 8 * U32 * f, rel=1e-9)
    with pytest.raises(kcs.ToleranceOutOfScope):
        kcs.tolerance(src, op="gemm", dtype_in="fp32", k=64, outputs=1048576, strict=True)
