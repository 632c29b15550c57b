/* kcs probe: infer a GEMM path's arithmetic from feature-targeted vectors
 * (probe.h). Every call is a 1×k by k×1 gemm through ops->run with C given:
 * d = c + sum_i a_i*b_i. Terms are built from powers of two B = 2^base
 * (base = eB or eB - 2, near the top of the format's product range) and
 * small terms t = 2^(base - r), "r = offset below B". The model
 * (shared/PROFILES.md) truncates every term of a step to a multiple of
 * q = 2^(E - 23 - neab), E the largest exponent, so a term at offset r
 * survives alignment iff r <= 23 + neab; d is rounded to P = 24 + min(neab, 0)
 * bits. Each stage below derives its vectors from those definitions. */
#include "probe.h"
#include "probe_gemm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

#define KMAX KCS_PROBE_KMAX
#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

typedef struct probe {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    kcs_format in;
    int emin, emax, pin;
    int wlo, whi; /* 2^e = a*b with a, b normal powers of two: wlo <= e <= whi */
    int eB;       /* base exponent of the big terms */
    int P;        /* significand bits of d (stage_acc) */
    bool floor_c, zero_c; /* a lost negative c went to -q (late c) / to 0 */
    int inner;    /* 1 one rounding per block, 2 pairwise tree, 3 sequential, 0 unknown,
                     -1 not testable (F not known) */
    kcs_probe_result *r;
    kcs_error *err;
    kcs_tensor out;
    int tile;            /* the gemm is tile × tile × k (1: 1 × 1 × k) */
    double *tA, *tB, *tC; /* tile > 1: A, B, C of that gemm */
    double a[KMAX + 1], b[KMAX + 1], v[KMAX + 1];
} probe;

