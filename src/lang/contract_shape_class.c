/* Shape classes of a precondition: `precondition.shape.multiple_of` names,
 * per dimension, a step N such that only multiples of N are admitted (a
 * kernel specialised for tiles of 16 promises nothing at k = 100).
 *
 *   shape: { k: [16, 65536], multiple_of: { k: 16 } }
 *
 * Loading and the lint cross-check live here; the check of a shape against
 * the class (grade --shape, study cases, kcs check, the sweep) is
 * precondition.c's. */
#include <inttypes.h>
#include <stdio.h>

#include "contract_load.h"

#define MULT_MAX (INT64_C(1) << 31) /* largest step of a shape class */

static const char *const dim_keys[] = {"m", "n", "k", "batch", NULL};

static void dim_range(const kcs_contract *c, int d, int64_t *lo, int64_t *hi)
{
    const int64_t r[4][2] = {{c->m_min, c->m_max},
                             {c->n_min, c->n_max},
                             {c->k_min, c->k_max},
                             {c->batch_min, c->batch_max}};
    *lo = r[d][0];
    *hi = r[d][1];
}

void kcs_contract_load_shape_class(loader *L, struct fy_node *shape)
{
    kcs_contract *c = L->c;
    struct fy_node *mo =
        kcs_contract_section(L, shape, "multiple_of", false, "precondition.shape", dim_keys);
    if (!mo)
        return;
    for (int d = 0; d < 4; d++) {
        char f[48];
        snprintf(f, sizeof f, "precondition.shape.multiple_of.%s", dim_keys[d]);
        struct fy_node *n = kcs_yaml_get(L->y, mo, dim_keys[d], false,
                                         "precondition.shape.multiple_of");
        int64_t v, lo, hi;
        if (!n || !kcs_yaml_int(L->y, n, f, 1, MULT_MAX, &v))
            continue;
        dim_range(c, d, &lo, &hi);
        /* the smallest multiple of v at or above lo, without overflow */
        int64_t first = lo % v ? lo + (v - lo % v) : lo;
        if (lo > INT64_MAX - v || first > hi) {
            kcs_yaml_error(L->y, n, f, "no multiple of %" PRId64 " lies in precondition.shape.%s "
                           "[%" PRId64 ", %" PRId64 "]", v, dim_keys[d], lo, hi);
            continue;
        }
        c->shape_mult[d] = v > 1 ? v : 0;
    }
}

const char *kcs_contract_shape_class_miss(const kcs_contract *c, const kcs_shape *s,
                                          int64_t *v_p, int64_t *mult_p)
{
    const int64_t v[4] = {s->m, s->n, s->k, s->batch > 0 ? s->batch : 1};
    for (int d = 0; d < 4; d++)
        if (c->shape_mult[d] > 1 && v[d] % c->shape_mult[d]) {
            *v_p = v[d];
            *mult_p = c->shape_mult[d];
            return dim_keys[d];
        }
    return NULL;
}

/* A measured shape lies in the class. */
void kcs_contract_check_shape_class(loader *L, const kcs_shape *s, struct fy_node *n, const char *f)
{
    int64_t v, mult;
    const char *dim = kcs_contract_shape_class_miss(L->c, s, &v, &mult);
    if (dim)
        kcs_yaml_error(L->y, n, f, "%s = %" PRId64 " is not a multiple of %" PRId64
                       " (precondition.shape.multiple_of.%s)", dim, v, mult, dim);
}
