/* The records of the kcs dataset as field tables, and the HDF5 compound
 * types built from them (kcs_h5_*_type, kcs_h5_compound). The compound
 * types have the C structs' memory layout and are used as file types too:
 * memory and file types are equal, so no conversion happens and parallel
 * writes stay collective (HDF5 1.10 falls back to independent I/O when a
 * write needs a datatype conversion). */
#include <string.h>

#include "store.h"
#include "store_h5.h"
#include "store_read.h"

/* clang-format off */
#define R(m, k) KCS_FIELD(kcs_result_rec, m, k)
static const kcs_field result_fields[] = {
    R(case_id, KCS_FIELD_I64),
    R(rank, KCS_FIELD_I32),
    R(trial, KCS_FIELD_I32),
    R(status, KCS_FIELD_STR),
    R(output_digest, KCS_FIELD_U64),
    R(tau, KCS_FIELD_F64),
    R(eta, KCS_FIELD_F64),
    R(max_abs, KCS_FIELD_F64),
    R(max_rel, KCS_FIELD_F64),
    R(max_ulp, KCS_FIELD_F64),
    R(mean_ulp, KCS_FIELD_F64),
    R(backward_err, KCS_FIELD_F64),
    R(max_scaled, KCS_FIELD_F64),
    R(effective_acc_bits, KCS_FIELD_F64),
    R(nan_count, KCS_FIELD_I64),
    R(inf_count, KCS_FIELD_I64),
    R(guard_ok, KCS_FIELD_I32),
    R(time_ns, KCS_FIELD_I64),
    R(verdict, KCS_FIELD_STR),
    R(signature, KCS_FIELD_STR),
    R(message, KCS_FIELD_STR),
};
#undef R

#define C(m, k) KCS_FIELD(kcs_case_rec, m, k)
static const kcs_field case_fields[] = {
    C(case_id, KCS_FIELD_I64),
    C(contract, KCS_FIELD_STR),
    C(op, KCS_FIELD_STR),
    C(variant, KCS_FIELD_STR),
    C(dtype_in, KCS_FIELD_STR),
    C(dtype_acc, KCS_FIELD_STR),
    C(dtype_out, KCS_FIELD_STR),
    C(m, KCS_FIELD_I64),
    C(n, KCS_FIELD_I64),
    C(k, KCS_FIELD_I64),
    C(batch, KCS_FIELD_I64),
    C(input_dist, KCS_FIELD_STR),
    C(seed, KCS_FIELD_U64),
    C(input_digest, KCS_FIELD_U64),
    C(trials, KCS_FIELD_I32),
};
#undef C

#define K(m, k) KCS_FIELD(kcs_rank_rec, m, k)
static const kcs_field rank_fields[] = {
    K(rank, KCS_FIELD_I32),
    K(host, KCS_FIELD_STR),
    K(backend, KCS_FIELD_STR),
    K(device, KCS_FIELD_I32),
    K(vendor, KCS_FIELD_STR),
    K(model, KCS_FIELD_STR),
    K(arch, KCS_FIELD_STR),
    K(driver, KCS_FIELD_STR),
    K(runtime, KCS_FIELD_STR),
    K(uuid, KCS_FIELD_STR),
    K(profile, KCS_FIELD_STR),
    K(variant, KCS_FIELD_STR),
    K(status, KCS_FIELD_STR),
    K(blas, KCS_FIELD_STR),
    K(blas_threads, KCS_FIELD_I32),
    K(why, KCS_FIELD_STR),
};
#undef K
/* clang-format on */

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

KCS_FIELD_TABLE(kcs_store_result_fields, result_fields)

KCS_FIELD_TABLE(kcs_store_case_fields, case_fields)

KCS_FIELD_TABLE(kcs_store_rank_fields, rank_fields)

hid_t kcs_h5_str_type(size_t size, H5T_str_t pad)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    if (H5Tset_size(t, size ? size : 1) < 0 || H5Tset_strpad(t, pad) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static hid_t native_of(kcs_field_kind kind)
{
    switch (kind) {
    case KCS_FIELD_I32: return H5T_NATIVE_INT32;
    case KCS_FIELD_I64: return H5T_NATIVE_INT64;
    case KCS_FIELD_U64: return H5T_NATIVE_UINT64;
    case KCS_FIELD_F64: return H5T_NATIVE_DOUBLE;
    case KCS_FIELD_STR: break;
    }
    return -1;
}

hid_t kcs_h5_compound(const kcs_field *f, int n, size_t rec_size)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, rec_size);
    if (t < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        herr_t st;
        if (f[i].kind == KCS_FIELD_STR) {
            hid_t s = kcs_h5_str_type(f[i].size, H5T_STR_NULLTERM);
            if (s < 0)
                goto fail;
            st = H5Tinsert(t, f[i].name, f[i].offset, s);
            H5Tclose(s);
        } else {
            hid_t nt = native_of(f[i].kind);
            if (nt < 0 || H5Tget_size(nt) != f[i].size)
                goto fail;
            st = H5Tinsert(t, f[i].name, f[i].offset, nt);
        }
        if (st < 0)
            goto fail;
    }
    return t;
fail:
    H5Tclose(t);
    return -1;
}

int64_t kcs_h5_result_type(void)
{
    return kcs_h5_compound(result_fields, N_OF(result_fields), sizeof(kcs_result_rec));
}

int64_t kcs_h5_case_type(void)
{
    return kcs_h5_compound(case_fields, N_OF(case_fields), sizeof(kcs_case_rec));
}

