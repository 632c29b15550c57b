/* Content digests of a dataset's raw groups, and its declared end.
 *
 * `kcs run` (and the merged dataset of `kcs reduce`) seal a finished file:
 * one XXH3-64 digest per raw object (/results, /samples, /cases,
 * /provenance, /study, /contracts) and one of the root attributes, written
 * as root attributes digest_<name> ("%016x", or "absent") and digest_root,
 * with digest_method naming the canonical form. Every reader recomputes
 * them. The digest is over the values in a canonical form, not the file's
 * bytes, so a file rewritten by h5repack (same types, other layout or
 * filters) still verifies; the form is documented in docs/dataset.md
 * ("Content digests") and is generic: any object a group holds counts,
 * whoever added it. The functions on open HDF5 files are in store_h5.h. */
#ifndef KCS_STORE_DIGEST_H
#define KCS_STORE_DIGEST_H

#include <stdint.h>

#include "error.h"

#define KCS_DIGEST_METHOD "kcs-canonical-1 xxh3-64"
#define KCS_RAW_N 6
/* The raw objects, in the order they are checked. */
extern const char *const kcs_raw_objects[KCS_RAW_N];

/* Serial: open path read-write, write the digests, close. */
int kcs_store_seal(const char *path, kcs_error *err);

#endif
