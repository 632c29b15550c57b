/* Declared semantics (declares.h: nan=mask, oob=clamp|zero|undefined)
 * select the postconditions a kernel is judged under (semantics.c). */
#ifndef KCS_SEMANTICS_H
#define KCS_SEMANTICS_H

#include <stddef.h>
#include <stdint.h>

#include "placement.h"
#include "study.h"

/* The contract c as judged on binding b: where c's attrs hold the default
 * semantics (nan=propagate, oob=raise) and the kernel declares other ones
 * (declares.h: nan=mask, oob=clamp|zero|undefined), a copy in *copy with
 * the declared attrs (and *ops cut to the ops that define them); else c.
 * note gets the attrs judged, and where they were declared, the
 * contract's own. */
const kcs_contract *kcs_declared_semantics(const kcs_contract *c, kcs_rank_binding *b,
                                           uint32_t *ops, kcs_contract *copy, char *note,
                                           size_t len);

#endif
