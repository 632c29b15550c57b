/* Content digests of the raw objects and the declared end (store_digest.h).
 *
 * The canonical form (docs/dataset.md, "Content digests"), hashed as one
 * XXH3-64 stream per raw object:
 *   group:    "group\n", its attributes, then for each link in name order
 *             "link <name>\n" and the linked object (hard links) or
 *             "soft <target>\n" / "external " and the link value's bytes;
 *   dataset:  "dataset <type> [<dims>]\n", its attributes, "data\n", then
 *             the values in row-major order: for a compound, the 8-byte
 *             digest of each member's column in member order; else the
 *             values themselves;
 *   datatype: "datatype <type>\n";
 *   attribute (in name order): "attr <name> <type> [<dims>]\n" and its
 *             values as for a dataset.
 * A value is its bytes in the host's native (little-endian) type of the
 * same class, size and sign; a fixed-length string its stored bytes; a
 * variable-length string or sequence its length (8 bytes) and elements.
 * <type>: i<size>/u<size> integers, f<size> floats, S<size> fixed strings,
 * vstr, {name:type,...} compounds, a[d,...]<type> arrays, e<type> enums,
 * v<type> sequences, b/o/r/t<size> bitfield/opaque/reference/time. Layout,
 * chunking, filters, byte order in the file and the order objects were
 * created in do not count, so h5repack keeps every digest. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <mpi.h>

#include "fdio.h"

#include "store_digest.h"
#include "store_h5.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the canonical digest form is defined on little-endian hosts (store_digest.c)"
#endif

const char *const kcs_raw_objects[KCS_RAW_N] = {"/results", "/samples",  "/cases",
                                                "/provenance", "/study", "/contracts"};

#define MAX_DEPTH 16
#define MAX_OBJECTS 200000
#define MAX_DESC 8192
#define BLOCK_BYTES ((size_t)4 << 20)
#define MAX_ROW_BYTES ((size_t)256 << 20)
#define MAX_ATTR_BYTES ((size_t)64 << 20)

typedef struct walk {
    XXH3_state_t *h;
    char *why;
    size_t why_len;
    int n_objects, depth, skip_digest_attrs;
    int direct; /* read variable-length strings here (in the checking child) */
} walk;

static int wfail(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wfail(walk *w, const char *fmt, ...)
{
    if (!w->why[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->why, w->why_len, fmt, ap);
        va_end(ap);
    }
    H5Eclear2(H5E_DEFAULT);
    return -1;
}

static void put(XXH3_state_t *h, const void *p, size_t n)
{
    if (n)
        XXH3_64bits_update(h, p, n);
}

static void put_u64(XXH3_state_t *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(h, b, 8);
}

static int app(char *b, size_t *pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int app(char *b, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b + *pos, MAX_DESC - *pos, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= MAX_DESC - *pos)
        return -1;
    *pos += (size_t)n;
    return 0;
}

/* The type's text (the header above); -1 when too deep, long or unknown. */
static int desc(hid_t t, char *b, size_t *pos, int depth)
{
    if (depth > 8)
        return -1;
    size_t sz = H5Tget_size(t);
    int rc = 0;
    switch (H5Tget_class(t)) {
    case H5T_INTEGER:
        return app(b, pos, "%c%zu", H5Tget_sign(t) == H5T_SGN_NONE ? 'u' : 'i', sz);
    case H5T_FLOAT:
        return app(b, pos, "f%zu", sz);
    case H5T_STRING:
        return H5Tis_variable_str(t) > 0 ? app(b, pos, "vstr") : app(b, pos, "S%zu", sz);
    case H5T_BITFIELD:
        return app(b, pos, "b%zu", sz);
    case H5T_OPAQUE:
        return app(b, pos, "o%zu", sz);
    case H5T_REFERENCE:
        return app(b, pos, "r%zu", sz);
    case H5T_TIME:
        return app(b, pos, "t%zu", sz);
    case H5T_COMPOUND: {
        int n = H5Tget_nmembers(t);
        if (n < 0 || app(b, pos, "{"))
            return -1;
        for (int i = 0; i < n && !rc; i++) {
            char *name = H5Tget_member_name(t, (unsigned)i);
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            rc = (!name || mt < 0 || app(b, pos, "%s%s:", i ? "," : "", name) ||
                  desc(mt, b, pos, depth + 1))
                     ? -1
                     : 0;
            if (name)
                H5free_memory(name);
            if (mt >= 0)
                H5Tclose(mt);
        }
        return rc ? rc : app(b, pos, "}");
    }
    case H5T_ARRAY: {
        hsize_t dims[H5S_MAX_RANK];
        int nd = H5Tget_array_ndims(t);
        if (nd < 0 || nd > H5S_MAX_RANK || H5Tget_array_dims2(t, dims) < 0 || app(b, pos, "a["))
            return -1;
        for (int i = 0; i < nd; i++)
            if (app(b, pos, "%s%llu", i ? "," : "", (unsigned long long)dims[i]))
                return -1;
        if (app(b, pos, "]"))
            return -1;
    }
        __attribute__((fallthrough)); /* the element type */
    case H5T_ENUM:
    case H5T_VLEN: {
        H5T_class_t c = H5Tget_class(t);
        if (c == H5T_ENUM && app(b, pos, "e"))
            return -1;
        if (c == H5T_VLEN && app(b, pos, "v"))
            return -1;
        hid_t base = H5Tget_super(t);
        if (base < 0)
            return -1;
        rc = desc(base, b, pos, depth + 1);
        H5Tclose(base);
        return rc;
    }
    default:
        return -1;
    }
}

static int has_vlen(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_VLEN || (c == H5T_STRING && H5Tis_variable_str(t) > 0))
        return 1;
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t), v = 0;
        for (int i = 0; i < n && !v; i++) {
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            v = mt >= 0 ? has_vlen(mt) : 1;
            if (mt >= 0)
                H5Tclose(mt);
        }
        return v;
    }
    if (c == H5T_ARRAY) {
        hid_t base = H5Tget_super(t);
        int v = base >= 0 ? has_vlen(base) : 1;
        if (base >= 0)
            H5Tclose(base);
        return v;
    }
    return 0;
}