static void note(kcs_probe_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(kcs_probe_result *r, const char *fmt, ...)
{
    size_t n = strlen(r->notes);
    if (n + 4 >= sizeof r->notes)
        return;
    if (n) {
        memcpy(r->notes + n, "; ", 3);
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes + n, sizeof r->notes - n, fmt, ap);
    va_end(ap);
}

static double p2(int e) { return ldexp(1.0, e); }

/* v = a*b with a, b exact and normal in the input format, b a power of two. */
static bool factor(const probe *p, double v, double *a_p, double *b_p)
{
    if (v == 0.0) {
        *a_p = 0.0;
        *b_p = 1.0;
        return true;
    }
    int e = ilogb(v), mid = e >= 0 ? e / 2 : -((1 - e) / 2);
    for (int d = 0; d <= p->emax - p->emin; d++) {
        for (int sg = 0; sg < 2; sg++) {
            int eb = sg ? mid - d : mid + d;
            if (eb < p->emin || eb > p->emax)
                continue;
            double a = v / p2(eb);
            if (fabs(a) >= p2(p->emin) && kcs_format_exact(p->in, a)) {
                *a_p = a;
                *b_p = p2(eb);
                return true;
            }
        }
    }
    return false;
}

static bool reach(const probe *p, double v)
{
    double a, b;
    return factor(p, v, &a, &b);
}

/* The only contact with the backend (probe_gemm.h). */
static int gemm1(probe *p, double c, const double *a, const double *b, int k, double *d_p)
{
    const kcs_probe_gemm g = {.ops = p->ops, .ctx = p->ctx, .in = p->in, .tile = p->tile,
                              .tA = p->tA, .tB = p->tB, .tC = p->tC, .out = &p->out,
                              .err = p->err, .who = "probe"};
    p->r->calls++;
    return kcs_probe_gemm_run(&g, c, a, b, k, d_p);
}

/* d for c + sum v[i] (each v[i] a product, factored into the input format). */
static int dotv(probe *p, double c, const double *v, int k, double *d_p)
{
    for (int i = 0; i < k; i++)
        if (!factor(p, v[i], &p->a[i], &p->b[i]))
            return kcs_fail(p->err, KCS_E_INTERNAL, "probe: %.17g is no product in %s", v[i],
                            kcs_format_name(p->in));
    return gemm1(p, c, p->a, p->b, k, d_p);
}

static int dot1(probe *p, double c, double v, double *d_p) { return dotv(p, c, &v, 1, d_p); }

/* ---- A: sanity. Sums whose every term and partial sum fits in 4 bits are
 * exact in every architecture of the model and in any correct gemm. */
static int stage_sanity(probe *p)
{
    static const struct { double c, v[3]; int k; double d; } t[] = {
        {0, {1}, 1, 1}, {1, {1}, 1, 2}, {0.5, {0.25, 0.25}, 2, 1},
        {-1, {0.5, -0.5, 2}, 3, 1}, {0, {-1, -2, 0.5}, 3, -2.5},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double d;
        TRY(dotv(p, t[i].c, t[i].v, t[i].k, &d));
        if (d != t[i].d)
            return kcs_fail(p->err, KCS_E_DEVICE, "probe: %s gemm returns %.9g for the exact sum "
                            "%.9g (vector %zu): nothing can be inferred", p->ops->name, d,
                            t[i].d, i);
    }
    return 0;
}

/* ---- B: significand bits of d. c = B, one product t = B*2^-j (or c = t,
 * product B): E = base, q = 2^(base-23-neab); t survives iff j <= 23+neab,
 * and B + t is representable in P bits iff j <= P - 1. With P = 24+min(neab,0)
 * both say d == B + t exactly for j <= P - 1 and d != B + t beyond (up to 23).
 * Late c and pairwise add two exact fp32 terms: the same for P = 24. */
static int stage_acc(probe *p)
{
    int J = -1, mono = 1, agree = 1;
    for (int base = p->eB; base >= p->eB - 2; base -= 2)
        for (int s = 1; s >= -1; s -= 2)
            for (int form = 0; form < 2; form++) {
                int last = 0, lost = 0;
                if (!reach(p, s * p2(base - 23))) /* the whole series or nothing */
                    continue;
                for (int j = 1; j <= 23; j++) {
                    double B = s * p2(base), t = s * p2(base - j), d;
                    TRY(dot1(p, form ? t : B, form ? B : t, &d));
                    if (d == B + t) {
                        mono &= !lost;
                        last = j;
                    } else {
                        lost = 1;
                    }
                }
                agree &= J < 0 || J == last;
                J = J < 0 || last < J ? last : J;
            }
    if (J < 0) {
        p->r->acc_bits = (kcs_probe_value){KCS_PROBE_NA, 0, 0};
        return note(p->r, "precision of d: no vector reachable (assuming 24 bits)"), 0;
    }
    p->P = J + 1;
    p->r->acc_bits = (kcs_probe_value){agree && mono ? KCS_PROBE_EXACT : KCS_PROBE_INCONSISTENT,
                                       J + 1, J + 1};
    if (!(agree && mono))
        note(p->r, "precision of d: vectors disagree (using %d bits)", p->P);
    return 0;
}

/* ---- Rounding: S exact, d observed; keep the modes that predict d. */
static double round_rna(double S, int P)
{
    double z = kcs_round_bits(S, P, KCS_RZ), w = kcs_round_bits(S, P, S > 0 ? KCS_RU : KCS_RD);
    return fabs(S - z) == fabs(w - S) ? w : kcs_round_bits(S, P, KCS_RNE);
}

static int round_vec(probe *p, double c, double v, int *n)
{
    double d, S = c + v; /* exact in double */
    TRY(dot1(p, c, v, &d));
    static const kcs_rounding m[4] = {KCS_RNE, KCS_RZ, KCS_RD, KCS_RU};
    for (int i = 0; i < 4; i++)
        if (kcs_round_bits(S, p->P, m[i]) != d)
            p->r->round_modes &= ~(1u << i);
    if (round_rna(S, p->P) != d)
        p->r->round_modes &= ~KCS_PROBE_RM_RNA;
    (*n)++;
    return 0;
}

/* Ties by carry: c = 2B - u (all P bits set, u = 2^(base-P+1) the ulp at B)
 * plus one product m*u lands S = 2B + (m-1)u in [2B, 4B), spacing 2u: an
 * exact midpoint whose even neighbour is above (m = 4, 8) or below (m = 6).
 * Every term is a multiple of u >= q (P = 24 + min(neab, 0)), so nothing is
 * truncated: valid for every neab. Both signs separate rz, rd, ru; the
 * even-below tie separates rne from ties-away. */
static int stage_round_ties(probe *p)
{
    int n = 0;
    p->r->round_modes = 0x1f;
    for (int base = p->eB; base >= p->eB - 2; base -= 2)
        for (int s = 1; s >= -1; s -= 2)
            for (int m = 4; m <= 8; m += 2) {
                double u = p2(base - p->P + 1), v = s * m * u;
                if (reach(p, v))
                    TRY(round_vec(p, s * (p2(base + 1) - u), v, &n));
            }
    if (n == 0)
        note(p->r, "rounding: no tie vector reachable");
    return 0;
}

/* Off-midpoint sums (run once neab is known): need the bits below the ulp
 * to survive alignment: 0.25/0.75 ulp sits at offset P+1, the carry
 * vectors' u/2 at offset P; kept iff offset <= 23 + neab (global, late c);
 * pairwise and c-last add exact fp32 terms, then round once. */
static int stage_round_offmid(probe *p, int maxoff)
{
    int n = 0;
    for (int base = p->eB; base >= p->eB - 2; base -= 2)
        for (int s = 1; s >= -1; s -= 2) {
            double B = s * p2(base), ulp = s * p2(base - p->P + 1);
            double cs[2] = {B, B + ulp}, vs[2] = {0.25 * ulp, 0.75 * ulp};
            if (p->P + 1 <= maxoff)
                for (int i = 0; i < 4; i++)
                    if (reach(p, vs[i & 1]) && reach(p, -vs[i & 1])) {
                        TRY(round_vec(p, cs[i >> 1], vs[i & 1], &n));
                        TRY(round_vec(p, cs[i >> 1], -vs[i & 1], &n));
                    }
            if (p->P <= maxoff)
                for (int i = 0; i < 2; i++)
                    if (reach(p, (1.5 + i) * ulp))
                        TRY(round_vec(p, 2 * B - ulp, (1.5 + i) * ulp, &n));
        }
    return 0;
}

static void finish_rounding(kcs_probe_result *r)
{
    static const kcs_rounding m[4] = {KCS_RNE, KCS_RZ, KCS_RD, KCS_RU};
    r->rounding_st = KCS_PROBE_INCONSISTENT;
    for (int i = 0; i < 4; i++)
        if (r->round_modes == (1u << i)) {
            r->rounding = m[i];
            r->rounding_st = KCS_PROBE_EXACT;
        }
    if (r->round_modes == KCS_PROBE_RM_RNA)
        note(r, "rounding: nearest with ties away from zero (not a model mode)");
    else if (r->rounding_st != KCS_PROBE_EXACT)
        note(r, "rounding: modes consistent with every vector: mask 0x%x", r->round_modes);
}

/* ---- Block size. Four series over k (zeros elsewhere), t_A = 2^wlo (offset
 * base - wlo >= 25 below B: also lost in any fp32 addition to B), t_B =
 * 2^(base - P) (half an ulp of B: B + t_B rounds to B under rne and rz):
 *   FA  c = 0,   [B, -B, 0.., t_A@k]   k <= F: t_A if it survives, else 0; k > F: t_A
 *   FB  c = 0,   [B, t_B, 0.., -B@k]   k <= F: t_B if it survives, else 0; k > F: 0
 *   FC  c = -B,  [B, 0.., t_A@k]       as FA, c in the first block
 *   FD  c = t_B, [B, 0.., -B@k]        k <= F: t_B if c survives, else 0; k > F: 0
 *                                      (late c floors a lost -t_B: -q throughout)
 * (k > F: the later block holds only t_A alone, or -B against c = d1 = B.)
 * So a series is X for k <= F and Y after; the F that explain every series
 * are kept, with the coupling "t_A survives => t_B survives" (t_A lies
 * further below B). FA/FB see where products stop being summed exactly,
 * FC/FD where c rejoins: the same F for global and late c; pairwise rounds
 * inside the block (FA/FB say F <= 2), c-last never rejoins. */
enum { FA, FB, FC, FD };

static double pattern(const probe *p, int pat, int k, double s, int base, double *c, double *v,
                      double *t_p)
{
    double B = s * p2(base), tA = s * p2(p->wlo), tB = s * p2(base - p->P);
    memset(v, 0, (size_t)k * sizeof *v);
    v[0] = B;
    switch (pat) {
    case FA: *c = 0; v[1] = -B; v[k - 1] = tA; *t_p = tA; return tA;
    case FB: *c = 0; v[1] = tB; v[k - 1] = -B; *t_p = tB; return 0;
    case FC: *c = -B; v[k - 1] = tA; *t_p = tA; return tA;
    default: *c = tB; v[k - 1] = -B; *t_p = tB; return 0;
    }
}

/* fz[F]: 0 infeasible, 1 feasible (X unseen), 2 feasible with X lost, 3 with X == t.
 * FD (any_x): late c floors a lost negative c to X = -q; past the boundary
 * d1 = B + RD(c) = -(|B| + q) meets -B and leaves -q again: constant. */
static void feasible(const double *o, int ks, double Y, double t, bool any_x, signed char *fz)
{
    bool cst = true;
    for (int k = ks; k <= KMAX; k++)
        cst &= o[k] == o[ks];
    if (any_x && cst && o[ks] != 0 && o[ks] != t)
        Y = o[ks];
    for (int F = 1; F <= KMAX; F++) {
        bool ok = true;
        for (int k = ks; k <= KMAX && ok; k++)
            ok = k <= F ? o[k] == o[ks] : o[k] == Y;
        if (ok && ks <= F && !any_x && o[ks] != 0 && o[ks] != t)
            ok = false;
        fz[F] = !ok ? 0 : ks > F ? 1 : o[ks] == t ? 3 : 2;
    }
}

static void range_of(const bool *S, kcs_probe_value *v)
{
    v->lo = v->hi = 0;
    for (int F = KMAX; F >= 1; F--)
        if (S[F])
            v->lo = F, v->hi = v->hi ? v->hi : F;
    v->st = !v->lo ? KCS_PROBE_INCONSISTENT : v->lo == v->hi ? KCS_PROBE_EXACT : KCS_PROBE_RANGE;
    if (v->hi == KMAX) /* no boundary within reach */
        v->hi = KCS_PROBE_INF, v->st = KCS_PROBE_RANGE;
}

/* Wide products (inputs of >= 13 bits, e.g. fp32): p_w = (1+2^-(p-1))^2 has
 * 2p-1 bits, p_h = -(1+2^-(p-2)) its top; p_w + p_h = 2^-(2p-2). Summed in
 * one rounding, both orders agree; an fma chain from 0 rounds p_w alone
 * first (losing 2^-(2p-2)) but adds p_w exactly to p_h: [p_w, p_h] gives 0
 * and [p_h, p_w] gives 2^-(2p-2): one product per rounding, no truncation
 * of the 2p-bit product (neab >= 2p - 2 - 23). Returns 1 (F = 1), 2 (order
 * invariant: F >= 2), 0 (neither). */
static int wide_order(probe *p, int *lo_neab)
{
    double x = 1 + p2(1 - p->pin), h = 1 + p2(2 - p->pin), ex = p2(2 - 2 * p->pin);
    int f1 = 1, f2 = 1;
    for (int s = 1; s >= -1; s -= 2) {
        double a1[2] = {s * x, -s * h}, b1[2] = {x, 1}, a2[2] = {-s * h, s * x}, b2[2] = {1, x};
        double d1, d2;
        if (gemm1(p, 0, a1, b1, 2, &d1) || gemm1(p, 0, a2, b2, 2, &d2))
            return -1;
        f1 &= d1 == 0 && d2 == s * ex;
        f2 &= d1 == d2;
    }
    *lo_neab = 2 * p->pin - 2 - 23;
    return f1 ? 1 : f2 ? 2 : 0;
}

static int stage_block(probe *p)
{
    static const int ks[4] = {3, 3, 2, 2};
    bool Sp[KMAX + 1], Sc[KMAX + 1];
    double o[4][KMAX + 1];
    signed char fz[4][KMAX + 1];
    double t[4], Y[4], c;
    for (int F = 1; F <= KMAX; F++)
        Sp[F] = Sc[F] = true;
    for (int base = p->eB; base >= p->eB - 2; base -= 2)
        for (int s = 1; s >= -1; s -= 2) {
            for (int pat = 0; pat < 4; pat++) {
                for (int k = ks[pat]; k <= KMAX; k++) {
                    Y[pat] = pattern(p, pat, k, s, base, &c, p->v, &t[pat]);
                    TRY(dotv(p, c, p->v, k, &o[pat][k]));
                }
                feasible(o[pat], ks[pat], Y[pat], t[pat], pat == FD, fz[pat]);
            }
            for (int F = 1; F <= KMAX; F++) {
                Sp[F] &= fz[FA][F] && fz[FB][F] && !(fz[FA][F] == 3 && fz[FB][F] == 2);
                Sc[F] &= fz[FC][F] && fz[FD][F] && !(fz[FC][F] == 3 && fz[FD][F] == 2);
            }
        }
    kcs_probe_value vp, vc;
    range_of(Sp, &vp);
    range_of(Sc, &vc);
    kcs_probe_result *r = p->r;
    if (vp.st == KCS_PROBE_INCONSISTENT || vc.st == KCS_PROBE_INCONSISTENT) {
        r->F = (kcs_probe_value){KCS_PROBE_INCONSISTENT, 0, 0};
        note(r, "block size: no F explains the %s series", vp.lo ? "c" : "product-only");
        return 0;
    }
    if (vc.lo == KMAX && vp.hi < KMAX) { /* c never rejoins; products round early */
        r->step = KCS_PROBE_STEP_C_LAST;
        r->F = vp;
        note(r, "c is added after the product sum has been rounded (c-last)");
    } else {
        r->F = vc;
        if (vc.st == KCS_PROBE_EXACT && !Sp[vc.lo])
            note(r, "products are rounded inside each block of %d", vc.lo);
    }
    if (r->F.lo == 1 && r->F.hi == 2 && p->pin >= 13) {
        int lo, w = wide_order(p, &lo);
        if (w < 0)
            return p->err->code;
        if (w)
            r->F = (kcs_probe_value){KCS_PROBE_EXACT, w, w};
        if (w == 1 && r->step == KCS_PROBE_STEP_C_LAST)
            r->neab = (kcs_probe_value){KCS_PROBE_RANGE, lo, KCS_PROBE_INF};
        if (w == 1)
            note(r, "products enter one at a time, each exactly (fma chain)");
    }
    return 0;
}

/* ---- Inner order (F >= 3): {B, -B, t} (t = 2^(base-P-1): lost in any fp32
 * add to B, both directions) placed in every order within the first block,
 * c = 0. One rounding per block (global, late c) is order invariant; the
 * pairwise tree (fp32 rne adds, halves of (n+1)/2) and a sequential fp32
 * chain are predicted by computing them in float. */
static float tree(const double *v, int n)
{
    if (n == 1)
        return (float)v[0];
    int h = (n + 1) / 2;
    float l = tree(v, h), r = tree(v + h, n - h);
    return l + r;
}

static int stage_inner(probe *p)
{
    int F = p->r->F.lo, m = F < 8 ? F : 8;
    int ok[4] = {0, 1, p->P == 24 && p->r->F.hi == F, p->P == 24}; /* single, tree, chain */
    for (int s = 1; s >= -1; s -= 2) {
        double first = NAN;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                for (int l = 0; l < m; l++) {
                    if (i == j || j == l || i == l)
                        continue;
                    double d, B = s * p2(p->eB);
                    memset(p->v, 0, sizeof p->v);
                    p->v[i] = B, p->v[j] = -B, p->v[l] = s * p2(p->eB - p->P - 1);
                    TRY(dotv(p, 0, p->v, m, &d));
                    first = isnan(first) ? d : first;
                    ok[1] &= d == first;
                    ok[2] &= d == (double)tree(p->v, F);
                    float acc = 0;
                    for (int q = 0; q < m; q++)
                        acc = acc + (float)p->v[q];
                    ok[3] &= d == (double)acc;
                }
    }
    p->inner = ok[1] ? 1 : ok[2] ? 2 : ok[3] ? 3 : 0;
    if (p->inner == 3)
        note(p->r, "inside a block products are added one by one in fp32");
    if (p->inner == 0)
        note(p->r, "inside a block the order matters, but neither as a pairwise tree nor "
                   "as a sequential fp32 chain");
    return 0;
}

/* ---- neab (one rounding per block, F >= 2). Each series scans the offset
 * r of one small term; it survives iff r <= 23 + neab (truncation toward
 * zero), so the first lost r gives neab = r - 24:
 *   CZ  c = +-2^(base-r), [B, -B]     (c in the alignment; r down to 2^-126)
 *   NP  c = 0, [B, -B, +-t_r]          (F >= 3)
 *   NC  c = -B, [B, +-t_r]
 * Late c rounds a lost negative c toward -inf, to -q = -2^(base-23-neab)
 * (the products dominate, E_p > e_c); global alignment truncates it to 0. */
static int scan_neab(probe *p, int kind, int base, double s, int *lo, int *hi)
{
    int rmax = kind == 0 ? base + 126 : base - p->wlo, r0 = 0;
    for (int r = 1; r <= rmax && (!r0 || r < r0 + 8); r++) {
        double B = p2(base), t = s * p2(base - r), d, c = kind == 0 ? t : kind == 1 ? 0 : -B;
        double v[3] = {B, kind == 2 ? t : -B, t};
        TRY(dotv(p, c, v, kind == 1 ? 3 : 2, &d));
        if (d == t) {
            if (r0)
                return note(p->r, "neab: offset %d survives after %d was lost", r, r0), 1;
            continue;
        }
        r0 = r0 ? r0 : r;
        if (kind == 0 && s < 0 && d == -p2(base + 1 - r0))
            p->floor_c = true;
        else if (d == 0)
            p->zero_c |= kind == 0 && s < 0;
        else
            return note(p->r, "neab: lost term gives %.9g (series %d)", d, kind), 1;
    }
    *lo = r0 ? r0 - 24 : rmax - 23;
    *hi = r0 ? r0 - 24 : KCS_PROBE_INF;
    return 0;
}

/* neab range lo..hi of some series as a width in fraction bits (23 + neab),
 * with its status; bad: a series of this group disagreed with itself. */
static kcs_probe_value width_of(int lo, int hi, bool bad, bool open_inf)
{
    if (bad || lo > hi || lo == INT_MIN)
        return (kcs_probe_value){KCS_PROBE_INCONSISTENT, 0, 0};
    if (hi == KCS_PROBE_INF && open_inf)
        return (kcs_probe_value){KCS_PROBE_EXACT, KCS_PROBE_INF, KCS_PROBE_INF};
    int wl = lo + 23, wh = hi == KCS_PROBE_INF ? KCS_PROBE_INF : hi + 23;
    return (kcs_probe_value){wl == wh ? KCS_PROBE_EXACT : KCS_PROBE_RANGE, wl, wh};
}

static int stage_neab(probe *p)
{
    int lo = INT_MIN, hi = KCS_PROBE_INF, bad = 0, cz_open = 0;
    /* per group: [0] c (series CZ), [1] products (NP, NC) */
    int glo[2] = {INT_MIN, INT_MIN}, ghi[2] = {KCS_PROBE_INF, KCS_PROBE_INF};
    bool gbad[2] = {false, false}, gopen[2] = {false, false};
    for (int base = p->eB; base >= p->eB - 2; base -= 2)
        for (int s = 1; s >= -1; s -= 2)
            for (int kind = 0; kind < 3; kind++) {
                int l, h, g = kind != 0;
                if (kind == 1 && p->r->F.lo < 3)
                    continue;
                int rc = scan_neab(p, kind, base, s, &l, &h);
                if (rc < 0)
                    return rc;
                bad |= rc;
                gbad[g] |= rc != 0;
                if (!rc) {
                    lo = l > lo ? l : lo;
                    hi = h < hi ? h : hi;
                    cz_open |= kind == 0 && h == KCS_PROBE_INF;
                    glo[g] = l > glo[g] ? l : glo[g];
                    ghi[g] = h < ghi[g] ? h : ghi[g];
                    gopen[g] |= h == KCS_PROBE_INF && kind == 0;
                }
            }
    p->r->c_bits = width_of(glo[0], ghi[0], gbad[0], gopen[0]);
    /* a product survives at every offset the inputs reach: unbounded when c
     * (reaching down to 2^-126) is too */
    p->r->align_bits = width_of(glo[1], ghi[1], gbad[1], gopen[0] && ghi[1] == KCS_PROBE_INF);
    kcs_probe_value *n = &p->r->neab;
    *n = (kcs_probe_value){KCS_PROBE_EXACT, lo, hi};
    if (bad || lo > hi)
        n->st = KCS_PROBE_INCONSISTENT;
    else if (hi == KCS_PROBE_INF && cz_open) /* c survived down to 2^-126 */
        n->lo = KCS_PROBE_INF;
    else if (lo != hi)
        n->st = KCS_PROBE_RANGE;
    if (n->st == KCS_PROBE_INCONSISTENT && lo > hi)
        note(p->r, "neab: series disagree (%d > %d)", lo, hi);
    if (n->st == KCS_PROBE_EXACT && p->P != 24 + (n->lo < 0 ? n->lo : 0))
        note(p->r, "precision of d (%d bits) does not follow neab = %d", p->P, n->lo);
    return 0;
}

/* F = 1 with c first (an fma chain from c): c = -(1+2^-(p-2)), one product
 * (1+2^-(p-1))^2 leaves 2^-(2p-2) iff nothing of the 2p-bit product is cut
 * (neab >= 2p-2-23); inputs of < 13 bits give products exact in fp32 and
 * nothing to see. */
static int stage_neab_chain(probe *p)
{
    double x = 1 + p2(1 - p->pin), h = 1 + p2(2 - p->pin), ex = p2(2 - 2 * p->pin), d;
    if (p->pin < 13)
        return note(p->r, "neab: not observable with one product per step and exact products"), 0;
    int ok = 1;
    for (int s = 1; s >= -1; s -= 2) {
        double a = s * x;
        TRY(gemm1(p, -s * h, &a, &x, 1, &d));
        ok &= d == s * ex;
    }
    int lo = 2 * p->pin - 2 - 23;
    p->r->neab = ok ? (kcs_probe_value){KCS_PROBE_RANGE, lo, KCS_PROBE_INF}
                    : (kcs_probe_value){KCS_PROBE_RANGE, INT_MIN, lo - 1};
    /* one product per step: its width is bounded like neab; c is the
     * chain's running value, not an addend of a block */
    p->r->align_bits = ok ? (kcs_probe_value){KCS_PROBE_RANGE, lo + 23, KCS_PROBE_INF}
                          : (kcs_probe_value){KCS_PROBE_RANGE, INT_MIN, lo + 22};
    return 0;
}

/* ---- c dominating (rne, finite neab): c = B, products [2^(base-P),
 * 2^(base-P-m)]: half an ulp of B plus a tiny one; d rounds up iff the tiny
 * one survives. Global: it is aligned to B: survives iff P+m <= 23+neab.
 * Late c: the products are aligned to their own E_p and the sum is floored
 * to 2^(e_c-30-neab) (7 more bits) before the adder: survives iff
 * m <= 6 + neab. extra = last m rounding up minus (neab - 1): 7 vs 0. */
static int stage_late(probe *p)
{
    int neab = p->r->neab.lo, want = 6 + neab + 2, agree = -2;
    for (int base = p->eB; base >= p->eB - 2; base -= 2) {
        double B = p2(base), v[2] = {p2(base - p->P), 0}, d;
        int M = 0, m;
        if (!reach(p, p2(base - p->P - want)))
            continue;
        for (m = 1; m <= want; m++) {
            v[1] = p2(base - p->P - m);
            TRY(dotv(p, B, v, 2, &d));
            if (d != B + 2 * v[0] && d != B)
                return note(p->r, "late-c probe: %.9g is neither B nor B + ulp", d), 0;
            if (d != B && M != m - 1)
                return note(p->r, "late-c probe: rounds up again at m = %d", m), 0;
            if (d != B)
                M = m;
        }
        int extra = M == 0 ? 0 : M - (neab - 1);
        agree = agree == -2 || agree == extra ? extra : -1;
    }
    p->r->late_extra_bits = agree < -1 ? -1 : agree;
    if (agree == -1)
        note(p->r, "late-c probe: bases disagree");
    return 0;
}

/* ---- Subnormals. Each case: kept gives the exact value, flushed gives 0
 * (or c when the flushed product meets a normal c). */
static int sub_case(probe *p, double c, double a, double b, double kept, double flushed,
                    kcs_probe_sub *st)
{
    double d;
    TRY(gemm1(p, c, &a, &b, 1, &d));
    kcs_probe_sub x = d == kept ? KCS_PROBE_SUB_KEPT : d == flushed ? KCS_PROBE_SUB_FLUSHED
                                                                     : KCS_PROBE_SUB_MIXED;
    *st = *st == KCS_PROBE_SUB_NA || *st == x ? x : KCS_PROBE_SUB_MIXED;
    return 0;
}

static int stage_subnormal(probe *p)
{
    kcs_probe_result *r = p->r;
    r->sub_inputs = r->sub_products = r->sub_c = r->sub_results = KCS_PROBE_SUB_NA;
    for (int s = 1; s >= -1; s -= 2) {
        /* inputs: a subnormal in the input format (e(a) clamps to emin: it
         * aligns as a normal would), b = 2^sb scales a*b to a normal fp32 */
        for (int ea = p->emin - 1; ea >= p->emin - p->pin + 1; ea -= p->pin - 2) {
            int sb = -ea - 10 > p->emax ? p->emax : -ea - 10;
            double a = s * p2(ea), ab = a * p2(sb);
            if (kcs_format_exact(p->in, a)) {
                TRY(sub_case(p, 0, a, p2(sb), ab, 0, &r->sub_inputs));
                TRY(sub_case(p, 2 * ab, a, p2(sb), 3 * ab, 2 * ab, &r->sub_inputs));
            }
        }
        /* products below 2^-126 from normal inputs (wide-range formats) */
        for (int e = -130; e >= -135; e -= 5) {
            double a, b;
            if (2 * p->emin <= e && factor(p, s * p2(e), &a, &b) && fabs(b) >= p2(p->emin))
                TRY(sub_case(p, 0, a, b, s * p2(e), 0, &r->sub_products));
        }
        /* c subnormal in fp32, zero product */
        for (int e = -130; e >= -135; e -= 5)
            TRY(sub_case(p, s * p2(e), 0, 1, s * p2(e), 0, &r->sub_c));
        /* results: c = -s 2^e, product s (1 + 2^(e+130)) 2^e: S = s 2^-130 */
        for (int e = -125; e <= -124; e++) {
            double a, b;
            if (factor(p, s * (p2(e) + p2(-130)), &a, &b))
                TRY(sub_case(p, -s * p2(e), a, b, s * p2(-130), 0, &r->sub_results));
        }
    }
    kcs_probe_sub all[4] = {r->sub_inputs, r->sub_products, r->sub_c, r->sub_results};
    int kept = 0, flushed = 0, mixed = 0;
    for (int i = 0; i < 4; i++) {
        kept += all[i] == KCS_PROBE_SUB_KEPT;
        flushed += all[i] == KCS_PROBE_SUB_FLUSHED;
        mixed += all[i] == KCS_PROBE_SUB_MIXED;
    }
    r->flush = flushed > 0;
    r->flush_st = mixed || (kept && flushed) ? KCS_PROBE_INCONSISTENT
                  : kept + flushed ? KCS_PROBE_EXACT : KCS_PROBE_NA;
    return 0;
}

/* ---- Step kind from the evidence gathered. */
static void finish_step(probe *p)
{
    kcs_probe_result *r = p->r;
    r->step_st = KCS_PROBE_EXACT;
    if (r->step == KCS_PROBE_STEP_C_LAST)
        return;
    if (p->inner == 2) {
        r->step = KCS_PROBE_STEP_PAIRWISE;
        return;
    }
    if (p->inner != 1 || r->F.st == KCS_PROBE_INCONSISTENT) {
        r->step = KCS_PROBE_STEP_UNKNOWN;
        r->step_st = p->inner < 0 ? KCS_PROBE_NA : KCS_PROBE_INCONSISTENT;
        return;
    }
    bool late = p->floor_c || r->late_extra_bits == 7;
    bool glob = p->zero_c || r->late_extra_bits == 0;
    r->step = late ? KCS_PROBE_STEP_LATE_C : KCS_PROBE_STEP_GLOBAL;
    if (late && glob) {
        r->step_st = KCS_PROBE_INCONSISTENT;
        note(r, "c: evidence for both global alignment and late addition");
    } else if (r->late_extra_bits > 0 && r->late_extra_bits != 7) {
        note(r, "c dominating: the product sum keeps %d extra bits", r->late_extra_bits);
    } else if (!late && !glob) {
        note(r, "c: nothing is truncated, so global alignment and late c look alike");
    }
}

int kcs_probe_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, kcs_format in,
                  kcs_probe_result *r_p, kcs_error *err)
{
    return kcs_probe_run_tile(ops, ctx, in, 1, r_p, err);
}

