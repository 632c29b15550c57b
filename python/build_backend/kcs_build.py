"""The build backend of the kcs Python package (PEP 517 and PEP 660), on
the standard library alone: `pip install ./python` needs neither
setuptools nor wheel, nor the network (pyproject.toml requires nothing,
so pip's isolated build environment installs nothing). It works on any
Python >= 3.9 that has pip: a pyenv or python.org build without wheel
as well as Debian's.

A wheel is a zip: the package's .py files and a .dist-info folder
(METADATA, WHEEL, RECORD, top_level.txt). The metadata comes from
pyproject.toml's [project] table: tomllib on Python >= 3.11; before that
a reader for the subset this file uses (tests/test_install.py checks that
the two agree).
"""
import base64
import hashlib
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # python/
PACKAGE = "kcs"
TAG = "py3-none-any"


# --------------------------------------------------------------- metadata


def _toml_value(text, where):
    text = text.strip()
    if text.startswith('"'):
        m = re.match(r'"((?:[^"\\]|\\.)*)"\s*(#.*)?$', text)
        if not m:
            raise ValueError(f"{where}: cannot read {text!r}")
        return bytes(m.group(1), "utf-8").decode("unicode_escape")
    if text.startswith("["):
        body = text.strip()
        if not body.endswith("]"):
            raise ValueError(f"{where}: an array must close on its line or a later one")
        items = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
        return [bytes(i, "utf-8").decode("unicode_escape") for i in items]
    raise ValueError(f"{where}: only strings and arrays of strings are read here: {text!r}")


def read_pyproject_subset(path):
    """pyproject.toml's tables of strings and string arrays (comments,
    multi-line arrays), as {table: {key: value}}: enough for [project]."""
    tables, cur, pending = {}, None, None
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for no, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].rstrip() if '"' not in raw else raw.rstrip()
        if pending is not None:
            key, acc = pending
            acc += " " + line.strip()
            if line.strip().endswith("]"):
                tables[cur][key] = _toml_value(acc, f"{path}:{no}")
                pending = None
            else:
                pending = (key, acc)
            continue
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = re.match(r"^\[([\w.-]+)\]$", s)
        if m:
            cur = m.group(1)
            tables.setdefault(cur, {})
            continue
        m = re.match(r'^([\w-]+)\s*=\s*(.*)$', s)
        if not m or cur is None:
            raise ValueError(f"{path}:{no}: cannot read {raw!r}")
        key, val = m.group(1), m.group(2).strip()
        if val.startswith("[") and not val.split("#")[0].rstrip().endswith("]"):
            pending = (key, val)
            continue
        if val.startswith("{"):  # an inline table of string arrays (optional-dependencies)
            tables.setdefault(f"{cur}.{key}", {})
            for k, v in re.findall(r'([\w-]+)\s*=\s*(\[[^\]]*\])', val):
                tables[f"{cur}.{key}"][k] = _toml_value(v, f"{path}:{no}")
            continue
        tables[cur][key] = _toml_value(val, f"{path}:{no}")
    return tables


def project(use_tomllib=True):
    """The [project] table of pyproject.toml (with its optional-dependencies)."""
    path = os.path.join(ROOT, "pyproject.toml")
    tomllib = None
    if use_tomllib:
        try:
            import tomllib
        except ImportError:
            pass
    if tomllib is None:
        t = read_pyproject_subset(path)
        proj = dict(t.get("project", {}))
        if "project.optional-dependencies" in t:
            proj["optional-dependencies"] = t["project.optional-dependencies"]
        return proj
    with open(path, "rb") as fh:
        return tomllib.load(fh)["project"]


def _norm(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def metadata_text():
    p = project()
    out = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if p.get("description"):
        out.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        out.append(f"Requires-Python: {p['requires-python']}")
    for d in p.get("dependencies", []):
        out.append(f"Requires-Dist: {d}")
    for extra, deps in (p.get("optional-dependencies") or {}).items():
        out.append(f"Provides-Extra: {extra}")
        out += [f"Requires-Dist: {d}; extra == \"{extra}\"" for d in deps]
    readme = p.get("readme")
    body = ""
    if isinstance(readme, str) and os.path.isfile(os.path.join(ROOT, readme)):
        out.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as fh:
            body = fh.read()
    return "\n".join(out) + "\n\n" + body


def _dist_info():
    p = project()
    return f"{_norm(p['name'])}-{p['version']}.dist-info", p


def _wheel_text():
    return f"Wheel-Version: 1.0\nGenerator: kcs_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


# --------------------------------------------------------------- wheels


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def _package_files():
    pkg = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield f"{PACKAGE}/{name}", os.path.join(pkg, name)


def _write_wheel(wheel_directory, files):
    """files: [(archive name, bytes)]; adds the dist-info and RECORD."""
    info, p = _dist_info()
    name = f"{_norm(p['name'])}-{p['version']}-{TAG}.whl"
    files = list(files) + [
        (f"{info}/METADATA", metadata_text().encode("utf-8")),
        (f"{info}/WHEEL", _wheel_text().encode()),
        (f"{info}/top_level.txt", f"{PACKAGE}\n".encode()),
    ]
    record = [_record_line(a, d) for a, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data in files:
            zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for arc, src in _package_files():
        with open(src, "rb") as fh:
            files.append((arc, fh.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth puts this source folder on sys.path."""
    return _write_wheel(wheel_directory, [("_kcs_editable.pth", (ROOT + "\n").encode())])


def _prepare_metadata(metadata_directory):
    info, _ = _dist_info()
    d = os.path.join(metadata_directory, info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write(metadata_text())
    with open(os.path.join(d, "WHEEL"), "w") as fh:
        fh.write(_wheel_text())
    return info


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    p = project()
    base = f"{_norm(p['name'])}-{p['version']}"
    name = f"{base}.tar.gz"
    keep = ["pyproject.toml", "README.md", "build_backend/kcs_build.py"]
    keep += [arc for arc, _ in _package_files()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
        for rel in keep:
            tf.add(os.path.join(ROOT, rel), arcname=f"{base}/{rel}")
        pkg_info = metadata_text().encode("utf-8")
        import io
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tf.addfile(ti, io.BytesIO(pkg_info))
    return name
