#!/usr/bin/env bash
# kcs exec for every op of src/arith/op.h on the cpu backend: inputs from raw
# float64 files, outputs checked against a Python fp64 reference within the
# first-order bounds of tests/unit/backends/test_ops.c (u = 2^-24, fp32 in, fp32
# accumulator, fp32 out; gamma_n = n u / (1 - n u)); gather's policies,
# exit statuses and the integer check of its index file.
source "$(dirname "$0")/lib.sh"
"$PYTHON" - "$KCS" "$T" <<'PY'
import math, os, random, struct, subprocess, sys

KCS, T = sys.argv[1], sys.argv[2]
u = 2.0 ** -24
random.seed(7)
def gam(n, uu=u): return n * uu / (1 - n * uu)
def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def rnd(n, mean=0.0, sd=1.0): return [f32(random.gauss(mean, sd)) for _ in range(n)]
def write(name, v):
    p = os.path.join(T, name)
    with open(p, 'wb') as f: f.write(struct.pack('<%dd' % len(v), *v))
    return p
def read(p):
    d = open(p, 'rb').read()
    return list(struct.unpack('<%dd' % (len(d) // 8), d))
n_out = [0]
def kcs(op, *args, expect=0, pattern=None):
    n_out[0] += 1
    out = os.path.join(T, 'out%d.f64' % n_out[0])
    r = subprocess.run([KCS, 'exec', op, *map(str, args), '--out', out], capture_output=True, text=True)
    assert r.returncode == expect, (op, args, r.returncode, r.stderr)
    if pattern:
        assert pattern in r.stderr, (op, r.stderr)
    if expect:
        assert not os.path.exists(out), 'output written although exec failed'
        return None
    return read(out)
def within(y, ref, absref, f, what):
    assert len(y) == len(ref), (what, len(y), len(ref))
    for i, (a, b, m) in enumerate(zip(y, ref, absref)):
        assert abs(a - b) <= f * m, (what, i, a, b, abs(a - b), f * m)

M, K, N = 4, 64, 6
X = rnd(M * K, 0.5); fx = write('X.f64', X)
G = rnd(K, 1.0, 0.5); fg = write('G.f64', G)
B = rnd(K, 0.0, 0.5); fb = write('B.f64', B)
Y = rnd(K); fy = write('Y.f64', Y)
X0 = X[:K]; fx0 = write('X0.f64', X0)
rows = [X[i * K:(i + 1) * K] for i in range(M)]

for v in ('native', 'own'):
    # reduce_sum, dot: |err| <= gamma_k sum|x| + u |y|
    y = kcs('reduce_sum', '-m', M, '-k', K, '--a', fx, '--variant', v)
    within(y, [math.fsum(r) for r in rows], [sum(map(abs, r)) for r in rows], gam(K) + 2 * u, 'reduce_sum')
    y = kcs('dot', '-k', K, '--a', fx0, '--b', fy, '--variant', v)
    within(y, [math.fsum(a * b for a, b in zip(X0, Y))], [sum(abs(a * b) for a, b in zip(X0, Y))], gam(K) + 2 * u, 'dot')
    # softmax: relative (|d_j| + D + 5) u + gamma_k, rows sum to 1
    y = kcs('softmax', '-m', M, '-k', K, '--a', fx, '--variant', v, '--schedule', 'pairwise')
    for i, r in enumerate(rows):
        mx = max(r); e = [math.exp(t - mx) for t in r]; s = math.fsum(e); D = max(mx - t for t in r)
        yi = y[i * K:(i + 1) * K]
        for j in range(K):
            assert abs(yi[j] - e[j] / s) <= 1.01 * ((mx - r[j] + D + 6) * u + gam(K)) * e[j] / s, ('softmax', i, j)
        assert abs(math.fsum(yi) - 1) <= (1 + u) ** 2 / (1 - gam(K)) - 1 + 1e-15
    # layernorm / rmsnorm (absref as src/judge/oracle_ops.c; factor gamma_{k+1} + 9u)
    for op in ('layernorm', 'rmsnorm'):
        extra = ['--b', fg] + (['--c', fb] if op == 'layernorm' else [])
        y = kcs(op, '-m', M, '-k', K, '--a', fx, '--variant', v, *extra)
        ref, ab = [], []
        for r in rows:
            mu = 0.0 if op == 'rmsnorm' else math.fsum(r) / K
            ms = math.fsum(t * t for t in r) / K; mabs = math.fsum(map(abs, r)) / K
            var = ms if op == 'rmsnorm' else math.fsum((t - mu) ** 2 for t in r) / K
            sg = math.sqrt(var + 1e-5)
            for j, t in enumerate(r):
                xh = (t - mu) / sg; bb = B[j] if op == 'layernorm' else 0.0
                ref.append(xh * G[j] + bb)
                ab.append(abs(G[j]) * abs(t) * (1 + ms / sg ** 2) / sg if op == 'rmsnorm'
                          else abs(G[j]) * ((abs(t) + mabs) + abs(xh) * math.sqrt(ms)) / sg + abs(bb))
        within(y, ref, ab, 1.01 * (gam(K + 1) + 9 * u), op)
    # allreduce on one process: y = x
    y = kcs('allreduce', '-k', K, '--a', fy, '--variant', v)
    assert y == Y

# attention: batch 2, m 3, n 5, k 8 (bound_unfused of test_ops.c, looser for fused)
Bt, m, n, k = 2, 3, 5, 8
Q, Kk, V = rnd(Bt * m * k), rnd(Bt * n * k), rnd(Bt * n * k)
fq, fk, fv = write('Q.f64', Q), write('K.f64', Kk), write('V.f64', V)
ref, ab, E = [], [], 0.0
for b in range(Bt):
    for i in range(m):
        q = Q[(b * m + i) * k:(b * m + i + 1) * k]
        s = [math.fsum(q[t] * Kk[(b * n + j) * k + t] for t in range(k)) / math.sqrt(k) for j in range(n)]
        A = [math.fsum(abs(q[t] * Kk[(b * n + j) * k + t]) for t in range(k)) / math.sqrt(k) for j in range(n)]
        E = max(E, max(map(abs, s)))
        mx = max(s); e = [math.exp(t - mx) for t in s]; se = math.fsum(e); P = [t / se for t in e]
        for c in range(k):
            vc = [V[(b * n + j) * k + c] for j in range(n)]
            o = math.fsum(P[j] * vc[j] for j in range(n))
            ref.append(o)
            ab.append(math.fsum(P[j] * (abs(vc[j]) + A[j] * abs(vc[j] - o)) for j in range(n)))
eS = gam(k + 1) + 2 * u; D = 2 * E * (1 + eS)
bu = 1.05 * (eS + (2 * D + 5) * u + gam(n) + gam(n + 1) + u)
nb = 1; rho = gam(n + 2 * nb) + (4 * E + 2 + 2 * nb) * u
bf = 1.05 * (eS + 2 * rho + 2 * u)
for v, f in (('native', bu), ('own', bu), ('fused', bf)):
    y = kcs('attention', '--batch', Bt, '-m', m, '-n', n, '-k', k, '--a', fq, '--b', fk, '--c', fv, '--variant', v)
    within(y, ref, ab, f, 'attention ' + v)

# gather: table 4 x 3, indices as float64 integers of any magnitude
Tb = [f32(1.5 * i - 4) for i in range(12)]; ft = write('T.f64', Tb)
def rowof(i, pol):
    if 0 <= i < 4: return Tb[int(i) * 3:int(i) * 3 + 3]
    if pol == 'zero': return [0.0] * 3
    r = 0 if i < 0 else 3
    return Tb[r * 3:r * 3 + 3]
idx = [2, 0, 3, -1, 1e300, 4]; fi = write('I.f64', idx)
for v in ('native', 'own'):
    for pol in ('clamp', 'zero'):
        y = kcs('gather', '-m', 4, '-k', 3, '-n', len(idx), '--a', ft, '--b', fi, '--attrs', 'oob=' + pol, '--variant', v)
        assert y == sum((rowof(i, pol) for i in idx), []), (pol, y)
    kcs('gather', '-m', 4, '-k', 3, '-n', len(idx), '--a', ft, '--b', fi, '--variant', v,
        expect=1, pattern='index -1 at position 3 is out of range')
fbad = write('Ibad.f64', [1, 2.5])
kcs('gather', '-m', 4, '-k', 3, '-n', 2, '--a', ft, '--b', fbad, '--attrs', 'oob=clamp',
    expect=2, pattern='element 1 (2.5) is not an integer index')
kcs('gather', '-m', 4, '-k', 3, '-n', 2, '--a', ft, '--b', write('I2.f64', [1, 9]), '--attrs', 'oob',
    expect=2, pattern='malformed')
# an fp32 input that is not exact is refused with its index
fn = write('nonexact.f64', [0.1] * K)
kcs('reduce_sum', '-m', 1, '-k', K, '--a', fn, expect=2, pattern='element 0')
print('exec ops: ok (%d runs)' % n_out[0])
PY