/* One value of memory type t at p (vlen: length then elements). */
static void hash_value(XXH3_state_t *h, hid_t t, const unsigned char *p)
{
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_STRING && H5Tis_variable_str(t) > 0) {
        const char *s = *(char *const *)p;
        size_t n = s ? strlen(s) : 0;
        put_u64(h, n);
        put(h, s, n);
    } else if (c == H5T_VLEN) {
        const hvl_t *v = (const hvl_t *)p;
        hid_t base = H5Tget_super(t);
        size_t bs = base >= 0 ? H5Tget_size(base) : 0;
        put_u64(h, v->len);
        for (size_t i = 0; bs && v->p && i < v->len; i++)
            hash_value(h, base, (const unsigned char *)v->p + i * bs);
        if (base >= 0)
            H5Tclose(base);
    } else if (c == H5T_COMPOUND || c == H5T_ARRAY) {
        if (!has_vlen(t)) {
            put(h, p, H5Tget_size(t));
            return;
        }
        if (c == H5T_ARRAY) {
            hid_t base = H5Tget_super(t);
            size_t bs = H5Tget_size(base), n = bs ? H5Tget_size(t) / bs : 0;
            for (size_t i = 0; i < n; i++)
                hash_value(h, base, p + i * bs);
            H5Tclose(base);
            return;
        }
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n; i++) {
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            hash_value(h, mt, p + H5Tget_member_offset(t, (unsigned)i));
            H5Tclose(mt);
        }
    } else {
        put(h, p, H5Tget_size(t));
    }
}

/* Values of a compound type: one digest state per member, fed column by
 * column (a member's values gathered, padding left out). */
typedef struct columns {
    int n;
    XXH3_state_t **st;
    hid_t *type;
    size_t *off, *size;
    int *vlen;
    unsigned char *scratch;
    size_t scratch_len;
} columns;

static void columns_free(columns *c)
{
    for (int i = 0; i < c->n; i++) {
        if (c->st[i])
            XXH3_freeState(c->st[i]);
        if (c->type[i] >= 0)
            H5Tclose(c->type[i]);
    }
    free(c->st);
    free(c->type);
    free(c->off);
    free(c->size);
    free(c->vlen);
    free(c->scratch);
    memset(c, 0, sizeof *c);
}

