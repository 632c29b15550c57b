/* Building a kcs dataset from a recipe (h5read_recipe.h) with the HDF5
 * API. Nothing here may abort on an HDF5 refusal: an object HDF5 will not
 * create is simply missing from the file. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5read_recipe.h"
#include "store.h"
#include "store_h5.h"
#include "store_read.h"

#define MAX_PATHS 32

typedef struct build {
    const h5r_recipe *rc;
    const char *path;
    hid_t file;
    char flippable[MAX_PATHS][96]; /* datasets without variable-length data */
    int n_flippable;
} build;

void h5r_default(h5r_recipe *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->n_ranks = 2;
    rc->n_cases = 2;
    rc->max_trials = 2;
    rc->n_samples = 3;
    rc->n_contracts = 2;
}

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

static void note_flippable(build *b, const char *obj)
{
    if (b->n_flippable < MAX_PATHS)
        snprintf(b->flippable[b->n_flippable++], sizeof b->flippable[0], "%s", obj);
}

/* --- root attributes ----------------------------------------------------- */

static void put_spec_attr(hid_t loc, const char *name, const h5r_attr_spec *a)
{
    hid_t sp = -1, t = -1, at = -1;
    const void *buf = NULL;
    char *s = NULL;
    int64_t arr[2] = {a->ival, a->ival};
    double dv = (double)a->ival;
    switch (a->kind) {
    case H5R_AK_INT: {
        static const hid_t *const types[2][4] = {
            {&H5T_NATIVE_INT8_g, &H5T_NATIVE_INT16_g, &H5T_NATIVE_INT32_g, &H5T_NATIVE_INT64_g},
            {&H5T_NATIVE_UINT8_g, &H5T_NATIVE_UINT16_g, &H5T_NATIVE_UINT32_g,
             &H5T_NATIVE_UINT64_g}};
        int w = a->width == 1 ? 0 : a->width == 2 ? 1 : a->width == 4 ? 2 : 3;
        H5open();
        t = H5Tcopy(*types[a->is_unsigned ? 1 : 0][w]);
        sp = H5Screate(H5S_SCALAR);
        buf = &a->ival; /* converted (clipped) from int64 by HDF5 */
        break;
    }
    case H5R_AK_STR: {
        size_t tl = strlen(a->text), n = a->str_len;
        s = malloc(n + 1);
        if (!s)
            return;
        for (size_t i = 0; i < n; i++)
            s[i] = tl ? a->text[i % tl] : 'x';
        s[n] = '\0';
        t = H5Tcopy(H5T_C_S1);
        if (a->str_pad == 0) {
            H5Tset_size(t, H5T_VARIABLE);
        } else {
            H5Tset_size(t, n ? n : 1);
            H5Tset_strpad(t, a->str_pad == 1   ? H5T_STR_NULLTERM
                             : a->str_pad == 2 ? H5T_STR_NULLPAD
                                               : H5T_STR_SPACEPAD);
        }
        sp = H5Screate(H5S_SCALAR);
        break;
    }
    case H5R_AK_FLOAT:
        t = H5Tcopy(H5T_NATIVE_DOUBLE);
        sp = H5Screate(H5S_SCALAR);
        buf = &dv;
        break;
    case H5R_AK_ARRAY: {
        hsize_t two = 2;
        t = H5Tcopy(H5T_NATIVE_INT64);
        sp = H5Screate_simple(1, &two, NULL);
        buf = arr;
        break;
    }
    case H5R_AK_NULLSPACE:
        t = H5Tcopy(H5T_NATIVE_INT32);
        sp = H5Screate(H5S_NULL);
        break;
    case H5R_AK_EMPTY: {
        hsize_t zero = 0;
        t = H5Tcopy(H5T_NATIVE_INT32);
        sp = H5Screate_simple(1, &zero, NULL);
        break;
    }
    default: return;
    }
    if (t >= 0 && sp >= 0)
        at = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (at >= 0) {
        if (a->kind == H5R_AK_STR) {
            const char *p = s;
            H5Awrite(at, t, a->str_pad == 0 ? (const void *)&p : (const void *)s);
        } else if (a->kind == H5R_AK_INT || a->kind == H5R_AK_ARRAY) {
            H5Awrite(at, H5T_NATIVE_INT64, buf);
        } else if (buf) {
            H5Awrite(at, t, buf);
        }
        H5Aclose(at);
    }
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    free(s);
}

