/* The Frobenius norm by fixed chunks (norm_fro.h); kcs_norm_fro (metrics.h)
 * is defined here so that it is the same formula. */
#include "norm_fro.h"

#include <math.h>

#include "metrics.h"

size_t kcs_norm_nchunks(size_t n)
{
    return (n + KCS_NORM_CHUNK - 1) / KCS_NORM_CHUNK;
}

static double chunk_sumsq(const double *x, size_t len)
{
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    size_t i = 0;
    for (; i + 4 <= len; i += 4)
        for (int j = 0; j < 4; j++)
            s[j] += x[i + j] * x[i + j];
    for (int j = 0; i < len; i++, j++)
        s[j] += x[i] * x[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

void kcs_norm_chunks(const double *x, size_t n, size_t c0, size_t c1, double *part)
{
    for (size_t c = c0; c < c1; c++) {
        size_t i0 = c * KCS_NORM_CHUNK, len = n - i0 < KCS_NORM_CHUNK ? n - i0 : KCS_NORM_CHUNK;
        part[c - c0] = chunk_sumsq(x + i0, len);
    }
}

double kcs_norm_from_chunks(const double *part, size_t nchunks)
{
    double s = 0.0;
    for (size_t c = 0; c < nchunks; c++)
        s += part[c];
    return sqrt(s);
}

double kcs_norm_fro(const double *x, size_t n)
{
    double s = 0.0; /* the chunks' sums in order: kcs_norm_from_chunks without the array */
    for (size_t c = 0, nc = kcs_norm_nchunks(n); c < nc; c++) {
        double part;
        kcs_norm_chunks(x, n, c, c + 1, &part);
        s += part;
    }
    return sqrt(s);
}
