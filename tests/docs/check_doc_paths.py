#!/usr/bin/env python3
"""Every repository path the docs name must exist.

Docs read: README.md, ARCHITECTURE.md, every contracts/**/README.md, the
stage READMEs listed in STAGE_READMES, and docs/**/*.md except docs/notes/
and docs/silicon/ (dated records: they describe the tree as it was) and
docs/atlas/ (a published bundle: its imported reports are records too).

What counts as a path:
  - a `backtick span` or a markdown link target ](...) that is one word and
    either starts with a top-level folder or file of the repository
    (src/, analysis/, backends/, contracts/, ...), or has a slash, or is a
    bare file name with a source extension (EXTS);
  - anywhere else in the text (prose, code blocks), a word that starts with
    a top-level folder followed by a slash (src/run/journal.c).
A path with a slash is looked up from the repository root, then from the
doc's own folder (relative links); a bare file name must be the name of
some file of the repository (any folder).

Ignored, explicitly: URLs, anything with a glob or placeholder character
(* ? < > { } $), paths under IGNORED_PREFIXES (build outputs, results, the
install tree), and words whose first character cannot start a path.

Usage: check_doc_paths.py SOURCE_DIR      exit 0, or 1 listing doc:line: path
       check_doc_paths.py --self-test     plants a missing and an existing path
"""
import os
import re
import subprocess
import sys
import tempfile

TOP_FOLDERS = ("src", "analysis", "backends", "contracts", "studies", "scripts",
               "tests", "docs", "python", "include", "cmake")
STAGE_READMES = ("analysis/README.md", "python/README.md", "tests/plugin/README.md")
# Bare file names with these extensions are checked; others (out.h5,
# report.md, power.png) are user or output names.
EXTS = (".c", ".h", ".cu", ".cuh", ".hip", ".cl", ".py", ".sh", ".cmake",
        ".in", ".yaml", ".sbatch")
# Paths that name build outputs, results or the install tree, not the repo.
IGNORED_PREFIXES = ("build/", "results/", "include/kcs/", "lib/", "bin/",
                    "share/", "/", "~", "$")
PLACEHOLDER = re.compile(r"[*?<>{}$|]")
URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^mailto:|^#")

BACKTICK = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_word_re(tops):
    return re.compile(r"(?<![\w./<-])((?:%s)/[^\s`'\"()\[\],;]*)" % "|".join(map(re.escape, tops)))


def docs_to_check(root):
    out = [p for p in ("README.md", "ARCHITECTURE.md") + STAGE_READMES
           if os.path.isfile(os.path.join(root, p))]
    for base, sub in (("contracts", None), ("docs", None)):
        top = os.path.join(root, base)
        for d, dirs, files in os.walk(top):
            rel = os.path.relpath(d, root)
            if base == "docs" and rel.startswith(("docs/notes", "docs/silicon", "docs/atlas")):
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if base == "contracts" and f != "README.md":
                    continue
                if base == "docs" and not f.endswith(".md"):
                    continue
                out.append(os.path.join(rel, f))
    return out


def repo_basenames(root):
    try:
        files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True,
                               text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, fs in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and x != "build"]
            files += [os.path.relpath(os.path.join(d, f), root) for f in fs]
    # untracked files on disk count too (a doc written before its commit)
    return {os.path.basename(f) for f in files}


def clean(tok):
    tok = tok.strip()
    tok = re.sub(r"[.,;:)]+$", "", tok)          # sentence punctuation
    tok = re.sub(r"#.*$", "", tok)              # anchors
    tok = re.sub(r":\d+(-\d+)?$", "", tok)       # file:line
    return tok


