/* Kernel declarations (declares.h). */
#include "declares.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

static const char *const names[KCS_DECL_COUNT] = {
    [KCS_DECL_BATCH_INVARIANT] = "batch_invariant",
    [KCS_DECL_NAN_MASK] = "nan_mask",
    [KCS_DECL_ROUND_NEAREST] = "round_to_nearest",
    [KCS_DECL_SEM_NAN_MASK] = "nan=mask",
    [KCS_DECL_OOB_CLAMP] = "oob=clamp",
    [KCS_DECL_OOB_ZERO] = "oob=zero",
    [KCS_DECL_OOB_UNDEFINED] = "oob=undefined",
};

const char *kcs_decl_name(kcs_decl d)
{
    return d >= 0 && d < KCS_DECL_COUNT ? names[d] : "?";
}

int kcs_decl_parse(const char *name, kcs_decl *d_p)
{
    for (int i = 0; i < KCS_DECL_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *d_p = (kcs_decl)i;
            return 0;
        }
    return KCS_E_INVAL;
}

int kcs_decls_parse(const char *list, uint32_t *mask_p, char *bad, size_t bad_len)
{
    static const char seps[] = ",; \t\n";
    uint32_t mask = 0;
    if (bad && bad_len)
        bad[0] = 0;
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, seps);
        size_t n = strcspn(p, seps);
        if (n == 0)
            break;
        char word[64];
        kcs_decl d;
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word - 1 ? n : sizeof word - 1), p);
        if (n < sizeof word && (strcmp(word, "nan=propagate") == 0 || strcmp(word, "oob=raise") == 0)) {
            p += n; /* the contracts' default semantics: nothing to select */
            continue;
        }
        if (n >= sizeof word || kcs_decl_parse(word, &d)) {
            if (bad && bad_len)
                snprintf(bad, bad_len, "%.*s", (int)n, p);
            return KCS_E_INVAL;
        }
        mask |= KCS_DECL_BIT(d);
        if (d == KCS_DECL_SEM_NAN_MASK) /* masking always: it implements nan=mask */
            mask |= KCS_DECL_BIT(KCS_DECL_NAN_MASK);
        p += n;
    }
    *mask_p = mask;
    return 0;
}

const char *kcs_decls_str(uint32_t mask, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < KCS_DECL_COUNT; i++)
        if (mask & KCS_DECL_BIT(i)) {
            int w = snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "," : "",
                             names[i]);
            if (w > 0)
                used += (size_t)w;
        }
    return buf;
}

const char *kcs_decls_known(void)
{
    return "batch_invariant | nan_mask | round_to_nearest | nan=mask | nan=propagate | "
           "oob=raise | oob=clamp | oob=zero | oob=undefined";
}
