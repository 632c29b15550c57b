"""Checks of a kcs publish bundle from outside kcs (python csv + json + h5py,
no network): every file of the bundle is in datapackage.json with its
sha256 and size, every CSV's header is its schema's fields and every cell
parses as its field's type, every measurement's max_abs is the largest
max_abs of the /results rows its rows page names (read with h5py), the
datasets are readable, CITATION.cff names the version and licence.
Usage: check_bundle.py DIR"""
import csv
import hashlib
import json
import os
import re
import sys

import h5py
import numpy as np

d = sys.argv[1]
pkg = json.load(open(os.path.join(d, "datapackage.json")))
assert pkg["profile"] == "data-package", pkg.get("profile")
assert pkg["licenses"][0]["name"] == "CC-BY-4.0"
files = set()
for root, _, names in os.walk(d):
    for n in names:
        files.add(os.path.relpath(os.path.join(root, n), d))
listed = set()
names = set()
for r in pkg["resources"]:
    p = r["path"]
    listed.add(p)
    assert re.fullmatch(r"[a-z0-9._-]+", r["name"]), r["name"]
    assert r["name"] not in names, "duplicate resource name " + r["name"]
    names.add(r["name"])
    data = open(os.path.join(d, p), "rb").read()
    assert r["hash"] == "sha256:" + hashlib.sha256(data).hexdigest(), p
    assert r["bytes"] == len(data), p
    if p.endswith(".csv"):
        assert r["format"] == "csv" and r["mediatype"] == "text/csv", p
        fields = r["schema"]["fields"]
        rows = list(csv.reader(open(os.path.join(d, p), newline="")))
        assert rows[0] == [f["name"] for f in fields], (p, rows[0])
        missing = set(r["schema"].get("missingValues", [""]))
        for i, row in enumerate(rows[1:]):
            assert len(row) <= len(fields), (p, i)
            for f, v in zip(fields, row):
                if v in missing:
                    continue
                if f["type"] == "integer":
                    int(v)
                elif f["type"] == "number":
                    float(v)
                elif f["type"] == "boolean":
                    assert v in ("true", "false"), (p, i, f["name"], v)
assert files - {"datapackage.json"} == listed, files ^ listed

cff = open(os.path.join(d, "CITATION.cff")).read()
assert "cff-version: 1.2.0" in cff and "license: CC-BY-4.0" in cff
assert 'name: "kcs contributors"' in cff and re.search(r'date-released: "\d{4}-\d\d-\d\d"', cff)
assert "CC-BY-4.0" in open(os.path.join(d, "LICENSE-data.txt")).read()
json.load(open(os.path.join(d, "tolerances.json")))

# every measurement computed from HDF5 rows: its max_abs is theirs
meas = list(csv.DictReader(open(os.path.join(d, "tables/measurements.csv"), newline="")))
page = open(os.path.join(d, "rows/measurements.html")).read()
h5 = {}
checked = 0
for m in meas:
    if m["imported"] == "true" or not m["max_abs"]:
        continue
    block = page.split('id="r-%s"' % m["row_id"])[1].split("<h3")[0]
    refs = re.findall(r'<code>(data/[^<]+\.h5)</code></a> <code>/results rows (\d+)\.\.(\d+) '
                      r'\(case_id (\d+), rank (\d+),', block)
    assert refs, m["row_id"]
    best = -1.0
    for path, first, last, case, rank in refs:
        f = h5.setdefault(path, h5py.File(os.path.join(d, path), "r"))
        rows = f["results"][int(first):int(last) + 1]
        assert all(rows["case_id"] == int(case)) and all(rows["rank"] == int(rank)), (path, first)
        ok = rows["status"] == b"ok" if rows["status"].dtype.kind == "S" else rows["status"] == "ok"
        best = max(best, float(np.max(rows["max_abs"])))
    assert abs(best - float(m["max_abs"])) <= 1e-12 * abs(best), (m["row_id"], best, m["max_abs"])
    checked += 1
assert checked > 0, "no measurement checked against its HDF5 rows"
print("check_bundle: %d files hashed, %d measurements traced to their HDF5 rows" %
      (len(listed), checked))
