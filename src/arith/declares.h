/* Kernel declarations: properties an implementation claims about itself
 * (not semantics kcs asks of it, which are attrs.h), e.g. that its results
 * do not depend on the batch they are computed in. A contract whose
 * precondition lists `declares: [...]` binds only implementations that
 * declare every one of them; the others are reported as not claiming it
 * (verdict not_claimed), neither a pass nor a violation.
 *
 * Where declarations come from: a plugin exports them
 * (kcs_plugin_declares, include/kcs_plugin.h), a backend reports those of
 * its variants (the ops table's `declares` slot, backends/backend.h), and a
 * study's placement entry may state them (`declares: [batch_invariant]`).
 *
 * The text form is a list of names separated by ',', ';' or blanks:
 * "batch_invariant". */
#ifndef KCS_DECLARES_H
#define KCS_DECLARES_H

#include <stddef.h>
#include <stdint.h>

typedef enum kcs_decl {
    KCS_DECL_BATCH_INVARIANT = 0, /* op(x[:b]) == op(x)[:b] bitwise for every batch size b */
    KCS_DECL_NAN_MASK,            /* implements nan=mask (nan_mask.h): NaN inputs are absent */
    KCS_DECL_ROUND_NEAREST,       /* every sum and product of dtype_acc rounds to nearest
                                     (no truncating matrix unit, no fast-math): C-PRC-06 */
    /* Declared semantics (attrs.h's values as the kernel's own, fixed
     * behaviour): kcs grade and kcs calibrate judge a contract whose attrs
     * say nan=propagate / oob=raise under the declared value instead
     * (src/run/semantics.c). "nan=propagate" and "oob=raise",
     * the contracts' defaults, are accepted and set nothing. */
    KCS_DECL_SEM_NAN_MASK,        /* "nan=mask": NaN inputs are absent (implies nan_mask) */
    KCS_DECL_OOB_CLAMP,           /* "oob=clamp": an out-of-range index reads the nearest row */
    KCS_DECL_OOB_ZERO,            /* "oob=zero": ... gives a row of zeros */
    KCS_DECL_OOB_UNDEFINED,       /* "oob=undefined": ... gives rows kcs does not judge */
    KCS_DECL_COUNT
} kcs_decl;

#define KCS_DECL_BIT(d) (1u << (d))

/* "batch_invariant", ... ; "?" out of range. */
const char *kcs_decl_name(kcs_decl d);
/* One name -> 0 and *d_p, or KCS_E_INVAL. */
int kcs_decl_parse(const char *name, kcs_decl *d_p);
/* A list ("a,b", "a; b", "a b"; NULL and "" are empty) -> bit mask. On an
 * unknown name returns KCS_E_INVAL and copies that name into bad. */
int kcs_decls_parse(const char *list, uint32_t *mask_p, char *bad, size_t bad_len);
/* The mask as "a,b" ("" when empty). */
const char *kcs_decls_str(uint32_t mask, char *buf, size_t len);
/* Every known name, " | "-separated (for messages). */
const char *kcs_decls_known(void);

#endif
