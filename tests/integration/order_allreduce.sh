# kcs probe --order --op allreduce under mpirun (ctest mpi.order_allreduce):
# Open MPI's tuned allreduce forced to recursive doubling and to ring at
# -n 4 and -n 8 recovers two different trees over the ranks, each holding
# every rank once, shaped as Open MPI documents the algorithms
# (ompi_info --param coll tuned --level 9: coll_tuned_allreduce_algorithm
# 3 = recursive doubling, 4 = ring, in Open MPI 4.1):
#   recursive doubling: in step s rank r combines with rank r xor 2^s, so
#     every element is the balanced tree ((0,1),(2,3)) (P a power of two);
#   ring: the message is cut into P segments; each is reduced along the ring,
#     one rank after the other: a chain over the ranks in cyclic order,
#     starting at a different rank in every segment.
# Skipped (77) when the MPI is not Open MPI.
source "$(dirname "$0")/lib.sh"
"$MPIEXEC" --version 2>&1 | grep -qE "Open MPI|OpenRTE" || { echo "not Open MPI: skipped"; exit 77; }
for P in 4 8; do
  for alg in 3 4; do
    "$MPIEXEC" -n $P --allow-run-as-root --oversubscribe \
      --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm $alg \
      "$KCS" probe --order --op allreduce -k 64 --json > "$T/p$P-a$alg.json" 2> "$T/err.txt" ||
      { cat "$T/err.txt"; fail "mpirun -n $P probe --order allreduce, algorithm $alg"; }
  done
  "$PYTHON" - "$T/p$P-a3.json" "$T/p$P-a4.json" $P <<'PY' || fail "allreduce trees at -n $P"
import json, re, sys
rd, ring, P = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
def parse(s):
    pos = 0
    def node():
        nonlocal pos
        if s[pos] == '(':
            pos += 1; kids = [node()]
            while s[pos] == ',':
                pos += 1; kids.append(node())
            assert s[pos] == ')'; pos += 1
            return kids
        m = re.match(r'\d+', s[pos:]); pos += len(m.group()); return int(m.group())
    t = node(); assert pos == len(s); return t
def leaves(t):
    return [t] if isinstance(t, int) else [x for k in t for x in leaves(k)]
def chain(t):  # the order of a sequential tree, or None
    if isinstance(t, int): return [t]
    if len(t) != 2: return None
    a, b = t
    if isinstance(b, int) and not isinstance(a, int): a, b = b, a
    if isinstance(a, int) and isinstance(b, int): return [a, b]
    if not isinstance(a, int): return None
    rest = chain(b)
    return None if rest is None else rest + [a]
def balanced(lo, n):
    return lo if n == 1 else [balanced(lo, n // 2), balanced(lo + n // 2, n // 2)]
for doc in (rd, ring):
    assert doc["ranks"] == P and doc["k"] == 64, doc
    outs = sorted(o for t in doc["trees"] for o in t["outputs"])
    assert outs == list(range(P * 64)), "every (rank, element) output has one tree"
    for t in doc["trees"]:
        assert sorted(leaves(parse(t["tree"]))) == list(range(P)), t["tree"]
# recursive doubling: one tree, the balanced one, on every rank and element
assert len(rd["trees"]) == 1, rd["trees"]
assert parse(rd["trees"][0]["tree"]) == balanced(0, P), rd["trees"][0]["tree"]
# ring: P trees (one per segment), each a chain in cyclic rank order
assert len(ring["trees"]) == P, [t["tree"] for t in ring["trees"]]
starts = set()
for t in ring["trees"]:
    order = chain(parse(t["tree"]))
    assert order is not None, "ring segment not a chain: " + t["tree"]
    # the chain's first two leaves are unordered (a + b): try both readings
    ok = False
    for o in (order, [order[1], order[0]] + order[2:]):
        steps = {(o[i + 1] - o[i]) % P for i in range(P - 1)}
        if len(steps) == 1 and steps <= {1, P - 1}:
            ok = True; starts.add(o[0])
    assert ok, "ring segment not in cyclic order: " + t["tree"]
    els = sorted({o % 64 for o in t["outputs"]})
    assert els == list(range(els[0], els[-1] + 1)), "a segment is a contiguous element range"
assert len(starts) >= P - 1, starts
assert rd["trees"][0]["tree"] not in [t["tree"] for t in ring["trees"]]
print(f"-n {P}: recursive doubling {rd['trees'][0]['tree']}; ring",
      ", ".join(t["tree"] for t in ring["trees"]))
PY
done
echo "order_allreduce: ok"
