"""kcs from Python: grade a numpy or torch kernel against a kernel contract
(check, assert_conforms), read a kcs dataset into pandas (load), and carry a
recommended tolerance into a test (tolerance).

The kcs binary is found on PATH or in $KCS. Names are imported on first use,
so that `python -m kcs.relay` (the worker program kcs starts) loads neither
numpy nor pandas."""
import importlib

__version__ = "0.1.0"

_WHERE = {
    "check": "check", "assert_conforms": "check", "Result": "check",
    "WorkerModeUnsupported": "check", "KcsRefused": "check", "KcsRunFailed": "check",
    "KernelNotTransferable": "host",
    "load": "dataset", "output_len": "dataset", "sample_positions": "dataset",
    "tolerance": "tolerances", "ToleranceError": "tolerances", "outputs_factor": "tolerances",
    "ToleranceOutOfScope": "tolerances", "ToleranceScopeWarning": "tolerances",
    "bound": "tolerances",
    "Raised": "worker",
    "find_kcs": "_binary", "KcsNotFound": "_binary",
}
__all__ = sorted(_WHERE)


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'kcs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
