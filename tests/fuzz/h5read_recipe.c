/* Building a kcs dataset from a recipe (h5read_recipe.h) with the HDF5
 * API: the file, its root attributes, /provenance, /study, /contracts,
 * /samples and extra objects, then the damage (byte flips in raw data, a
 * cut); the tables are h5read_tables.c. Nothing here may abort on an HDF5
 * refusal: an object HDF5 will not create is simply missing. */
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

void h5r_default(h5r_recipe *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->n_ranks = 2;
    rc->n_cases = 2;
    rc->max_trials = 2;
    rc->n_samples = 3;
    rc->n_contracts = 2;
}

void h5r_pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

void h5r_note_flippable(h5r_builder *b, const char *obj)
{
    if (b->n_flippable < H5R_MAX_PATHS)
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

static void root_attrs(h5r_builder *b)
{
    static const char *const names[H5R_N_ATTRS] = {
        "schema",  "schema_version", "software",   "software_version", "git_hash",
        "created", "study_name",     "plan_hash",  "command_line",     "n_ranks",
        "n_cases", "complete",       "max_trials", "n_samples"};
    static const char *const strs[] = {"kcs",
                                       "kcs",
                                       "kcs",
                                       "0.1.0",
                                       "0123abc",
                                       "2025-01-01T00:00:00Z",
                                       "fuzz",
                                       "00000000000000ff",
                                       "kcs run fuzz.yaml"};
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

/* --- texts, samples, the rest (the tables: h5read_tables.c) -------------- */

static void write_scalar_dset(h5r_builder *b, const char *obj, hid_t t, int rank,
                              const hsize_t *dims, const void *buf, int flippable)
{
    hid_t d = t >= 0 ? h5r_make_dset(b, obj, t, rank, dims, H5R_L_CONTIG, 0) : -1;
    if (d < 0)
        return;
    if (buf)
        H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    if (flippable)
        h5r_note_flippable(b, obj);
    kcs_h5_put_str(d, "path", "/studies/fuzz.yaml"); /* as the writer does on texts */
    H5Dclose(d);
}

static void make_text(h5r_builder *b, const char *obj, const h5r_text_spec *x, const char *text)
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

static void make_contracts(h5r_builder *b)
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

static void make_samples(h5r_builder *b)
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
                h5r_pattern(raw, sizeof raw, (unsigned)i);
                buf = raw;
            }
        }
        hid_t d = t >= 0 ? h5r_make_dset(b, obj, t, rank, dims, H5R_L_CONTIG, 0) : -1;
        if (d >= 0) {
            if (buf && elems > 0)
                H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            h5r_note_flippable(b, obj);
            H5Dclose(d);
        }
        if (t >= 0)
            H5Tclose(t);
    }
}

static void make_provenance(h5r_builder *b)
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

static void make_extras(h5r_builder *b)
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
        hid_t d = h5r_make_dset(b, obj, H5T_NATIVE_DOUBLE, 2, dims, H5R_L_DEFLATE, 1);
        if (d >= 0) {
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            H5Dclose(d);
        }
    }
}

/* Byte flips inside the raw data of contiguous datasets, then a cut. */
static void corrupt(h5r_builder *b)
{
    const h5r_recipe *rc = b->rc;
    if (rc->n_flips > 0 && b->n_flippable > 0) {
        struct {
            uint64_t off, size;
        } reg[H5R_MAX_PATHS];
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
            off_t at =
                (off_t)(reg[fl->region % nreg].off + fl->offset % reg[fl->region % nreg].size);
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
    h5r_builder b;
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
    h5r_make_table(&b, H5R_RANKS);
    make_text(&b, "/study", &rc->study, "name: fuzz\ncontracts: [C-ORD-01]\n");
    make_contracts(&b);
    h5r_make_table(&b, H5R_CASES);
    h5r_make_table(&b, H5R_RESULTS);
    make_samples(&b);
    h5r_make_links(&b);
    make_extras(&b);
    H5Fclose(b.file);
    corrupt(&b);
    return 0;
}
