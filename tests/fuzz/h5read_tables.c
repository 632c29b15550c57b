/* The three tables of a recipe's file (/cases, /results,
 * /provenance/ranks): their compound types with members dropped, renamed
 * or retyped, their shapes and layouts, the rows written, and the links
 * that may stand in their place. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5read_build.h"
#include "store.h"
#include "store_h5.h"
#include "store_read.h"

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
    case H5R_MT_STR:
        return kcs_h5_str_type(1 + arg % 300, arg & 1 ? H5T_STR_NULLPAD : H5T_STR_NULLTERM);
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
    const char *names[H5R_MAX_FIELDS];
    for (int i = 0; i < nf && i < H5R_MAX_FIELDS; i++)
        names[i] = f[i].name;
    for (int i = 0; i < nf && i < H5R_MAX_FIELDS; i++)
        if (ts->mop[i] % H5R_MT_N == H5R_MT_SWAP && nf > 1) {
            int k = (i + 1 + ts->marg[i] % (nf - 1)) % nf;
            const char *n = names[i];
            names[i] = names[k];
            names[k] = n;
        }
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
            snprintf(x->name, sizeof x->name, "%s", names[i]);
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
    /* untouched: the writer's type (the C layout, read without conversion) */
    int pristine = !ts->reverse && !ts->extra_member;
    for (int i = 0; i < nf && i < H5R_MAX_FIELDS; i++)
        pristine = pristine && ts->mop[i] % H5R_MT_N == H5R_MT_KEEP;
    size_t size = 0;
    for (int i = 0; i < nm; i++) {
        m[i].off = pristine ? m[i].f->offset : size;
        size += H5Tget_size(m[i].type);
    }
    if (pristine)
        size = rs;
    *nm_p = nm;
    hid_t t = H5Tcreate(H5T_COMPOUND, size ? size : 1);
    for (int i = 0; t >= 0 && i < nm; i++)
        H5Tinsert(t, m[i].name, m[i].off, m[i].type); /* a refusal leaves the member out */
    return t;
}

static const char *const vstr_pool[] = {"ok", "", "within", "a somewhat longer string value"};