int kcs_probe_run_tile(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, kcs_format in, int tile,
                       kcs_probe_result *r_p, kcs_error *err)
{
    if (tile < 1 || tile > KCS_PROBE_TILE_MAX)
        return kcs_fail(err, KCS_E_INVAL, "probe: tile %d outside 1..%d", tile,
                        KCS_PROBE_TILE_MAX);
    probe pr;
    kcs_probe_result r;
    memset(&r, 0, sizeof r);
    const kcs_format_info *fi = kcs_format_get(in);
    if (!fi || in == KCS_FMT_FP64)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "probe: input format %s is not probed",
                        fi ? fi->name : "?");
    probe *p = &pr;
    *p = (probe){.ops = ops, .ctx = ctx, .in = in, .emin = fi->emin, .pin = fi->p, .r = &r,
                 .err = err, .P = 24, .tile = tile};
    p->emax = fi->max_finite >= p2(fi->emax) ? fi->emax : fi->emax - 1;
    p->wlo = 2 * p->emin < -100 ? -100 : 2 * p->emin;
    p->whi = 2 * p->emax > 40 ? 40 : 2 * p->emax;
    p->eB = p->whi - 1;
    r.in = in;
    r.tile = tile;
    r.late_extra_bits = -1;
    r.neab = (kcs_probe_value){KCS_PROBE_NA, 0, 0};
    r.align_bits = r.c_bits = (kcs_probe_value){KCS_PROBE_NA, 0, 0};
    if (tile > 1) {
        size_t tk = (size_t)tile * (KMAX + 1);
        p->tA = malloc(tk * sizeof *p->tA);
        p->tB = malloc(tk * sizeof *p->tB);
        p->tC = malloc((size_t)tile * (size_t)tile * sizeof *p->tC);
        if (!p->tA || !p->tB || !p->tC) {
            free(p->tA), free(p->tB), free(p->tC);
            return kcs_fail(err, KCS_E_NOMEM, "probe: out of memory for a %d tile", tile);
        }
    }
    int rc = kcs_tensor_alloc(&p->out, (size_t)tile * (size_t)tile, KCS_FMT_FP32, err);
    if (rc) {
        free(p->tA), free(p->tB), free(p->tC);
        return rc;
    }
    if ((rc = stage_sanity(p)))
        goto out;
    if ((rc = stage_acc(p)) || (rc = stage_round_ties(p)) || (rc = stage_block(p)))
        goto out;
    bool blocks = r.step != KCS_PROBE_STEP_C_LAST && r.F.st != KCS_PROBE_INCONSISTENT;
    /* one or two products per block: nothing to order; F = 1..n: not known */
    p->inner = !blocks ? 0 : r.F.lo == 2 || r.F.hi == 1 ? 1 : r.F.lo == 1 ? -1 : 0;
    if (blocks && r.F.lo >= 3 && (rc = stage_inner(p)))
        goto out;
    if (p->inner == 1 && (rc = r.F.hi == 1 ? stage_neab_chain(p) : stage_neab(p)))
        goto out;
    int maxoff = r.step == KCS_PROBE_STEP_C_LAST || p->inner == 2 ? 1000
                 : r.neab.st == KCS_PROBE_EXACT || r.neab.st == KCS_PROBE_RANGE
                     ? (r.neab.lo > 1000 ? 1000 : 23 + r.neab.lo) : 0;
    if ((rc = stage_round_offmid(p, maxoff)))
        goto out;
    finish_rounding(&r);
    if (p->inner == 1 && r.rounding_st == KCS_PROBE_EXACT && r.rounding == KCS_RNE &&
        r.neab.st == KCS_PROBE_EXACT && r.neab.lo != KCS_PROBE_INF && (rc = stage_late(p)))
        goto out;
    if ((rc = stage_subnormal(p)))
        goto out;
    finish_step(p);
    if (r.step == KCS_PROBE_STEP_PAIRWISE)
        r.neab = r.align_bits = r.c_bits = (kcs_probe_value){KCS_PROBE_NA, 0, 0};
    kcs_probe_nearest(&r);
    *r_p = r;
