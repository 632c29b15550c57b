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
