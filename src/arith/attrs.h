/* Op attributes: the "key=value;key=value" string of kcs_call.attrs
 * (e.g. "oob=raise;nan=propagate"). Keys are [a-z0-9_]+, values are
 * non-empty and hold no ';' or '='; spaces around keys and values are
 * ignored; empty segments (";;", a trailing ';') are allowed. */
#ifndef KCS_ATTRS_H
#define KCS_ATTRS_H

#include <stddef.h>

/* Check the whole string. 0 when well formed (NULL and "" are), else
 * KCS_E_INVAL. */
int kcs_attrs_check(const char *attrs);

/* Look key up in attrs. Returns 1 and copies the value (NUL-terminated)
 * into buf when found, 0 when absent, KCS_E_INVAL when attrs is malformed
 * anywhere, names a key twice, or the value does not fit in len bytes. */
int kcs_attrs_get(const char *attrs, const char *key, char *buf, size_t len);

#endif
