/* The standard normal generator: a 256-layer ziggurat (Marsaglia & Tsang,
 * JSS 5(8), 2000) on 64-bit Philox draws, with the tables fixed in
 * rng_ziggurat.h (scripts/gen_ziggurat.py) and the rare slow paths (wedge,
 * tail; ~1.3% of draws) through detmath.h. Every operation is an IEEE 754
 * binary64 operation with a fixed definition, so the inputs of a study are
 * the same bits on every libm, CPU and flag set; this file is also built
 * with -ffp-contract=off (src/CMakeLists.txt), and its products that feed
 * an add go through a volatile so that nothing depends on that flag.
 *
 * A draw b: layer i = b & 0xff, sign = bit 8, magnitude U = b >> 12 (52
 * bits); x = U * w[i]. U < k[i] means x is under the curve (accept). Else
 * layer 0 samples the tail beyond r (Marsaglia's exponential method), other
 * layers test a uniform height in the wedge against e^(-x^2/2); a rejected
 * draw starts over with the next draw. kcs_rng_normal_n computes the fast
 * path of a block of draws at once (vectorised) and walks them in order,
 * so it consumes the stream exactly as n calls of kcs_rng_normal do. */
#include <stdint.h>
#include <string.h>

#include "detmath.h"
#include "rng.h"
#include "rng_ziggurat.h"

static inline double mul(double a, double b)
{
    volatile double p = a * b;
    return p;
}

static inline double dbl(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline uint64_t bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* |x| of a draw: U (52 bits, exact as a double) times the layer's width. */
static inline double magnitude(uint64_t b)
{
    return (dbl(0x4330000000000000ull | (b >> 12)) - 0x1p52) * zig_w[b & 0xff];
}

static inline double with_sign(double mag, uint64_t b)
{
    return dbl(bits(mag) | ((b >> 8) & 1) << 63);
}

static inline double uniform(uint64_t b) /* [0, 1), 53 bits */
{
    return (double)(b >> 11) * 0x1p-53;
}

typedef uint64_t (*next_fn)(void *ctx);

/* The slow path of draw b (not accepted by the fast test): 1 and *out when
 * it yields a value, 0 when the draw is rejected. */
static int slow(uint64_t b, double *out, next_fn next, void *ctx)
{
    unsigned i = (unsigned)(b & 0xff);
    if (i == 0) {
        for (;;) {
            double u1 = 1.0 - uniform(next(ctx)), u2 = 1.0 - uniform(next(ctx)); /* (0, 1] */
            double xx = mul(-ZIG_INV_R, kcs_det_log(u1));
            double yy = -kcs_det_log(u2);
            if (yy + yy > mul(xx, xx)) {
                *out = with_sign(ZIG_R + xx, b);
                return 1;
            }
        }
    }
    double x = magnitude(b);
    double y = zig_f[i] + mul(uniform(next(ctx)), zig_f[i + 1] - zig_f[i]);
    if (y < kcs_det_exp(-0.5 * mul(x, x))) {
        *out = with_sign(x, b);
        return 1;
    }
    return 0;
}

static uint64_t next_scalar(void *ctx)
{
    return kcs_rng_u64((kcs_rng *)ctx);
}

double kcs_rng_normal(kcs_rng *r)
{
    for (;;) {
        uint64_t b = kcs_rng_u64(r);
        if ((b >> 12) < zig_k[b & 0xff])
            return with_sign(magnitude(b), b);
        double x;
        if (slow(b, &x, next_scalar, r))
            return x;
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

enum { CH = 512 };

typedef struct zsrc {
    kcs_rng *r;
    size_t q, len, need; /* next draw, draws held, outputs still due */
    uint64_t u[CH];
    double cand[CH];
    uint8_t ok[CH];
} zsrc;

CLONES static void candidates(const uint64_t *u, double *cand, uint8_t *ok, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        uint64_t b = u[i];
        cand[i] = with_sign(magnitude(b), b);
        ok[i] = (b >> 12) < zig_k[b & 0xff];
    }
}

/* Never draws more than the outputs still due: each needs at least one
 * draw, so the stream ends where n scalar calls leave it. */
static void refill(zsrc *s)
{
    uint32_t w[2 * CH];
    size_t m = s->need < CH ? s->need : CH;
    kcs_rng_u32_n(s->r, w, 2 * m);
    for (size_t i = 0; i < m; i++)
        s->u[i] = (uint64_t)w[2 * i] << 32 | w[2 * i + 1];
    candidates(s->u, s->cand, s->ok, m);
    s->q = 0;
    s->len = m;
}

static uint64_t next_block(void *ctx)
{
    zsrc *s = ctx;
    if (s->q == s->len)
        refill(s);
    return s->u[s->q++];
}

void kcs_rng_normal_n(kcs_rng *r, double *x, size_t n)
{
    zsrc s;
    s.r = r;
    s.q = s.len = 0;
    size_t i = 0;
    while (i < n) {
        s.need = n - i; /* refills (here or in slow) draw no further */
        if (s.q == s.len)
            refill(&s);
        /* the run of accepted draws: copied as they come */
        size_t lim = s.len - s.q < n - i ? s.len - s.q : n - i, j = 0;
        while (j < lim && s.ok[s.q + j]) {
            x[i + j] = s.cand[s.q + j];
            j++;
        }
        s.q += j;
        i += j;
        if (j == lim)
            continue;
        /* a draw outside the rectangles: its wedge or tail, or a redraw */
        uint64_t b = s.u[s.q++];
        s.need = n - i;
        while (!slow(b, &x[i], next_block, &s)) {
            if (s.q == s.len)
                refill(&s);
            size_t q = s.q++;
            if (s.ok[q]) {
                x[i] = s.cand[q];
                break;
            }
            b = s.u[q];
        }
        i++;
    }
}