out:
    kcs_tensor_free(&p->out);
    free(p->tA);
    free(p->tB);
    free(p->tC);
    return rc;
}

kcs_probe_value kcs_probe_sum_under_c_bits(const kcs_probe_result *r)
{
    if (r->align_bits.st != KCS_PROBE_EXACT || r->align_bits.lo == KCS_PROBE_INF ||
        r->late_extra_bits < 0)
        return (kcs_probe_value){KCS_PROBE_NA, 0, 0};
    int w = r->align_bits.lo + r->late_extra_bits;
    return (kcs_probe_value){KCS_PROBE_EXACT, w, w};
}

/* ---- Nearest profile ------------------------------------------------------ */

static kcs_probe_step step_of(kcs_step_kind k)
{
    return k == KCS_STEP_LATE_C ? KCS_PROBE_STEP_LATE_C
           : k == KCS_STEP_PAIRWISE ? KCS_PROBE_STEP_PAIRWISE : KCS_PROBE_STEP_GLOBAL;
}

static bool excludes(const kcs_probe_value *v, int x)
{
    return v->st == KCS_PROBE_INCONSISTENT || (v->st != KCS_PROBE_NA && (x < v->lo || x > v->hi));
}

static void add_name(char *diff, size_t len, int *n, const char *name)
{
    size_t u = strlen(diff);
    if (u < len)
        snprintf(diff + u, len - u, "%s%s", *n ? "," : "", name);
    (*n)++;
}