static int columns_init(columns *c, hid_t mt)
{
    memset(c, 0, sizeof *c);
    int n = H5Tget_nmembers(mt);
    if (n < 0)
        return -1;
    c->n = n;
    c->st = calloc((size_t)n + 1, sizeof *c->st);
    c->type = malloc(((size_t)n + 1) * sizeof *c->type);
    c->off = calloc((size_t)n + 1, sizeof *c->off);
    c->size = calloc((size_t)n + 1, sizeof *c->size);
    c->vlen = calloc((size_t)n + 1, sizeof *c->vlen);
    if (!c->st || !c->type || !c->off || !c->size || !c->vlen) {
        c->n = 0;
        return -1;
    }
    for (int i = 0; i < n; i++)
        c->type[i] = -1;
    for (int i = 0; i < n; i++) {
        c->type[i] = H5Tget_member_type(mt, (unsigned)i);
        c->st[i] = XXH3_createState();
        if (c->type[i] < 0 || !c->st[i])
            return -1;
        XXH3_64bits_reset(c->st[i]);
        c->off[i] = H5Tget_member_offset(mt, (unsigned)i);
        c->size[i] = H5Tget_size(c->type[i]);
        c->vlen[i] = has_vlen(c->type[i]);
    }
    return 0;
}

static int columns_feed(columns *c, const unsigned char *buf, size_t rec, size_t n)
{
    for (int i = 0; i < c->n; i++) {
        if (c->vlen[i]) {
            for (size_t e = 0; e < n; e++)
                hash_value(c->st[i], c->type[i], buf + e * rec + c->off[i]);
            continue;
        }
        size_t need = n * c->size[i];
        if (need > c->scratch_len) {
            unsigned char *s = realloc(c->scratch, need);
            if (!s)
                return -1;
            c->scratch = s;
            c->scratch_len = need;
        }
        for (size_t e = 0; e < n; e++)
            memcpy(c->scratch + e * c->size[i], buf + e * rec + c->off[i], c->size[i]);
        put(c->st[i], c->scratch, need);
    }
    return 0;
}

static void columns_finish(columns *c, XXH3_state_t *h)
{
    for (int i = 0; i < c->n; i++)
        put_u64(h, (uint64_t)XXH3_64bits_digest(c->st[i]));
}

/* n values of memory type mt in buf, not compound. */
static void feed_plain(XXH3_state_t *h, hid_t mt, const unsigned char *buf, size_t n)
{
    size_t sz = H5Tget_size(mt);
    if (!has_vlen(mt)) {
        put(h, buf, n * sz);
        return;
    }
    for (size_t e = 0; e < n; e++)
        hash_value(h, mt, buf + e * sz);
}

/* "<kind> [<name> ]<type> [<dims>]\n" */
static int header(walk *w, const char *kind, const char *name, hid_t ft, hid_t sp, hsize_t *dims,
                  int *rank_p)
{
    char b[MAX_DESC];
    size_t pos = 0;
    if (app(&b[0], &pos, "%s %s%s", kind, name ? name : "", name ? " " : "") ||
        desc(ft, b, &pos, 0) < 0)
        return wfail(w, "a datatype kcs cannot describe");
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    int rank = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(sp) : 0;
    if (sc == H5S_NO_CLASS || rank < 0 || rank > H5S_MAX_RANK ||
        (rank > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) < 0))
        return wfail(w, "a dataspace kcs cannot read");
    if (app(b, &pos, " %s[", sc == H5S_NULL ? "null" : ""))
        return wfail(w, "a datatype kcs cannot describe");
    for (int i = 0; i < rank; i++)
        if (app(b, &pos, "%s%llu", i ? "," : "", (unsigned long long)dims[i]))
            return wfail(w, "a dataspace kcs cannot read");
    if (app(b, &pos, "]\n"))
        return wfail(w, "a dataspace kcs cannot read");
    put(w->h, b, pos);
    *rank_p = sc == H5S_NULL ? -1 : rank;
    return 0;
}

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *ai, void *data)
{
    (void)ai;
    walk *w = data;
    if (w->skip_digest_attrs && !strncmp(name, "digest_", 7))
        return 0;
    int rc = -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_ASCEND) : -1;
    hsize_t dims[H5S_MAX_RANK];
    int rank = 0;
    unsigned char *buf = NULL;
    if (mt < 0 || sp < 0) {
        wfail(w, "attribute %s cannot be opened", name);
        goto out;
    }
    if (header(w, "attr", name, ft, sp, dims, &rank))
        goto out;
    hssize_t np = rank < 0 ? 0 : H5Sget_simple_extent_npoints(sp);
    size_t ms = H5Tget_size(mt);
    if (np < 0 || ms == 0 || (size_t)np > MAX_ATTR_BYTES / ms) {
        wfail(w, "attribute %s is larger than kcs reads", name);
        goto out;
    }
    if (np == 1 && H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0) {
        /* a damaged global heap crashes HDF5: read in a child process,
         * unless this already is the checking child (kcs_store_check_digests) */
        char *s = NULL, why[256] = "";
        if (w->direct) {
            char *v = NULL;
            if (H5Aread(a, mt, &v) < 0) {
                wfail(w, "attribute %s cannot be read", name);
                goto out;
            }
            s = strdup(v ? v : "");
            if (v)
                H5free_memory(v);
            if (!s) {
                wfail(w, "out of memory");
                goto out;
            }
        } else if (kcs_h5_read_vlen_str(a, 1, mt, MAX_ATTR_BYTES, &s, why, sizeof why) != 0) {
            wfail(w, "attribute %s: %s", name, why);
            goto out;
        }
        put_u64(w->h, strlen(s));
        put(w->h, s, strlen(s));
        free(s);
        rc = 0;
        goto out;
    }
    if (np > 0) {
        buf = calloc((size_t)np, ms);
        if (!buf || H5Aread(a, mt, buf) < 0) {
            wfail(w, "attribute %s cannot be read", name);
            goto out;
        }
        if (H5Tget_class(mt) == H5T_COMPOUND) {
            columns c;
            if (columns_init(&c, mt) || columns_feed(&c, buf, ms, (size_t)np)) {
                columns_free(&c);
                wfail(w, "attribute %s: out of memory", name);
                goto out;
            }
            columns_finish(&c, w->h);
            columns_free(&c);
        } else {
            feed_plain(w->h, mt, buf, (size_t)np);
        }
        if (has_vlen(mt))
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    }
    rc = 0;
