"""Where the kcs command is: $KCS, else `kcs` on PATH."""
import os
import shutil


class KcsNotFound(RuntimeError):
    """No kcs binary: set $KCS to its path or put it on PATH."""


def find_kcs():
    """The kcs binary's path: $KCS (which must be an executable file), else
    `kcs` found on PATH. Raises KcsNotFound."""
    env = os.environ.get("KCS")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return os.path.abspath(env)
        raise KcsNotFound(f"$KCS={env!r} is not an executable file")
    found = shutil.which("kcs")
    if found:
        return found
    raise KcsNotFound("no kcs binary: set $KCS to its path or put kcs on PATH "
                      "(build it with scripts/build; it is build/kcs)")