int kcs_probe_compare(const kcs_probe_result *r, const kcs_profile_params *p, char *diff,
                      size_t len)
{
    int n = 0;
    if (len)
        diff[0] = '\0';
    if (excludes(&r->F, p->F))
        add_name(diff, len, &n, "F");
    if (r->step_st == KCS_PROBE_INCONSISTENT || r->step != step_of(p->step))
        add_name(diff, len, &n, "step");
    /* neab has no meaning for a pairwise step (PROFILES.md: "—") */
    if (p->step != KCS_STEP_PAIRWISE && r->step != KCS_PROBE_STEP_PAIRWISE &&
        excludes(&r->neab, p->neab))
        add_name(diff, len, &n, "neab");
    if (r->rounding_st != KCS_PROBE_EXACT || r->rounding != p->rounding)
        add_name(diff, len, &n, "rounding");
    if (r->flush_st == KCS_PROBE_INCONSISTENT || (r->flush_st == KCS_PROBE_EXACT &&
                                                  r->flush != p->flush))
        add_name(diff, len, &n, "flush");
    return n;
}

void kcs_probe_nearest(kcs_probe_result *r)
{
    const kcs_profile_params *rows;
    int n = 0, same = 0;
    kcs_profile_table(&rows, &n);
    for (int i = 0; i < n; i++)
        same += rows[i].in == r->in;
    r->nearest = NULL;
    r->nearest_ties = 0;
    r->nearest_cross_format = same == 0;
    for (int i = 0; i < n; i++) {
        if (same && rows[i].in != r->in)
            continue;
        char diff[sizeof r->nearest_diff];
        int d = kcs_probe_compare(r, &rows[i], diff, sizeof diff);
        if (!r->nearest || d < r->nearest_diffs) {
            r->nearest = &rows[i];
            r->nearest_diffs = d;
            r->nearest_ties = 0;
            memcpy(r->nearest_diff, diff, sizeof diff);
        } else if (d == r->nearest_diffs) {
            r->nearest_ties++;
        }
    }
}