out:
    free(buf);
    KCS_H5_CLOSE(mt, ft, sp, a);
    return rc;
}

static int hash_attrs(walk *w, hid_t obj)
{
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, w) < 0)
        return wfail(w, "its attributes cannot be read");
    return 0;
}

/* How many values a dataset's storage can hold: whole chunks stored (a
 * chunked dataset, compressed or not), else its bytes over the value size. */
static uint64_t stored_values(hid_t d, hid_t sp, size_t fsz)
{
    hid_t dcpl = H5Dget_create_plist(d);
    uint64_t held = 0;
    if (dcpl < 0)
        return 0;
    if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
        hsize_t cdims[H5S_MAX_RANK], nch = 0, per = 1;
        int nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims);
        for (int i = 0; i < nd; i++)
            per = cdims[i] && per <= UINT64_MAX / cdims[i] ? per * cdims[i] : UINT64_MAX;
        if (nd > 0 && H5Dget_num_chunks(d, sp, &nch) >= 0)
            held = nch && per > UINT64_MAX / nch ? UINT64_MAX : nch * per;
    } else {
        held = H5Dget_storage_size(d) / fsz;
    }
    H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    return held;
}

static int hash_dataset(walk *w, hid_t d)
{
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_ASCEND) : -1;
    hid_t fs = -1, ms = -1;
    unsigned char *buf = NULL;
    columns c = {0};
    int rc = -1, rank = 0, compound = 0, vlen = 0;
    hsize_t dims[H5S_MAX_RANK];
    if (mt < 0 || sp < 0) {
        wfail(w, "its type or shape cannot be read");
        goto out;
    }
    if (header(w, "dataset", NULL, ft, sp, dims, &rank) || hash_attrs(w, d))
        goto out;
    put(w->h, "data\n", 5);
    if (rank < 0) { /* a null dataspace holds nothing */
        rc = 0;
        goto out;
    }
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    size_t msz = H5Tget_size(mt), fsz = H5Tget_size(ft);
    vlen = has_vlen(mt);
    compound = H5Tget_class(mt) == H5T_COMPOUND;
    if (np < 0 || msz == 0 || fsz == 0) {
        wfail(w, "its shape cannot be read");
        goto out;
    }
    if (np == 0) {
        rc = 0;
        goto out;
    }
    if (!vlen && stored_values(d, sp, fsz) < (uint64_t)np) {
        /* a forged shape must not make kcs read (and hash) data that is not there */
        wfail(w, "declares %lld values but stores fewer (damaged or forged)", (long long)np);
        goto out;
    }
    hsize_t rows = rank == 0 ? 1 : dims[0], row_elems = 1;
    for (int i = 1; i < rank; i++) {
        if (dims[i] && row_elems > (hsize_t)MAX_ROW_BYTES / dims[i]) {
            wfail(w, "a row larger than kcs reads");
            goto out;
        }
        row_elems *= dims[i];
    }
    if (row_elems > MAX_ROW_BYTES / msz) {
        wfail(w, "a row larger than kcs reads");
        goto out;
    }
    size_t row_bytes = (size_t)row_elems * msz;
    hsize_t block = BLOCK_BYTES / row_bytes ? BLOCK_BYTES / row_bytes : 1;
    if (block > rows)
        block = rows;
    buf = malloc((size_t)block * row_bytes);
    if (!buf || (compound && columns_init(&c, mt))) {
        wfail(w, "out of memory");
        goto out;
    }
    fs = H5Dget_space(d);
    for (hsize_t first = 0; first < rows; first += block) {
        hsize_t nb = rows - first < block ? rows - first : block;
        hsize_t n = nb * row_elems;
        hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
        start[0] = first;
        count[0] = nb;
        for (int i = 1; i < rank; i++)
            count[i] = dims[i];
        memset(buf, 0, (size_t)n * msz);
        if (ms >= 0)
            H5Sclose(ms);
        ms = H5Screate_simple(1, &n, NULL);
        if (ms < 0 || (rank > 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count,
                                                       NULL) < 0)) {
            wfail(w, "cannot select its values");
            goto out;
        }
        if (H5Dread(d, mt, ms, fs, H5P_DEFAULT, buf) < 0) {
            char h5[256] = "";
            kcs_error e = {0};
            kcs_h5_fail(&e, KCS_E_INVAL, "", NULL, "x"); /* the innermost HDF5 message */
            const char *m = strstr(e.msg, "(HDF5: ");
            snprintf(h5, sizeof h5, "%s", m ? m : "");
            wfail(w, "values [%llu, %llu) cannot be read %s", (unsigned long long)first,
                  (unsigned long long)(first + nb), h5);
            goto out;
        }
        if (compound) {
            if (columns_feed(&c, buf, msz, (size_t)n)) {
                wfail(w, "out of memory");
                goto out;
            }
        } else {
            feed_plain(w->h, mt, buf, (size_t)n);
        }
        if (vlen)
            H5Dvlen_reclaim(mt, ms, H5P_DEFAULT, buf);
    }
    if (compound)
        columns_finish(&c, w->h);
    rc = 0;