int64_t kcs_h5_rank_type(void)
{
    return kcs_h5_compound(rank_fields, N_OF(rank_fields), sizeof(kcs_rank_rec));
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    case H5T_ENUM: return "enum";
    default: return "other";
    }
}

static H5T_class_t class_of(kcs_field_kind kind)
{
    switch (kind) {
    case KCS_FIELD_I32:
    case KCS_FIELD_I64:
    case KCS_FIELD_U64: return H5T_INTEGER;
    case KCS_FIELD_F64: return H5T_FLOAT;
    case KCS_FIELD_STR: return H5T_STRING;
    }
    return H5T_NO_CLASS;
}

/* Fields added to schema 1 after its first datasets were written: a file
 * without them is still a kcs dataset, and they read as "" (read_rows
 * zeroes the rows first; HDF5 leaves members the file lacks untouched). */
static int optional_field(const char *name)
{
    return strcmp(name, "message") == 0 || strcmp(name, "why") == 0;
}

int kcs_h5_check_fields(hid_t dset, const kcs_field *f, int n, const char *file, const char *object,
                        const char *what, kcs_error *err)
{
    hid_t t = H5Dget_type(dset);
    if (t < 0)
        return kcs_h5_fail(err, KCS_E_IO, file, object, "cannot read the datatype");
    int rc = 0;
    H5T_class_t cls = H5Tget_class(t);
    if (cls != H5T_COMPOUND) {
        rc = kcs_h5_fail(err, KCS_E_INVAL, file, object,
                         "not a kcs %s (a %s dataset, not a compound)", what, class_name(cls));
        goto out;
    }
    /* HDF5 1.10 converts compounds by the file's member offsets and sizes
     * without checking them against the record (measured: SIGSEGV in
     * H5T__conv_struct_opt on a flipped offset): check every member lies
     * inside the record, and the record is of a sane size. */
    size_t tsize = H5Tget_size(t);
    int nm = H5Tget_nmembers(t);
    if (tsize == 0 || tsize > ((size_t)1 << 20) || nm <= 0 || nm > 4096) {
        rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a kcs %s (a record of %zu bytes, %d fields)",
                      file, object, what, tsize, nm);
        goto out;
    }
    for (int i = 0; i < nm; i++) {
        size_t off = H5Tget_member_offset(t, (unsigned)i);
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        size_t ms = mt >= 0 ? H5Tget_size(mt) : 0;
        H5T_class_t mcl = mt >= 0 ? H5Tget_class(mt) : H5T_NO_CLASS;
        if (mt >= 0)
            H5Tclose(mt);
        if (mt < 0 || ms == 0 || off > tsize || ms > tsize - off ||
            mcl == H5T_VLEN || mcl == H5T_REFERENCE || mcl == H5T_NO_CLASS) {
            H5Eclear2(H5E_DEFAULT);
            rc = kcs_fail(err, KCS_E_INVAL,
                          "%s: %s: not a kcs %s (field %d: %zu bytes at offset %zu of a %zu-byte "
                          "record, or not a plain type)",
                          file, object, what, i, ms, off, tsize);
            goto out;
        }
    }
    for (int i = 0; i < n; i++) {
        int idx = H5Tget_member_index(t, f[i].name);
        if (idx < 0 && optional_field(f[i].name)) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        if (idx < 0) {
            H5Eclear2(H5E_DEFAULT);
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a kcs %s (missing field %s)", file, object,
                          what, f[i].name);
            goto out;
        }
        H5T_class_t mc = H5Tget_member_class(t, (unsigned)idx);
        if (mc != class_of(f[i].kind)) {
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s: not a kcs %s (field %s is %s, expected %s)",
                          file, object, what, f[i].name, class_name(mc),
                          class_name(class_of(f[i].kind)));
            goto out;
        }
        /* the width too: a digest narrowed to 8 bits, a count to 16 or a
         * string cut short would read as other values */
        hid_t mt = H5Tget_member_type(t, (unsigned)idx);
        size_t ms = mt >= 0 ? H5Tget_size(mt) : 0;
        int sign = mc == H5T_INTEGER && mt >= 0 ? (int)H5Tget_sign(mt) : -1;
        int vstr = mc == H5T_STRING && mt >= 0 && H5Tis_variable_str(mt) > 0;
        if (mt >= 0)
            H5Tclose(mt);
        const char *why = NULL;
        if (mc == H5T_STRING && (vstr || ms > f[i].size))
            why = vstr ? "a variable-length string" : "a longer string than kcs writes";
        else if (mc != H5T_STRING && ms != f[i].size)
            why = "of another width";
        else if (mc == H5T_INTEGER && sign != (f[i].kind == KCS_FIELD_U64 ? H5T_SGN_NONE : H5T_SGN_2))
            why = f[i].kind == KCS_FIELD_U64 ? "signed, expected unsigned" : "unsigned, expected signed";
        if (why) {
            H5Eclear2(H5E_DEFAULT);
            rc = kcs_fail(err, KCS_E_INVAL,
                          "%s: %s: field %s is %s (%zu bytes; kcs writes %zu): not a kcs %s",
                          file, object, f[i].name, why, ms, f[i].size, what);
            goto out;
        }
    }
out:
    H5Tclose(t);
    return rc;
}

void kcs_fields_terminate(const kcs_field *f, int n, void *rows, size_t rec_size, size_t n_rows)
{
    unsigned char *base = rows;
    for (size_t r = 0; r < n_rows; r++)
        for (int i = 0; i < n; i++)
            if (f[i].kind == KCS_FIELD_STR && f[i].size > 0)
                base[r * rec_size + f[i].offset + f[i].size - 1] = '\0';
}