/* ---- Names ----------------------------------------------------------------- */

const char *kcs_probe_step_name(kcs_probe_step s)
{
    static const char *const n[] = {"global", "late-c", "pairwise", "c-last", "unknown"};
    return s <= KCS_PROBE_STEP_UNKNOWN ? n[s] : "unknown";
}

const char *kcs_probe_status_name(kcs_probe_status s)
{
    static const char *const n[] = {"exact", "range", "n/a", "inconsistent"};
    return s <= KCS_PROBE_INCONSISTENT ? n[s] : "?";
}

const char *kcs_probe_sub_name(kcs_probe_sub s)
{
    static const char *const n[] = {"kept", "flushed", "n/a", "inconsistent"};
    return s <= KCS_PROBE_SUB_MIXED ? n[s] : "?";
}

static void bound_str(int x, char *buf, size_t len)
{
    if (x == KCS_PROBE_INF)
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%d", x);
}

const char *kcs_probe_value_str(const kcs_probe_value *v, char *buf, size_t len)
{
    char lo[16], hi[16];
    bound_str(v->lo, lo, sizeof lo);
    bound_str(v->hi, hi, sizeof hi);
    if (v->st == KCS_PROBE_NA || v->st == KCS_PROBE_INCONSISTENT)
        snprintf(buf, len, "%s", kcs_probe_status_name(v->st));
    else if (v->lo == v->hi)
        snprintf(buf, len, "%s", lo);
    else if (v->hi == KCS_PROBE_INF)
        snprintf(buf, len, ">=%s", lo);
    else if (v->lo == INT_MIN)
        snprintf(buf, len, "<=%s", hi);
    else
        snprintf(buf, len, "%s..%s", lo, hi);
    return buf;
}

const char *kcs_probe_rounding_str(const kcs_probe_result *r)
{
    static const char *const n[] = {"rne", "rz", "rd", "ru"};
    if (r->rounding_st == KCS_PROBE_EXACT && r->rounding <= KCS_RU)
        return n[r->rounding];
    return r->round_modes == KCS_PROBE_RM_RNA ? "rna" : kcs_probe_status_name(r->rounding_st);
}