out:
    columns_free(&c);
    free(buf);
    KCS_H5_CLOSE(ms, fs, mt, ft, sp);
    return rc;
}

static int hash_object(walk *w, hid_t loc, const char *name);

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    walk *w = data;
    put(w->h, "link ", 5);
    put(w->h, name, strlen(name));
    put(w->h, "\n", 1);
    if (info->type == H5L_TYPE_HARD)
        return hash_object(w, g, name) ? -1 : 0;
    size_t n = info->u.val_size;
    if (n > 65536)
        return wfail(w, "link %s: a link value of %zu bytes", name, n);
    char *v = calloc(n + 1, 1);
    if (!v || H5Lget_val(g, name, v, n, H5P_DEFAULT) < 0) {
        free(v);
        return wfail(w, "link %s cannot be read", name);
    }
    put(w->h, info->type == H5L_TYPE_SOFT ? "soft " : "external ", info->type == H5L_TYPE_SOFT ? 5 : 9);
    put_u64(w->h, n);
    put(w->h, v, n);
    free(v);
    return 0;
}

static int hash_object(walk *w, hid_t loc, const char *name)
{
    if (++w->n_objects > MAX_OBJECTS || w->depth >= MAX_DEPTH)
        return wfail(w, "more than %d objects or %d levels (a loop of links?)", MAX_OBJECTS,
                     MAX_DEPTH);
    hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
    if (o < 0)
        return wfail(w, "%s cannot be opened", name);
    int rc = 0;
    w->depth++;
    switch (H5Iget_type(o)) {
    case H5I_GROUP: {
        put(w->h, "group\n", 6);
        hsize_t idx = 0;
        if (!(rc = hash_attrs(w, o)) &&
            H5Literate(o, H5_INDEX_NAME, H5_ITER_INC, &idx, link_cb, w) < 0)
            rc = wfail(w, "the group %s cannot be listed", name);
        break;
    }
    case H5I_DATASET:
        rc = hash_dataset(w, o);
        break;
    case H5I_DATATYPE: {
        char b[MAX_DESC];
        size_t pos = 0;
        if (app(b, &pos, "datatype ") || desc(o, b, &pos, 0) < 0)
            rc = wfail(w, "a datatype kcs cannot describe");
        else
            put(w->h, b, pos);
        break;
    }
    default:
        rc = wfail(w, "%s is not a group, dataset or datatype", name);
    }
    w->depth--;
    H5Oclose(o);
    return rc;
}