static void root_attrs(build *b)
{
    static const char *const names[H5R_N_ATTRS] = {
        "schema",    "schema_version", "software",     "software_version", "git_hash",
        "created",   "study_name",     "plan_hash",    "command_line",     "n_ranks",
        "n_cases",   "complete",       "max_trials",   "n_samples"};
    static const char *const strs[] = {"kcs",  "kcs",  "kcs", "0.1.0", "0123abc", "2025-01-01T00:00:00Z",
                                       "fuzz", "00000000000000ff", "kcs run fuzz.yaml"};
    const h5r_recipe *rc = b->rc;
    int64_t ints[H5R_N_ATTRS] = {0};
    ints[H5R_A_SCHEMA_VERSION] = KCS_SCHEMA_VERSION;
    ints[H5R_A_N_RANKS] = rc->n_ranks;
    ints[H5R_A_N_CASES] = rc->n_cases;
    ints[H5R_A_COMPLETE] = 1;
    ints[H5R_A_MAX_TRIALS] = rc->max_trials;
    ints[H5R_A_N_SAMPLES] = rc->n_samples;
    for (int i = 0; i < H5R_N_ATTRS; i++) {
        const h5r_attr_spec *a = &rc->attr[i];
        if (a->kind == H5R_AK_ABSENT)
            continue;
        if (a->kind != H5R_AK_VALID)
            put_spec_attr(b->file, names[i], a);
        else if (i == H5R_A_N_CASES)
            kcs_h5_put_i64(b->file, names[i], ints[i]);
        else if (i == H5R_A_SCHEMA_VERSION || i >= H5R_A_N_RANKS)
            kcs_h5_put_i32(b->file, names[i], (int32_t)ints[i]);
        else
            kcs_h5_put_str(b->file, names[i], strs[i]);
    }
    if (rc->extras & H5R_X_MANY_ATTRS)
        for (int i = 0; i < 12; i++) {
            char n[32];
            snprintf(n, sizeof n, "extra_%02d", i);
            kcs_h5_put_i64(b->file, n, i);
        }
}

/* --- tables -------------------------------------------------------------- */

static const char *const table_path[H5R_N_TABLES] = {"/cases", "/results", "/provenance/ranks"};

static void valid_row(int table, const h5r_recipe *rc, uint64_t i, void *rec)
{
    if (table == H5R_CASES) {
        kcs_case_rec *c = rec;
        memset(c, 0, sizeof *c);
        c->case_id = 100 + 7 * (int64_t)i;
        snprintf(c->contract, sizeof c->contract, "C-ORD-%02d", (int)(i % 3));
        strcpy(c->op, "gemm");
        strcpy(c->variant, "ref");
        strcpy(c->dtype_in, "f32");
        strcpy(c->dtype_acc, "f32");
        strcpy(c->dtype_out, "f32");
        c->m = c->n = c->k = 8;
        c->batch = 1;
        strcpy(c->input_dist, "normal");
        c->seed = 42 + i;
        c->input_digest = 0x1234 + i;
        c->trials = rc->max_trials;
    } else if (table == H5R_RESULTS) {
        kcs_result_rec *r = rec;
        memset(r, 0, sizeof *r);
        uint64_t per_case = (uint64_t)rc->n_ranks * (uint64_t)rc->max_trials;
        uint64_t c = per_case ? i / per_case : 0, k = per_case ? i % per_case : 0;
        r->case_id = 100 + 7 * (int64_t)c;
        r->rank = rc->max_trials ? (int32_t)(k / (uint64_t)rc->max_trials) : 0;
        r->trial = rc->max_trials ? (int32_t)(k % (uint64_t)rc->max_trials) : 0;
        strcpy(r->status, "ok");
        r->output_digest = 0xabc0 + i;
        r->tau = 0.5 * (double)(r->trial + 1);
        r->eta = 1.0 / 1048576.0;
        r->max_abs = r->max_rel = r->max_ulp = r->mean_ulp = 1.0;
        r->backward_err = r->max_scaled = 0.25;
        r->effective_acc_bits = 23.0;
        r->guard_ok = 1;
        r->time_ns = 1000;
        strcpy(r->verdict, "within");
        strcpy(r->signature, "");
    } else {
        kcs_rank_rec *k = rec;
        memset(k, 0, sizeof *k);
        k->rank = (int32_t)i;
        snprintf(k->host, sizeof k->host, "node%u", (unsigned)(i % 1000));
        strcpy(k->backend, "cpu");
        strcpy(k->vendor, "fuzz");
        strcpy(k->model, "model");
        strcpy(k->status, "ok");
    }
}

