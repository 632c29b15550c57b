/* SHA-256 through OpenSSL (pub_hash.h). */
#include "pub_hash.h"

#include <openssl/evp.h>
#include <stdio.h>

static void to_hex(const unsigned char *md, unsigned n, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < n && i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

int kcs_sha256_buf(const void *data, size_t len, char hex[65], kcs_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
        return kcs_fail(err, KCS_E_INTERNAL, "sha256: OpenSSL failed");
    to_hex(md, n, hex);
    return 0;
}

int kcs_sha256_file(const char *path, char hex[65], int64_t *bytes_p, kcs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kcs_fail(err, KCS_E_IO, "%s: cannot read", path);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    unsigned char buf[1 << 16], md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    int64_t total = 0;
    size_t got;
    while (ok && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        ok = EVP_DigestUpdate(ctx, buf, got);
        total += (int64_t)got;
    }
    int bad = ferror(f);
    fclose(f);
    ok = ok && !bad && EVP_DigestFinal_ex(ctx, md, &n) && n == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return kcs_fail(err, bad ? KCS_E_IO : KCS_E_INTERNAL, "%s: cannot compute its sha256%s",
                        path, bad ? " (read error)" : "");
    to_hex(md, n, hex);
    if (bytes_p)
        *bytes_p = total;
    return 0;
}
