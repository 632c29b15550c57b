/* Declared semantics drive the grading (semantics.h; `kcs grade` and
 * `kcs calibrate` through kcs_calib_semantics, `kcs run` per case):
 * a contract written for the default semantics (attrs nan=propagate,
 * oob=raise) is judged under what the kernel declares it does instead
 * (declares.h: "nan=mask", "oob=clamp|zero|undefined"), so that the
 * matching postconditions apply without a user-written variant: the
 * reference follows the attrs (nan_mask.h, the gather oracle), the kernel
 * is called with them, and the contract's invariants read them (oob_raise,
 * C-EXC-02). */
#include <stdio.h>
#include <string.h>

#include "semantics.h"

#include "declares.h"
#include "nan_mask.h"

/* Replace "key=from" by "key=to" in attrs (one token of "k=v;k=v"). */
static int swap_attr(char *attrs, size_t cap, const char *from, const char *to)
{
    char *p = strstr(attrs, from);
    size_t fl = strlen(from);
    if (!p || (p != attrs && p[-1] != ';' && p[-1] != ' ') || (p[fl] && p[fl] != ';'))
        return 0;
    char out[256];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(p - attrs), attrs, to, p + fl);
    if (strlen(out) >= cap)
        return 0;
    snprintf(attrs, cap, "%s", out);
    return 1;
}

const kcs_contract *kcs_declared_semantics(const kcs_contract *c, kcs_rank_binding *b,
                                           uint32_t *ops, kcs_contract *copy, char *note,
                                           size_t len)
{
    snprintf(note, len, "%s", c->attrs);
    if (!c->attrs[0] || !*ops)
        return c;
    kcs_call call;
    memset(&call, 0, sizeof call);
    for (int op = 0; op < KCS_OP_COUNT; op++)
        if (*ops & (1u << op)) {
            call.op = (kcs_op)op;
            break;
        }
    call.variant = b->pl.variant;
    call.schedule = b->pl.schedule;
    uint32_t d = kcs_binding_declares(b, &call);
    *copy = *c;
    int changed = 0;
    if (d & KCS_DECL_BIT(KCS_DECL_SEM_NAN_MASK)) {
        uint32_t masked = 0; /* ops that define nan=mask: the others are not judged */
        for (int op = 0; op < KCS_OP_COUNT; op++)
            if ((*ops & (1u << op)) && kcs_nan_mask_defined((kcs_op)op))
                masked |= 1u << op;
        if (masked && swap_attr(copy->attrs, sizeof copy->attrs, "nan=propagate", "nan=mask")) {
            *ops = masked;
            changed = 1;
        }
    }
    static const struct {
        kcs_decl d;
        const char *to;
    } oob[] = {{KCS_DECL_OOB_CLAMP, "oob=clamp"},
               {KCS_DECL_OOB_ZERO, "oob=zero"},
               {KCS_DECL_OOB_UNDEFINED, "oob=undefined"}};
    for (size_t i = 0; i < sizeof oob / sizeof oob[0]; i++)
        if ((d & KCS_DECL_BIT(oob[i].d)) &&
            swap_attr(copy->attrs, sizeof copy->attrs, "oob=raise", oob[i].to)) {
            changed = 1;
            break;
        }
    if (!changed)
        return c;
    snprintf(note, len, "%s (declared; contract: %s)", copy->attrs, c->attrs);
    return copy;
}