static const kcs_field *fields_of(int table, int *nf, size_t *rec_size)
{
    if (table == H5R_CASES) {
        *rec_size = sizeof(kcs_case_rec);
        return kcs_store_case_fields(nf);
    }
    if (table == H5R_RESULTS) {
        *rec_size = sizeof(kcs_result_rec);
        return kcs_store_result_fields(nf);
    }
    *rec_size = sizeof(kcs_rank_rec);
    return kcs_store_rank_fields(nf);
}

typedef struct member {
    char name[80];
    hid_t type;
    int op;
    const kcs_field *f; /* NULL: an extra member */
    size_t off;
} member;

static hid_t native_for(const kcs_field *f)
{
    switch (f->kind) {
    case KCS_FIELD_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case KCS_FIELD_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case KCS_FIELD_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case KCS_FIELD_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case KCS_FIELD_STR: return kcs_h5_str_type(f->size, H5T_STR_NULLTERM);
    }
    return -1;
}

static hid_t member_type(int op, unsigned arg, const kcs_field *f)
{
    hid_t t = -1;
    switch (op) {
    case H5R_MT_I8: return H5Tcopy(H5T_NATIVE_INT8);
    case H5R_MT_U16: return H5Tcopy(H5T_NATIVE_UINT16);
    case H5R_MT_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case H5R_MT_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case H5R_MT_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case H5R_MT_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case H5R_MT_F32: return H5Tcopy(H5T_NATIVE_FLOAT);
    case H5R_MT_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case H5R_MT_LDOUBLE: return H5Tcopy(H5T_NATIVE_LDOUBLE);
    case H5R_MT_STR: return kcs_h5_str_type(1 + arg % 300, arg & 1 ? H5T_STR_NULLPAD : H5T_STR_NULLTERM);
    case H5R_MT_VSTR:
        t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        return t;
    case H5R_MT_OPAQUE:
        t = H5Tcreate(H5T_OPAQUE, 8);
        H5Tset_tag(t, "fuzz");
        return t;
    case H5R_MT_ENUM: {
        t = H5Tenum_create(H5T_NATIVE_INT32);
        int32_t a = 0, b = 1;
        H5Tenum_insert(t, "NO", &a);
        H5Tenum_insert(t, "YES", &b);
        return t;
    }
    case H5R_MT_ARRAY: {
        hsize_t two = 2;
        return H5Tarray_create2(H5T_NATIVE_INT32, 1, &two);
    }
    case H5R_MT_BITFIELD: return H5Tcopy(H5T_NATIVE_B32);
    case H5R_MT_NESTED:
        t = H5Tcreate(H5T_COMPOUND, 8);
        H5Tinsert(t, "v", 0, H5T_NATIVE_INT64);
        return t;
    default: return native_for(f);
    }
}

/* The file type of a table; fills m[] (the caller closes m[i].type). */
static hid_t table_type(const h5r_table_spec *ts, int table, member *m, int *nm_p)
{
    if (ts->base == 1)
        return H5Tcopy(H5T_NATIVE_INT64);
    if (ts->base == 2)
        return kcs_h5_str_type(16, H5T_STR_NULLTERM);
    if (ts->base == 3)
        return H5Tcopy(H5T_NATIVE_DOUBLE);
    int nf, nm = 0;
    size_t rs;
    const kcs_field *f = fields_of(table, &nf, &rs);
    for (int j = 0; j < nf && j < H5R_MAX_FIELDS; j++) {
        int i = ts->reverse ? nf - 1 - j : j;
        int op = ts->mop[i] % H5R_MT_N;
        if (op == H5R_MT_DROP)
            continue;
        member *x = &m[nm];
        x->f = &f[i];
        x->op = op;
        if (op == H5R_MT_RENAME)
            snprintf(x->name, sizeof x->name, ts->marg[i] & 1 ? "%s " : "%s_v2", f[i].name);
        else
            snprintf(x->name, sizeof x->name, "%s", f[i].name);
        x->type = member_type(op, ts->marg[i], &f[i]);
        if (x->type >= 0)
            nm++;
    }
    if (ts->extra_member) {
        member *x = &m[nm];
        x->f = NULL;
        x->op = ts->extra_member == 1 ? H5R_MT_I64 : H5R_MT_STR;
        snprintf(x->name, sizeof x->name, "%s", ts->extra_member == 1 ? "future_count" : "note");
        x->type = member_type(x->op, 40, NULL);
        if (x->type >= 0)
            nm++;
    }
    size_t size = 0;
    for (int i = 0; i < nm; i++) {
        m[i].off = size;
        size += H5Tget_size(m[i].type);
    }
    *nm_p = nm;
    hid_t t = H5Tcreate(H5T_COMPOUND, size ? size : 1);
    for (int i = 0; t >= 0 && i < nm; i++)
        H5Tinsert(t, m[i].name, m[i].off, m[i].type); /* a refusal leaves the member out */
    return t;
}

