#!/usr/bin/env python3
"""The layering rules of kcs, checked from the sources and the objects.

1. Includes: every `#include "x.h"` of a file under src/, backends/ or
   tests/ must name a header its folder may see. The stages and what each
   sees are read from src/CMakeLists.txt (`kcs_stage(NAME DEPS ...)`), so the
   build and this test share one table; a backend folder sees the stages up
   to plan, the backend interface (backends/*.h), its own folder and the
   shared host code it is declared to use (SHARED below); only backends/
   includes a backend's own headers; test plugins see include/ alone.
2. No call cycles between files of the core: from `nm` of every object of
   the core stages, file A depends on file B when A uses a symbol B
   defines; a strongly connected component of more than one file fails.

3. No folder of src/, backends/ or tests/ holds more than MAX_FLAT C sources.

Usage: check_layers.py SOURCE_DIR [BUILD_DIR]   (objects checked when given)
       check_layers.py --self-test                (the checker catches each kind)
Exit 0 when every rule holds; 1 with one line per violation.
"""
import os
import re
import subprocess
import sys

# Backend folders that share another backend folder's headers.
SHARED = {"opencl": ["kernels_host"], "level_zero": ["kernels_host"], "hip": ["cuda"]}
MAX_FLAT = 25
TOPS = ("src", "analysis", "backends")  # the folders of compiled code
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# A stage's folder: src/NAME, or the top-level folder its kcs_stage() line
# names with DIR (analysis/, the offline half).
STAGE_DIR = {}


def read_stages(src):
    text = open(os.path.join(src, "src", "CMakeLists.txt")).read()
    deps = {}
    STAGE_DIR.clear()
    for m in re.finditer(r"^kcs_stage\((\w+)(?:\s+DIR\s+(\S+))?(?:\s+DEPS\s+([\w\s]+))?\)",
                         text, re.M):
        deps[m.group(1)] = (m.group(3) or "").split()
        STAGE_DIR[m.group(1)] = m.group(2) or "src/" + m.group(1)
    if not deps:
        sys.exit("check_layers: no kcs_stage() lines in src/CMakeLists.txt")
    return deps


def sdir(stage):
    return STAGE_DIR.get(stage, "src/" + stage)


def stage_of(folder):
    """The stage whose folder is `folder`, or None."""
    for s, d in STAGE_DIR.items():
        if d == folder:
            return s
    return None


def closure(deps, name, seen=None):
    seen = set() if seen is None else seen
    for d in deps.get(name, []):
        if d not in seen:
            seen.add(d)
            closure(deps, d, seen)
    return seen


def headers_by_folder(src):
    """Map header name -> folder key ('src/lang', 'backends', 'backends/cpu', 'include')."""
    owner, dup = {}, []
    for top in TOPS + ("include",):
        for root, _, files in os.walk(os.path.join(src, top)):
            key = os.path.relpath(root, src)
            for f in files:
                if f.endswith((".h", ".cuh")):
                    if f in owner and owner[f] != key:
                        dup.append(f"{f}: in {owner[f]} and {key}")
                    owner.setdefault(f, key)
    return owner, dup


def allowed_for(folder, stages):
    """Folder keys a file in `folder` may include from (None: anything)."""
    core_upto_plan = {sdir(s) for s in closure(stages, "plan") | {"plan"}}
    parts = folder.split("/")
    own = stage_of(folder)
    if own is not None:
        vis = {sdir(s) for s in closure(stages, own) if s != "backends"}
        if "backends" in closure(stages, own):
            vis.add("backends")
        return vis | {folder, "include"}
    if parts[0] in ("src", "analysis"):
        if folder == "src/cli":  # the command sees every stage and the interface
            return {sdir(s) for s in stages} | {"src/cli", "backends", "include"}
        return set()
    if parts[0] == "backends":
        if len(parts) == 1:
            return core_upto_plan | {"backends", "include"}
        own = parts[1]
        vis = core_upto_plan | {"backends", "include", "backends/" + own}
        vis |= {"backends/" + s for s in SHARED.get(own, [])}
        return vis
    if parts[:2] == ["tests", "plugin"]:
        return {"include"}
    if parts[0] == "tests":
        return {sdir(s) for s in stages} | {"src/cli", "backends", "include"}
    return None


def check_includes(src, stages):
    owner, problems = headers_by_folder(src)
    problems = [f"duplicate header name {d}" for d in problems]
    for top in TOPS + ("tests",):
        for root, _, files in os.walk(os.path.join(src, top)):
            folder = os.path.relpath(root, src)
            vis = allowed_for(folder, stages)
            if vis is None:
                continue
            for f in files:
                if not f.endswith((".c", ".h", ".cu", ".cuh", ".hip")):
                    continue
                path = os.path.join(root, f)
                text = open(path, errors="replace").read()
                for m in INCLUDE_RE.finditer(text):
                    name = os.path.basename(m.group(1))
                    if m.group(1) != name:
                        problems.append(f"{folder}/{f}: include \"{m.group(1)}\" names a folder "
                                        "(include by file name; the build decides what is visible)")
                    where = owner.get(name)
                    if where is None or where == folder:
                        continue  # generated, system-like or local
                    if where not in vis:
                        problems.append(f"{folder}/{f}: includes {name} from {where}, "
                                        f"which {folder} may not see")
    return problems


