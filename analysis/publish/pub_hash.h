/* SHA-256 of files and buffers for kcs publish (OpenSSL's EVP interface:
 * the bundle's datapackage.json records "sha256:<hex>" per file). */
#ifndef KCS_PUB_HASH_H
#define KCS_PUB_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* hex: 65 bytes (64 lowercase hex digits and NUL). */
int kcs_sha256_buf(const void *data, size_t len, char hex[65], kcs_error *err);
/* Also the file's size in *bytes_p (may be NULL). KCS_E_IO naming path. */
int kcs_sha256_file(const char *path, char hex[65], int64_t *bytes_p, kcs_error *err);

#endif