static const char *const vstr_pool[] = {"ok", "", "within", "a somewhat longer string value"};

/* Rows [0, n) of a table in its file layout. */
static unsigned char *table_rows(const build *b, const h5r_table_spec *ts, int table, hid_t t,
                                 const member *m, int nm, uint64_t n)
{
    size_t tsize = H5Tget_size(t), rs;
    int nf;
    (void)fields_of(table, &nf, &rs);
    unsigned char *buf = calloc((size_t)n ? (size_t)n : 1, tsize);
    unsigned char *rec = calloc(1, rs);
    if (!buf || !rec) {
        free(buf);
        free(rec);
        return NULL;
    }
    if (ts->base != 0) {
        pattern(buf, (size_t)n * tsize, ts->seed);
        free(rec);
        return buf;
    }
    for (uint64_t r = 0; r < n; r++) {
        valid_row(table, b->rc, r, rec);
        if (ts->bad_ids) /* the first fields are the ids */
            pattern(rec, 16, ts->seed + (unsigned)r);
        unsigned char *row = buf + r * tsize;
        for (int i = 0; i < nm; i++) {
            unsigned char *dst = row + m[i].off;
            size_t sz = H5Tget_size(m[i].type);
            const kcs_field *f = m[i].f;
            if (m[i].op == H5R_MT_VSTR) {
                const char *s = vstr_pool[(r + (uint64_t)i) % 4];
                memcpy(dst, &s, sizeof s);
            } else if (f && (m[i].op == H5R_MT_KEEP || m[i].op == H5R_MT_RENAME)) {
                memcpy(dst, rec + f->offset, sz < f->size ? sz : f->size);
                if (ts->str_fill && f->kind == KCS_FIELD_STR)
                    memset(dst, 'A', sz);
            } else if (f && m[i].op == H5R_MT_STR && f->kind == KCS_FIELD_STR) {
                memset(dst, ts->str_fill ? 'B' : 0, sz);
                if (!ts->str_fill) {
                    size_t l = strnlen((const char *)rec + f->offset, f->size);
                    memcpy(dst, rec + f->offset, l < sz ? l : sz);
                }
            } else {
                pattern(dst, sz, ts->seed + (unsigned)(r * 31 + (uint64_t)i));
            }
        }
    }
    free(rec);
    return buf;
}

/* Whether a type holds variable-length data (its raw bytes are heap ids:
 * HDF5 metadata in all but name, so never flipped). */
static int has_vlen(hid_t t)
{
    if (H5Tis_variable_str(t) > 0 || H5Tdetect_class(t, H5T_VLEN) > 0)
        return 1;
    if (H5Tget_class(t) != H5T_COMPOUND)
        return 0;
    int n = H5Tget_nmembers(t), v = 0;
    for (int i = 0; i < n && !v; i++) {
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        v = mt >= 0 && has_vlen(mt);
        if (mt >= 0)
            H5Tclose(mt);
    }
    return v;
}

/* A dataset at obj: rank -1 a null dataspace, 0 scalar, else dims[rank].
 * When HDF5 refuses the layout asked for, its default layout is tried. */