def candidates(text, top_files):
    """(line, token, from_span) for every path-like word of a doc."""
    found = []
    prose = prose_word_re(TOP_FOLDERS)
    tops = TOP_FOLDERS + tuple(top_files)
    for n, line in enumerate(text.split("\n"), 1):
        spans = [m.group(1) for m in BACKTICK.finditer(line)] + \
                [m.group(1) for m in LINK.finditer(line)]
        for s in spans:
            s = s.strip()
            if " " in s or not s:
                continue
            found.append((n, s, True))
        for m in prose.finditer(line):
            found.append((n, m.group(1), False))
    out = []
    seen = set()
    for n, tok, span in found:
        tok = clean(tok)
        if not tok or URL.search(tok) or PLACEHOLDER.search(tok):
            continue
        if tok.startswith("./"):
            tok = tok[2:]
        if any(tok.startswith(p) for p in IGNORED_PREFIXES):
            continue
        first = tok.split("/", 1)[0]
        if "/" in tok:
            if not span and first not in TOP_FOLDERS:
                continue
            if span and first not in tops and not tok.startswith("../") \
                    and not os.path.splitext(tok)[1] in EXTS + (".md", ".png"):
                continue
        else:
            if tok not in top_files and not tok.endswith(EXTS):
                continue
            if not re.match(r"^[\w.+-]+$", tok):
                continue
        if (n, tok) not in seen:
            seen.add((n, tok))
            out.append((n, tok))
    return out


def exists(path):
    """The path, or a file stem naming its sources (backends/cuda/test_gpu_nodev)."""
    if os.path.exists(path):
        return True
    if not os.path.splitext(path)[1]:
        d, stem = os.path.split(path)
        return os.path.isdir(d) and any(f.startswith(stem + ".") for f in os.listdir(d))
    return False


def check(root):
    root = os.path.abspath(root)
    top_files = {f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f))
                 and not f.startswith(".")}
    names = None
    missing = []
    for doc in docs_to_check(root):
        text = open(os.path.join(root, doc), encoding="utf-8").read()
        here = os.path.dirname(os.path.join(root, doc))
        for n, tok in candidates(text, top_files):
            if "/" in tok:
                ok = any(exists(os.path.join(b, tok.rstrip("/"))) for b in (root, here))
            else:
                if names is None:
                    names = repo_basenames(root)
                ok = tok in names or os.path.exists(os.path.join(here, tok))
            if not ok:
                missing.append(f"{doc}:{n}: {tok}")
    return missing


def self_test():
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "src", "run"))
        os.makedirs(os.path.join(t, "docs", "notes"))
        open(os.path.join(t, "src", "run", "journal.c"), "w").close()
        open(os.path.join(t, "ARCHITECTURE.md"), "w").close()
        good = ("# ok\nThe journal is `src/run/journal.c` ([j](src/run/journal.c)),\n"
                "written by journal.c: src/run/journal.c and `journal.c`;\n"
                "the program `src/run/journal` (a stem).\n"
                "Ignored: `build/kcs`, `out.h5`, `contracts/*.yaml`, `contracts/<ID>/`,\n"
                "`results/x/y.csv`, https://example.org/src/nothing.c\n")
        open(os.path.join(t, "README.md"), "w").write(good)
        open(os.path.join(t, "docs", "ok.md"), "w").write(good + "[up](../ARCHITECTURE.md)\n")
        got = check(t)
        if got:
            print("self-test: an existing path raised an alarm:", got)
            return 1
        # a missing path in each form, in a docs page and a contract README
        os.makedirs(os.path.join(t, "contracts", "C-X-01"))
        open(os.path.join(t, "docs", "usage.md"), "w").write(
            "see `src/reduce/reduce.c`\nand [x](analysis/gone.py)\n")
        open(os.path.join(t, "contracts", "C-X-01", "README.md"), "w").write(
            "the kernel in backends/cpu/gone.c\nand `gone_either.c`\n")
        # dated notes are records: not checked
        open(os.path.join(t, "docs", "notes", "2026-01-01-x.md"), "w").write("`src/old.c`\n")
        got = check(t)
        want = ["docs/usage.md:1: src/reduce/reduce.c", "docs/usage.md:2: analysis/gone.py",
                "contracts/C-X-01/README.md:1: backends/cpu/gone.c",
                "contracts/C-X-01/README.md:2: gone_either.c"]
        if sorted(got) != sorted(want):
            print("self-test: wanted", sorted(want), "got", sorted(got))
            return 1
    print("self-test: ok (missing paths caught, existing ones and ignored forms pass)")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    missing = check(argv[1])
    for m in missing:
        print(m)
    if missing:
        print(f"{len(missing)} path(s) named in the docs do not exist", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
