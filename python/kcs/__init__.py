"""kcs from Python: grade a numpy or torch kernel against a kernel contract
(check, assert_conforms), read a kcs dataset into pandas (load), and carry a
recommended tolerance into a test (tolerance).

The kcs binary is found on PATH or in $KCS."""
from ._binary import KcsNotFound, find_kcs
from .check import Result, WorkerModeUnsupported, assert_conforms, check
from .dataset import load, output_len, sample_positions
from .tolerances import ToleranceError, outputs_factor, tolerance
from .worker import Raised

__version__ = "0.1.0"
__all__ = ["check", "assert_conforms", "Result", "load", "tolerance", "Raised",
           "find_kcs", "KcsNotFound", "WorkerModeUnsupported", "ToleranceError",
           "outputs_factor", "output_len", "sample_positions"]