/* Rows [0, n) of a table in its file layout. */
static unsigned char *table_rows(const h5r_builder *b, const h5r_table_spec *ts, int table, hid_t t,
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
        h5r_pattern(buf, (size_t)n * tsize, ts->seed);
        free(rec);
        return buf;
    }
    for (uint64_t r = 0; r < n; r++) {
        valid_row(table, b->rc, r, rec);
        if (ts->bad_ids) /* the first fields are the ids */
            h5r_pattern(rec, 16, ts->seed + (unsigned)r);
        unsigned char *row = buf + r * tsize;
        for (int i = 0; i < nm; i++) {
            unsigned char *dst = row + m[i].off;
            size_t sz = H5Tget_size(m[i].type);
            const kcs_field *f = m[i].f;
            if (m[i].op == H5R_MT_VSTR) {
                const char *s = vstr_pool[(r + (uint64_t)i) % 4];
                memcpy(dst, &s, sizeof s);
            } else if (f && (m[i].op == H5R_MT_KEEP || m[i].op == H5R_MT_RENAME ||
                             m[i].op == H5R_MT_SWAP)) {
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
                h5r_pattern(dst, sz, ts->seed + (unsigned)(r * 31 + (uint64_t)i));
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
hid_t h5r_make_dset(h5r_builder *b, const char *obj, hid_t t, int rank, const hsize_t *dims,
                    int layout, uint64_t chunk)
{
    hsize_t maxd[3];
    for (int i = 0; i < rank && i < 3; i++)
        maxd[i] = layout == H5R_L_UNLIMITED ? H5S_UNLIMITED : dims[i];
    hid_t sp = rank < 0    ? H5Screate(H5S_NULL)
               : rank == 0 ? H5Screate(H5S_SCALAR)
                           : H5Screate_simple(rank, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (sp < 0 || dcpl < 0)
        goto out;
    if (rank > 0 &&
        (layout == H5R_L_CHUNKED || layout == H5R_L_DEFLATE || layout == H5R_L_UNLIMITED)) {
        hsize_t cd[3];
        uint64_t elems = 1;
        for (int i = 1; i < rank; i++) {
            cd[i] = dims[i] ? (dims[i] < 64 ? dims[i] : 64) : 1;
            elems *= cd[i];
        }
        cd[0] = chunk ? chunk : 1;
        if (layout != H5R_L_UNLIMITED && dims[0] && cd[0] > dims[0])
            cd[0] = dims[0];
        /* at most 2^20 chunks: the chunk index of the latest format (a fixed
         * array) allocates per chunk when the dataset is created, so a
         * 2^60-chunk table would be HDF5's problem, not the reader's; and
         * under 1 MiB a chunk where that allows (a write fills whole chunks) */
        uint64_t min_rows = (dims[0] >> 20) + ((dims[0] & 0xfffff) != 0);
        size_t ts = H5Tget_size(t);
        while (cd[0] > min_rows && cd[0] > 1 && cd[0] * elems * ts > ((uint64_t)1 << 20))
            cd[0] = cd[0] / 2 > min_rows ? cd[0] / 2 : min_rows;
        if (cd[0] < min_rows)
            cd[0] = min_rows;
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
        sp = rank < 0    ? H5Screate(H5S_NULL)
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

/* The bytes of a chunk of d; 0 when d is not chunked. */
static uint64_t chunk_bytes(hid_t d, hid_t t)
{
    hid_t p = H5Dget_create_plist(d);
    hsize_t cd[3] = {0, 0, 0};
    int rank = p >= 0 && H5Pget_layout(p) == H5D_CHUNKED ? H5Pget_chunk(p, 3, cd) : 0;
    uint64_t n = rank > 0 ? H5Tget_size(t) : 0;
    for (int i = 0; i < rank; i++)
        n *= cd[i];
    if (p >= 0)
        H5Pclose(p);
    return n;
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

void h5r_make_table(h5r_builder *b, int table)
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
    uint64_t rows = ts->rows_set         ? ts->rows
                    : table == H5R_CASES ? (uint64_t)rc->n_cases
                    : table == H5R_RANKS
                        ? (uint64_t)rc->n_ranks
                        : (uint64_t)rc->n_cases * (uint64_t)rc->n_ranks * (uint64_t)rc->max_trials;
    member m[H5R_MAX_FIELDS + 1];
    int nm = 0;
    hid_t t = table_type(ts, table, m, &nm);
    int rank = ts->space == 0 ? 1 : ts->space == 1 ? 0 : ts->space == 2 ? 2 : -1;
    hsize_t dims[2] = {rows, 2};
    uint64_t elems = rank < 0                ? 0
                     : rank == 0             ? 1
                     : rank == 1             ? rows
                     : rows > UINT64_MAX / 2 ? UINT64_MAX
                                             : rows * 2;
    hid_t d =
        t >= 0 ? h5r_make_dset(b, table_path[table], t, rank, dims, ts->layout, ts->chunk) : -1;
    if (d >= 0) {
        uint64_t k = ts->write == 0 ? elems : ts->write == 1 ? 0 : ts->partial;
        if (k > elems)
            k = elems;
        uint64_t cb = chunk_bytes(d, t);
        if (k > H5R_MAX_ROWS_WRITTEN || (elems > H5R_MAX_ROWS_WRITTEN && !cb) || cb > (1u << 24) ||
            ts->layout == H5R_L_EXTERNAL)
            k = 0;
        unsigned char *buf = k ? table_rows(b, ts, table, t, m, nm, k) : NULL;
        write_first(d, t, rank, elems, k, buf);
        free(buf);
        if (!has_vlen(t) && ts->layout != H5R_L_EXTERNAL)
            h5r_note_flippable(b, table_path[table]);
        H5Dclose(d);
    }
    for (int i = 0; i < nm; i++)
        H5Tclose(m[i].type);
    if (t >= 0)
        H5Tclose(t);
}

void h5r_make_links(h5r_builder *b)
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