static int digest_walk(hid_t file, const char *obj, int root_attrs, int direct, uint64_t *out,
                       char *why, size_t why_len)
{
    why[0] = '\0';
    walk w = {XXH3_createState(), why, why_len, 0, 0, root_attrs, direct};
    if (!w.h) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    XXH3_64bits_reset(w.h);
    int rc;
    if (root_attrs) {
        put(w.h, "root\n", 5);
        rc = hash_attrs(&w, file);
    } else {
        H5L_info_t li;
        if (H5Lget_info(file, obj, &li, H5P_DEFAULT) < 0)
            rc = wfail(&w, "missing");
        else if (li.type != H5L_TYPE_HARD)
            rc = wfail(&w, "a link to elsewhere, not an object of the file");
        else
            rc = hash_object(&w, file, obj);
    }
    if (!rc)
        *out = (uint64_t)XXH3_64bits_digest(w.h);
    XXH3_freeState(w.h);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

int kcs_h5_digest(hid_t file, const char *obj, int root_attrs, uint64_t *out, char *why,
                  size_t why_len)
{
    return digest_walk(file, obj, root_attrs, 0, out, why, why_len);
}

/* The digests of the objects want[] names (index KCS_RAW_N: the root's
 * attributes), computed in one child process outside MPI: a damaged file
 * that crashes HDF5, makes it loop or allocate without bound ends the
 * child (signal, time or address-space limit), not the reader. */
typedef struct one_digest {
    int32_t rc;
    uint64_t value;
    char why[480];
} one_digest;

static void compute(hid_t file, const int *want, int direct, one_digest *res)
{
    for (int i = 0; i <= KCS_RAW_N; i++) {
        memset(&res[i], 0, sizeof res[i]);
        if (want[i])
            res[i].rc = digest_walk(file, i < KCS_RAW_N ? kcs_raw_objects[i] : "/",
                                    i == KCS_RAW_N, direct, &res[i].value, res[i].why,
                                    sizeof res[i].why);
    }
}

static rlim_t vsize_now(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

static int compute_isolated(hid_t file, const char *path, const int *want, one_digest *res,
                            char *why, size_t why_len)
{
    int mpi = 0;
    MPI_Initialized(&mpi);
    if (mpi) { /* fork is unsafe under some interconnects; the run reads its own file */
        compute(file, want, 0, res);
        return 0;
    }
    struct stat st;
    double limit_s = 60.0 + (stat(path, &st) == 0 ? (double)st.st_size / 20e6 : 0.0);
    int p[2];
    if (pipe(p) != 0) {
        snprintf(why, why_len, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    rlim_t as = vsize_now() + ((rlim_t)1 << 30);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        snprintf(why, why_len, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(1);
        alarm((unsigned)limit_s + 5);
        struct rlimit rl = {as, as}, core = {0, 0};
        setrlimit(RLIMIT_AS, &rl);
        setrlimit(RLIMIT_CORE, &core);
        one_digest out[KCS_RAW_N + 1];
        compute(file, want, 1, out);
        kcs_fd_write_all(p[1], out, sizeof out);
        _exit(0);
    }
    close(p[1]);
    int r = kcs_fd_read_all(p[0], res, sizeof(one_digest) * (KCS_RAW_N + 1),
                            kcs_fd_now() + limit_s);
    close(p[0]);
    if (r != 0)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return 0;
    if (r == -2)
        snprintf(why, why_len, "HDF5 did not finish reading it in %.0f s (damaged file)", limit_s);
    else if (WIFSIGNALED(status))
        snprintf(why, why_len, "HDF5 died of signal %d reading it (damaged file)",
                 WTERMSIG(status));
    else
        snprintf(why, why_len, "cannot be read (damaged file, or out of memory)");
    return -1;
}

static void attr_name(const char *obj, char *buf, size_t len)
{
    snprintf(buf, len, "digest_%s", obj[0] == '/' ? obj + 1 : obj);
}

/* Reads the file its writer has just closed: variable-length strings are
 * read directly (no child process per attribute). */
int kcs_store_seal(const char *path, kcs_error *err)
{
    kcs_h5_quiet();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    int rc = 0;
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0
#if H5_VERSION_GE(1, 10, 7)
        || H5Pset_file_locking(fapl, 0, 1) < 0
#endif
    )
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot set up file access");
    else if ((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot open to write its digests");
    if (fapl >= 0)
        H5Pclose(fapl);
    for (int i = 0; i < KCS_RAW_N && !rc; i++) {
        char name[64], hex[32] = "absent", why[512];
        uint64_t dg = 0;
        attr_name(kcs_raw_objects[i], name, sizeof name);
        htri_t ex = H5Lexists(f, kcs_raw_objects[i], H5P_DEFAULT);
        if (ex < 0)
            rc = kcs_h5_fail(err, KCS_E_IO, path, kcs_raw_objects[i], "cannot look up");
        else if (ex > 0 && digest_walk(f, kcs_raw_objects[i], 0, 1, &dg, why, sizeof why))
            rc = kcs_fail(err, KCS_E_IO, "%s: %s: cannot compute its digest: %s", path,
                          kcs_raw_objects[i], why);
        else if (ex > 0)
            snprintf(hex, sizeof hex, "%016" PRIx64, dg);
        if (!rc && kcs_h5_put_str(f, name, hex) < 0)
            rc = kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attribute %s", name);
    }
    if (!rc && kcs_h5_put_str(f, "digest_method", KCS_DIGEST_METHOD) < 0)
        rc = kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attribute digest_method");
    if (!rc) {
        char why[512], hex[32];
        uint64_t dg = 0;
        if (digest_walk(f, "/", 1, 1, &dg, why, sizeof why))
            rc = kcs_fail(err, KCS_E_IO, "%s: /: cannot compute the digest of its attributes: %s",
                          path, why);
        snprintf(hex, sizeof hex, "%016" PRIx64, dg);
        if (!rc && kcs_h5_put_str(f, "digest_root", hex) < 0)
            rc = kcs_h5_fail(err, KCS_E_IO, path, "/", "cannot write attribute digest_root");
    }
    if (f >= 0 && H5Fclose(f) < 0 && !rc)
        rc = kcs_h5_fail(err, KCS_E_IO, path, NULL, "cannot close after writing its digests");
    if (!rc) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot fsync after writing its digests", path);
        if (fd >= 0)
            close(fd);
    }
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* A recorded digest: "%016x", "absent", or missing (-1). */
static int recorded(hid_t file, const char *name, char *hex, size_t len)
{
    htri_t ex = H5Aexists(file, name);
    char *v = NULL;
    if (ex <= 0 || kcs_h5_get_str(file, name, &v) != 0) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    snprintf(hex, len, "%s", v);
    free(v);
    return 0;
}

int kcs_store_check_digests(hid_t file, const char *path, int *sealed_p, kcs_error *err)
{
    char hex[64], why[512];
    int present = 0;
    *sealed_p = 0;
    const char *all[KCS_RAW_N + 2];
    char names[KCS_RAW_N + 2][64];
    for (int i = 0; i < KCS_RAW_N; i++) {
        attr_name(kcs_raw_objects[i], names[i], sizeof names[i]);
        all[i] = names[i];
    }
    all[KCS_RAW_N] = "digest_root";
    all[KCS_RAW_N + 1] = "digest_method";
    for (int i = 0; i < KCS_RAW_N + 2; i++)
        present += H5Aexists(file, all[i]) > 0;
    H5Eclear2(H5E_DEFAULT);
    if (present == 0)
        return 0;
    char hexes[KCS_RAW_N + 2][64];
    for (int i = 0; i < KCS_RAW_N + 2; i++)
        if (recorded(file, all[i], hexes[i], sizeof hexes[i]))
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: /: attribute %s is missing or unreadable while other digests "
                            "are there: the file was altered after kcs sealed it",
                            path, all[i]);
    snprintf(hex, sizeof hex, "%s", hexes[KCS_RAW_N + 1]);
    if (strcmp(hex, KCS_DIGEST_METHOD))
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: /: digest_method \"%.64s\" is not the one this kcs computes (\"%s\")",
                        path, hex, KCS_DIGEST_METHOD);
    int want[KCS_RAW_N + 1];
    for (int i = 0; i <= KCS_RAW_N; i++) {
        const char *obj = i < KCS_RAW_N ? kcs_raw_objects[i] : "/";
        htri_t ex = i < KCS_RAW_N ? H5Lexists(file, obj, H5P_DEFAULT) : 1;
        H5Eclear2(H5E_DEFAULT);
        want[i] = strcmp(hexes[i], "absent") != 0;
        if (!want[i] && ex != 0)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: %s: present, but the digests say it was not written", path, obj);
        if (want[i] && ex <= 0)
            return kcs_fail(err, KCS_E_INVAL, "%s: %s: missing, but it was written (digest %.32s)",
                            path, obj, hexes[i]);
    }
    one_digest res[KCS_RAW_N + 1];
    if (compute_isolated(file, path, want, res, why, sizeof why))
        return kcs_fail(err, KCS_E_INVAL, "%s: its content digests cannot be checked: %s", path,
                        why);
    for (int i = 0; i <= KCS_RAW_N; i++) {
        const char *obj = i < KCS_RAW_N ? kcs_raw_objects[i] : "/ (root attributes)";
        char mine[32];
        if (!want[i])
            continue;
        res[i].why[sizeof res[i].why - 1] = '\0';
        if (res[i].rc)
            return kcs_fail(err, KCS_E_INVAL, "%s: %s: cannot be read to verify it: %s (damaged file)",
                            path, obj, res[i].why);
        snprintf(mine, sizeof mine, "%016" PRIx64, res[i].value);
        if (strcmp(mine, hexes[i]))
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: %s: content digest %s differs from the recorded %.32s: the raw "
                            "data was changed after kcs wrote it (damaged or edited); refused",
                            path, obj, mine, hexes[i]);
    }
    *sealed_p = 1;
    return 0;
}

int kcs_h5_check_eoa(hid_t file, const char *path, kcs_error *err)
{
    haddr_t eoa = 0;
    struct stat st;
    if (H5Fget_eoa(file, &eoa) < 0)
        return kcs_h5_fail(err, KCS_E_INVAL, path, NULL,
                           "cannot read the declared end of file (damaged superblock?)");
    if (stat(path, &st) != 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: cannot stat", path);
    if ((uint64_t)st.st_size != (uint64_t)eoa)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: the superblock declares the file ends at byte %llu but it has %lld "
                        "bytes (a damaged superblock, or a file cut or extended); refused",
                        path, (unsigned long long)eoa, (long long)st.st_size);
    return 0;
}

int kcs_h5_end_mismatch(const char *path, kcs_error *err)
{
    /* the superblock (at 0 or a power of two from 512 on): signature,
     * version, the size of offsets, then base address and end of file */
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int rc = 0;
    for (off_t at = 0; at + 64 <= st.st_size && at <= ((off_t)1 << 30); at = at ? 2 * at : 512) {
        unsigned char b[64];
        if (pread(fd, b, sizeof b, at) != (ssize_t)sizeof b)
            break;
        if (memcmp(b, sig, 8) != 0)
            continue;
        unsigned ver = b[8], osz = ver <= 1 ? b[13] : b[9];
        size_t base_at = ver == 0 ? 24 : ver == 1 ? 28 : 12;
        size_t eoa_at = base_at + 2 * (size_t)osz;
        if (osz != 8 || eoa_at + 8 > sizeof b)
            break;
        uint64_t base = 0, eoa = 0;
        for (int i = 7; i >= 0; i--) {
            base = base << 8 | b[base_at + (size_t)i];
            eoa = eoa << 8 | b[eoa_at + (size_t)i];
        }
        if (base + eoa > (uint64_t)st.st_size)
            rc = kcs_fail(err, KCS_E_INVAL,
                          "%s: cannot open: truncated file: the superblock declares the file ends "
                          "at byte %llu but it has %lld bytes (a file cut short, or a damaged "
                          "superblock); refused",
                          path, (unsigned long long)(base + eoa), (long long)st.st_size);
        else if (base + eoa < (uint64_t)st.st_size)
            rc = kcs_fail(err, KCS_E_INVAL,
                          "%s: cannot open: the superblock declares the file ends at byte %llu but "
                          "it has %lld bytes (a damaged superblock, or a file extended); refused",
                          path, (unsigned long long)(base + eoa), (long long)st.st_size);
        break;
    }
    close(fd);
    return rc;
}