def object_files(build, stages, src_dir):
    base = os.path.join(build, "src", "CMakeFiles")
    objs = {}
    for s in stages:
        # CMake puts a source outside src/ under __/ (../analysis -> __/analysis)
        rel = os.path.relpath(sdir(s), "src").replace("..", "__")
        d = os.path.join(base, f"kcs_{s}.dir", rel)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            # objects of sources that no longer exist (moved or removed) are stale
            if f.endswith(".c.o") and os.path.exists(os.path.join(src_dir, sdir(s), f[:-2])):
                objs[f"{sdir(s)}/{f[:-2]}"] = os.path.join(d, f)
    return objs


def nm_symbols(path):
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRVWC":
            defined.add(name)
    return defined, used


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def check_cycles(build, stages, src_dir):
    objs = object_files(build, stages, src_dir)
    if not objs:
        return [f"no core objects under {build}/src/CMakeFiles (build first)"]
    defs, uses = {}, {}
    for f, path in objs.items():
        d, u = nm_symbols(path)
        uses[f] = u
        for s in d:
            defs[s] = f
    graph = {f: sorted({defs[s] for s in uses[f] if s in defs and defs[s] != f}) for f in objs}
    problems = []
    for comp in sccs(graph):
        if len(comp) > 1:
            problems.append("call cycle between files: " + " <-> ".join(sorted(comp)))
    # A stage must not call a stage above it either (the objects' view of rule 1).
    for f, targets in graph.items():
        sf = stage_of(os.path.dirname(f))
        vis = closure(stages, sf) | {sf}
        for t in targets:
            st = stage_of(os.path.dirname(t))
            if st not in vis:
                problems.append(f"{f} calls into {t}: stage {sf} may not use stage {st}")
    return problems


def check_flat(src):
    problems = []
    for top in TOPS + ("tests",):
        for root, _, files in os.walk(os.path.join(src, top)):
            n = sum(1 for f in files if f.endswith(".c"))
            if n > MAX_FLAT:
                problems.append(f"{os.path.relpath(root, src)}: {n} C sources flat (at most {MAX_FLAT})")
    return problems


def self_test():
    """Build a small tree with one violation of each kind and expect each found."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        def w(rel, text):
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            open(os.path.join(t, rel), "w").write(text)
        w("src/CMakeLists.txt", "kcs_stage(base)\nkcs_stage(lang DEPS base)\nkcs_stage(plan DEPS lang)\n"
          "kcs_stage(analysis DIR analysis DEPS plan)\n")
        w("analysis/a.c", '#include "cpu.h"\n')            # the offline half never sees a backend
        w("src/lang/up.h", '#include "a.h"\n')              # nor does a lower stage see it
        w("analysis/a.h", "")
        w("src/base/low.h", '#include "high.h"\n')          # upward
        w("src/lang/high.h", '#include "low.h"\n')          # fine
        w("backends/backend.h", "")
        w("backends/cpu/cpu.h", "")
        w("src/plan/p.c", '#include "cpu.h"\n')            # a backend's own header
        w("backends/opencl/o.c", '#include "cpu.h"\n')     # another backend's header
        w("tests/plugin/x.c", '#include "low.h"\n')        # plugins see include/ only
        for i in range(MAX_FLAT + 1):
            w(f"src/lang/f{i}.c", "")
        stages = read_stages(t)
        got = check_includes(t, stages) + check_flat(t)
        want = ["src/base/low.h: includes high.h", "src/plan/p.c: includes cpu.h",
                "backends/opencl/o.c: includes cpu.h", "tests/plugin/x.c: includes low.h",
                "analysis/a.c: includes cpu.h", "src/lang/up.h: includes a.h",
                "src/lang: 26 C sources flat"]
        missing = [x for x in want if not any(g.startswith(x) for g in got)]
        extra = [g for g in got if not any(g.startswith(x) for x in want)]
    cyc = [c for c in sccs({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) if len(c) > 1]
    ok = not missing and not extra and len(cyc) == 1 and sorted(cyc[0]) == ["a", "b", "c"]
    for x in missing:
        print("self-test: not caught:", x)
    for x in extra:
        print("self-test: false alarm:", x)
    print(f"check_layers self-test: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    if argv[1] == "--self-test":
        return self_test()
    src = argv[1]
    stages = read_stages(src)
    stages_real = {s: [d for d in v] for s, v in stages.items()}
    problems = check_includes(src, stages_real) + check_flat(src)
    n_obj = 0
    if len(argv) > 2:
        problems += check_cycles(argv[2], stages_real, src)
        n_obj = len(object_files(argv[2], stages_real, src))
    for p in problems:
        print("layering:", p)
    print(f"check_layers: {len(stages_real)} stages, {n_obj} core objects, "
          f"{len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