static hid_t make_dset(build *b, const char *obj, hid_t t, int rank, const hsize_t *dims, int layout,
                       uint64_t chunk)
{
    hsize_t maxd[3];
    for (int i = 0; i < rank && i < 3; i++)
        maxd[i] = layout == H5R_L_UNLIMITED ? H5S_UNLIMITED : dims[i];
    hid_t sp = rank < 0 ? H5Screate(H5S_NULL)
               : rank == 0 ? H5Screate(H5S_SCALAR)
                           : H5Screate_simple(rank, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (sp < 0 || dcpl < 0)
        goto out;
    if (rank > 0 && (layout == H5R_L_CHUNKED || layout == H5R_L_DEFLATE ||
                     layout == H5R_L_UNLIMITED)) {
        hsize_t cd[3];
        uint64_t elems = 1;
        for (int i = 1; i < rank; i++) {
            cd[i] = dims[i] ? (dims[i] < 64 ? dims[i] : 64) : 1;
            elems *= cd[i];
        }
        cd[0] = chunk ? chunk : 1;
        if (layout != H5R_L_UNLIMITED && dims[0] && cd[0] > dims[0])
            cd[0] = dims[0];
        size_t ts = H5Tget_size(t);
        while (cd[0] > 1 && cd[0] * elems * ts > ((uint64_t)1 << 30))
            cd[0] /= 2;
        H5Pset_chunk(dcpl, rank, cd);
        if (layout == H5R_L_DEFLATE && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0)
            H5Pset_deflate(dcpl, 1);
    } else if (layout == H5R_L_COMPACT) {
        H5Pset_layout(dcpl, H5D_COMPACT);
    } else if (layout == H5R_L_EXTERNAL) {
        char ext[600];
        snprintf(ext, sizeof ext, "%s.ext-missing", b->path);
        H5Pset_external(dcpl, ext, 0, H5F_UNLIMITED);
    }
    hid_t d = H5Dcreate2(b->file, obj, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0 && layout != H5R_L_CONTIG) {
        H5Sclose(sp);
        sp = rank < 0 ? H5Screate(H5S_NULL)
             : rank == 0 ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(rank, dims, NULL);
        if (sp >= 0)
            d = H5Dcreate2(b->file, obj, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    return -1;
}

static int is_chunked(hid_t d)
{
    hid_t p = H5Dget_create_plist(d);
    int c = p >= 0 && H5Pget_layout(p) == H5D_CHUNKED;
    if (p >= 0)
        H5Pclose(p);
    return c;
}

/* Write elements [0, k) of a dataset of `total` elements (k < total only
 * for 1-D datasets). */
static void write_first(hid_t d, hid_t memt, int rank, uint64_t total, uint64_t k, const void *buf)
{
    if (k == 0 || !buf)
        return;
    if (k >= total) {
        H5Dwrite(d, memt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        return;
    }
    if (rank != 1)
        return;
    hsize_t start = 0, n = k;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0)
        H5Dwrite(d, memt, ms, fs, H5P_DEFAULT, buf);
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
}

static void make_table(build *b, int table)
{
    const h5r_recipe *rc = b->rc;
    const h5r_table_spec *ts = &rc->table[table];
    if (ts->kind == H5R_TK_GROUP) {
        hid_t g = H5Gcreate2(b->file, table_path[table], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g >= 0)
            H5Gclose(g);
    }
    if (ts->kind != H5R_TK_DATASET)
        return;
    uint64_t rows = ts->rows_set                ? ts->rows
                    : table == H5R_CASES        ? (uint64_t)rc->n_cases
                    : table == H5R_RANKS        ? (uint64_t)rc->n_ranks
                                                : (uint64_t)rc->n_cases * (uint64_t)rc->n_ranks *
                                           (uint64_t)rc->max_trials;
    member m[H5R_MAX_FIELDS + 1];
    int nm = 0;
    hid_t t = table_type(ts, table, m, &nm);
    int rank = ts->space == 0 ? 1 : ts->space == 1 ? 0 : ts->space == 2 ? 2 : -1;
    hsize_t dims[2] = {rows, 2};
    uint64_t elems = rank < 0 ? 0 : rank == 0 ? 1 : rank == 1 ? rows : rows > UINT64_MAX / 2 ? UINT64_MAX : rows * 2;
    hid_t d = t >= 0 ? make_dset(b, table_path[table], t, rank, dims, ts->layout, ts->chunk) : -1;
    if (d >= 0) {
        uint64_t k = ts->write == 0 ? elems : ts->write == 1 ? 0 : ts->partial;
        if (k > elems)
            k = elems;
        if (k > H5R_MAX_ROWS_WRITTEN || (elems > H5R_MAX_ROWS_WRITTEN && !is_chunked(d)) ||
            ts->layout == H5R_L_EXTERNAL)
            k = 0;
        unsigned char *buf = k ? table_rows(b, ts, table, t, m, nm, k) : NULL;
        write_first(d, t, rank, elems, k, buf);
        free(buf);
        if (!has_vlen(t) && ts->layout != H5R_L_EXTERNAL)
            note_flippable(b, table_path[table]);
        H5Dclose(d);
    }
    for (int i = 0; i < nm; i++)
        H5Tclose(m[i].type);
    if (t >= 0)
        H5Tclose(t);
}

static void make_links(build *b)
{
    for (int i = 0; i < H5R_N_TABLES; i++) {
        const char *p = table_path[i], *other = table_path[(i + 1) % H5R_N_TABLES];
        char ext[600];
        switch (b->rc->table[i].kind) {
        case H5R_TK_SOFT_OTHER: H5Lcreate_soft(other, b->file, p, H5P_DEFAULT, H5P_DEFAULT); break;
        case H5R_TK_SOFT_DANGLING:
            H5Lcreate_soft("/nowhere/at/all", b->file, p, H5P_DEFAULT, H5P_DEFAULT);
            break;
        case H5R_TK_SOFT_LOOP: H5Lcreate_soft(p, b->file, p, H5P_DEFAULT, H5P_DEFAULT); break;
        case H5R_TK_EXTERNAL:
            snprintf(ext, sizeof ext, "%s.missing.h5", b->path);
            H5Lcreate_external(ext, "/cases", b->file, p, H5P_DEFAULT, H5P_DEFAULT);
            break;
        case H5R_TK_HARD_OTHER:
            H5Lcreate_hard(b->file, other, b->file, p, H5P_DEFAULT, H5P_DEFAULT);
            break;
        default: break;
        }
    }
}

/* --- texts, samples, the rest -------------------------------------------- */

static void write_scalar_dset(build *b, const char *obj, hid_t t, int rank, const hsize_t *dims,
                              const void *buf, int flippable)
{
    hid_t d = t >= 0 ? make_dset(b, obj, t, rank, dims, H5R_L_CONTIG, 0) : -1;
    if (d < 0)
        return;
    if (buf)
        H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    if (flippable)
        note_flippable(b, obj);
    if (H5Iget_type(d) == H5I_DATASET)
        kcs_h5_put_str(d, "path", "/studies/fuzz.yaml");
    H5Dclose(d);
}

static void make_text(build *b, const char *obj, const h5r_text_spec *x, const char *text)
{
    hid_t t = -1;
    hsize_t dims[1] = {2};
    size_t n = x->len ? x->len : 1;
    char *buf = NULL;
    const char *vp = text;
    switch (x->kind % H5R_XK_N) {
    case H5R_XK_OK:
        t = kcs_h5_str_type(strlen(text), H5T_STR_NULLPAD);
        write_scalar_dset(b, obj, t, 0, NULL, text, 1);
        break;
    case H5R_XK_VLEN:
    case H5R_XK_VLEN_UNWRITTEN:
        t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        write_scalar_dset(b, obj, t, 0, NULL, x->kind == H5R_XK_VLEN ? (const void *)&vp : NULL, 0);
        break;
    case H5R_XK_DECLARED:
        t = kcs_h5_str_type(n, H5T_STR_NULLPAD);
        write_scalar_dset(b, obj, t, 0, NULL, NULL, 1);
        break;
    case H5R_XK_TWO:
        t = kcs_h5_str_type(8, H5T_STR_NULLPAD);
        write_scalar_dset(b, obj, t, 1, dims, "abcdefgh12345678", 1);
        break;
    case H5R_XK_INT: {
        int32_t v = 7;
        t = H5Tcopy(H5T_NATIVE_INT32);
        write_scalar_dset(b, obj, t, 0, NULL, &v, 1);
        break;
    }
    case H5R_XK_GROUP: {
        hid_t g = H5Gcreate2(b->file, obj, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g >= 0)
            H5Gclose(g);
        break;
    }
    case H5R_XK_SPACEPAD:
    case H5R_XK_NULLTERM_FULL:
        if (n > 65536)
            n = 65536;
        buf = malloc(n);
        if (!buf)
            break;
        memset(buf, x->kind == H5R_XK_SPACEPAD ? ' ' : 'x', n);
        if (x->kind == H5R_XK_SPACEPAD)
            memcpy(buf, text, strlen(text) < n ? strlen(text) : n);
        t = kcs_h5_str_type(n, x->kind == H5R_XK_SPACEPAD ? H5T_STR_SPACEPAD : H5T_STR_NULLTERM);
        write_scalar_dset(b, obj, t, 0, NULL, buf, 1);
        break;
    case H5R_XK_EMPTY_SPACE:
        dims[0] = 0;
        t = kcs_h5_str_type(8, H5T_STR_NULLPAD);
        write_scalar_dset(b, obj, t, 1, dims, NULL, 1);
        break;
    default: break;
    }
    free(buf);
    if (t >= 0)
        H5Tclose(t);
}

static void make_contracts(build *b)
{
    const h5r_recipe *rc = b->rc;
    if (rc->contracts_group == 1)
        return;
    if (rc->contracts_group == 2) {
        int32_t v = 1;
        hid_t t = H5Tcopy(H5T_NATIVE_INT32);
        write_scalar_dset(b, "/contracts", t, 0, NULL, &v, 1);
        H5Tclose(t);
        return;
    }
    hid_t g = H5Gcreate2(b->file, "contracts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return;
    H5Gclose(g);
    for (int i = 0; i < rc->n_contracts && i < H5R_MAX_CONTRACTS; i++) {
        char name[256], obj[300];
        switch (rc->contract[i].name % 6) {
        case 1:
            memset(name, 'C', 200);
            snprintf(name + 200, 16, "-%d", i);
            break;
        case 2: snprintf(name, sizeof name, "C ORD %d", i); break;
        case 3: snprintf(name, sizeof name, "C-\xc3\x96RD-%d", i); break;
        case 4: snprintf(name, sizeof name, i ? "..%d" : "..", i); break;
        case 5: snprintf(name, sizeof name, "-%d", i); break;
        default: snprintf(name, sizeof name, "C-ORD-%02d", i); break;
        }
        snprintf(obj, sizeof obj, "/contracts/%s", name);
        make_text(b, obj, &rc->contract[i], "id: C-ORD-01\nfamily: ordering\n");
    }
}

static void make_samples(build *b)
{
    const h5r_recipe *rc = b->rc;
    if (rc->samples_group == 1)
        return;
    if (rc->samples_group == 3) {
        H5Lcreate_soft("/cases", b->file, "/samples", H5P_DEFAULT, H5P_DEFAULT);
        return;
    }
    if (rc->samples_group == 2) {
        double v = 1.0;
        write_scalar_dset(b, "/samples", H5T_NATIVE_DOUBLE, 0, NULL, &v, 1);
        return;
    }
    hid_t g = H5Gcreate2(b->file, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return;
    H5Gclose(g);
    hsize_t nr = (hsize_t)rc->n_ranks, ns = (hsize_t)rc->n_samples;
    for (int i = 0; i < rc->n_cases && i < H5R_MAX_CASES; i++) {
        int kind = rc->sample[i] % H5R_SK_N;
        char obj[64];
        snprintf(obj, sizeof obj, "/samples/%d", 100 + 7 * i + (kind == H5R_SK_WRONG_NAME));
        hsize_t dims[3] = {nr, ns, 1};
        int rank = 2, write = 1;
        hid_t t = -1;
        switch (kind) {
        case H5R_SK_ABSENT: continue;
        case H5R_SK_GROUP: {
            hid_t sg = H5Gcreate2(b->file, obj, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (sg >= 0)
                H5Gclose(sg);
            continue;
        }
        case H5R_SK_INT: t = H5Tcopy(H5T_NATIVE_INT32); break;
        case H5R_SK_F32: t = H5Tcopy(H5T_NATIVE_FLOAT); break;
        case H5R_SK_STRING: t = kcs_h5_str_type(8, H5T_STR_NULLPAD); break;
        case H5R_SK_COMPOUND:
            t = H5Tcreate(H5T_COMPOUND, sizeof(double));
            H5Tinsert(t, "v", 0, H5T_NATIVE_DOUBLE);
            break;
        default: t = H5Tcopy(H5T_NATIVE_DOUBLE); break;
        }
        if (kind == H5R_SK_SWAPPED) {
            dims[0] = ns;
            dims[1] = nr;
        } else if (kind == H5R_SK_ONE_D) {
            rank = 1;
            dims[0] = nr * ns;
        } else if (kind == H5R_SK_THREE_D) {
            rank = 3;
        } else if (kind == H5R_SK_HUGE) {
            dims[i & 1] = (hsize_t)1 << (i & 1 ? 40 : 33);
            write = 0;
        } else if (kind == H5R_SK_ZERO) {
            dims[0] = dims[1] = 0;
        } else if (kind == H5R_SK_SCALAR) {
            rank = 0;
        } else if (kind == H5R_SK_UNWRITTEN) {
            write = 0;
        }
        uint64_t elems = 1;
        for (int k = 0; k < rank; k++)
            elems *= dims[k];
        double vals[64];
        unsigned char raw[64 * 8];
        const void *buf = NULL;
        if (write && elems <= 64) {
            if (H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == sizeof(double)) {
                for (uint64_t k = 0; k < elems; k++)
                    vals[k] = k % 5 == 4 ? NAN : (double)i + 0.25 * (double)k;
                buf = vals;
            } else {
                pattern(raw, sizeof raw, (unsigned)i);
                buf = raw;
            }
        }
        hid_t d = t >= 0 ? make_dset(b, obj, t, rank, dims, H5R_L_CONTIG, 0) : -1;
        if (d >= 0) {
            if (buf && elems > 0)
                H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            note_flippable(b, obj);
            H5Dclose(d);
        }
        if (t >= 0)
            H5Tclose(t);
    }
}

static void make_provenance(build *b)
{
    if (b->rc->extras & H5R_X_PROV_DATASET) {
        int32_t v = 0;
        write_scalar_dset(b, "/provenance", H5T_NATIVE_INT32, 0, NULL, &v, 1);
        return;
    }
    hid_t g = H5Gcreate2(b->file, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return;
    if (!(b->rc->extras & H5R_X_NO_BUILD)) {
        hid_t bg = H5Gcreate2(g, "build", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (bg >= 0) {
            kcs_h5_put_str(bg, "compiler", "cc");
            kcs_h5_put_str(bg, "hdf5", "1.10.8");
            kcs_h5_put_str(bg, "backends", "cpu");
            H5Gclose(bg);
        }
    }
    H5Gclose(g);
}

static void make_extras(build *b)
{
    unsigned x = b->rc->extras;
    if (x & (H5R_X_ANALYSIS | H5R_X_OUTPUTS)) {
        const char *grp = x & H5R_X_ANALYSIS ? "/analysis" : "/outputs";
        hid_t g = H5Gcreate2(b->file, grp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g >= 0)
            H5Gclose(g);
        hsize_t dims[2] = {2, 3};
        double v[6] = {1, 2, 3, 4, 5, 6};
        char obj[64];
        snprintf(obj, sizeof obj, "%s/100", grp);
        hid_t d = make_dset(b, obj, H5T_NATIVE_DOUBLE, 2, dims, H5R_L_DEFLATE, 1);
        if (d >= 0) {
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            H5Dclose(d);
        }
    }
}

/* Byte flips inside the raw data of contiguous datasets, then a cut. */
static void corrupt(build *b)
{
    const h5r_recipe *rc = b->rc;
    if (rc->n_flips > 0 && b->n_flippable > 0) {
        struct {
            uint64_t off, size;
        } reg[MAX_PATHS];
        int nreg = 0;
        hid_t f = H5Fopen(b->path, H5F_ACC_RDONLY, H5P_DEFAULT);
        for (int i = 0; f >= 0 && i < b->n_flippable; i++) {
            hid_t d = H5Dopen2(f, b->flippable[i], H5P_DEFAULT);
            if (d < 0)
                continue;
            haddr_t a = H5Dget_offset(d);
            hsize_t s = H5Dget_storage_size(d);
            if (a != HADDR_UNDEF && s > 0) {
                reg[nreg].off = a;
                reg[nreg++].size = s;
            }
            H5Dclose(d);
        }
        if (f >= 0)
            H5Fclose(f);
        int fd = nreg ? open(b->path, O_RDWR) : -1;
        for (int i = 0; fd >= 0 && i < rc->n_flips && i < H5R_MAX_FLIPS; i++) {
            const h5r_flip *fl = &rc->flip[i];
            off_t at = (off_t)(reg[fl->region % nreg].off + fl->offset % reg[fl->region % nreg].size);
            unsigned char c;
            if (pread(fd, &c, 1, at) == 1) {
                c ^= fl->xor_mask ? fl->xor_mask : 0xff;
                if (pwrite(fd, &c, 1, at) != 1)
                    break;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    struct stat st;
    if (rc->truncate && stat(b->path, &st) == 0)
        if (truncate(b->path, (off_t)((uint64_t)st.st_size * rc->truncate / 65536u)) != 0)
            perror("truncate");
    H5Eclear2(H5E_DEFAULT);
}

int h5r_build(const h5r_recipe *rc, const char *path)
{
    build b;
    memset(&b, 0, sizeof b);
    b.rc = rc;
    b.path = path;
    unlink(path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && rc->libver_latest)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    b.file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (b.file < 0) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    root_attrs(&b);
    make_provenance(&b);
    make_table(&b, H5R_RANKS);
    make_text(&b, "/study", &rc->study, "name: fuzz\ncontracts: [C-ORD-01]\n");
    make_contracts(&b);
    make_table(&b, H5R_CASES);
    make_table(&b, H5R_RESULTS);
    make_samples(&b);
    make_links(&b);
    make_extras(&b);
    H5Fclose(b.file);
    corrupt(&b);
    return 0;
}
