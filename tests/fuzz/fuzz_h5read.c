/* libFuzzer target: the HDF5 reader of `kcs reduce` (src/store/store_read.c) on
 * hostile kcs datasets. Structure-aware: the input is decoded into a
 * recipe (h5read_recipe.h) that h5r_build() writes with the HDF5 API
 * (missing objects, wrong classes and widths, huge or zero dimensions,
 * row counts that disagree with the root attributes, strings where
 * integers are due, odd layouts and links), with byte flips only inside
 * the raw data of contiguous datasets and an optional truncation; HDF5's
 * own metadata is never damaged byte-wise (HDF5 1.10 has public crash
 * bugs on such files that kcs cannot fix). A first byte with bit 7 set
 * selects the structure-less mode instead: a valid file cut at a fuzzed
 * offset. The reader is then driven the way kcs reduce drives it, and
 * must return clean errors that name the file: any crash, hang, leak,
 * unbounded allocation or HDF5 handle left open is a finding.
 *
 * Input layout (every byte past the end reads as 0, and 0 means "valid"):
 *   [0]    bit 7: structure-less mode (then [0] & 3: the file variant,
 *          [1..4]: the cut offset, big-endian, modulo the size + 1);
 *          bit 0: HDF5 latest file format
 *   [1..4] shape: n_ranks 1 + (b + 1) % 4, n_cases (b + 2) % 7,
 *          max_trials (b + 2) % 5, n_samples (b + 3) % 6
 *   then operations until the end, each an opcode byte (value % OP_N)
 *   and its arguments; see decode().
 * Build (see h5read.cmake):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -Ibackends -Iinclude \
 *       -I/usr/include/hdf5/openmpi -I<mpi include> tests/fuzz/fuzz_h5read.c \
 *       tests/fuzz/h5read_recipe.c tests/fuzz/h5read_tables.c src/store/store_read.c \
 *       src/store/store_h5.c src/store/store_types.c src/base/error.c <libhdf5.so> -lmpi -lm */
#define _POSIX_C_SOURCE 200809L

#include <hdf5.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5read_recipe.h"
#include "store_h5.h"
#include "store_read.h"

/* --- decoding the input -------------------------------------------------- */

typedef struct src {
    const uint8_t *p;
    size_t n, i;
} src;

static unsigned u8(src *s)
{
    return s->i < s->n ? s->p[s->i++] : 0;
}

static unsigned pick(src *s, unsigned n)
{
    return u8(s) % n;
}

static uint64_t ubytes(src *s, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | u8(s);
    return v;
}

static int64_t interesting_i64(src *s)
{
    /* clang-format off */
    static const int64_t v[] = {-1, 0, 1, 2, 3, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN,
                                INT64_MAX, INT64_MIN, (int64_t)1 << 40, -((int64_t)1 << 40),
                                INT64_MAX / 2, INT64_MAX / 2 + 1, (int64_t)1 << 31};
    /* clang-format on */
    unsigned k = pick(s, 16);
    return k < 15 ? v[k] : (int64_t)ubytes(s, 8);
}

static uint64_t interesting_rows(src *s, uint64_t consistent)
{
    switch (pick(s, 16)) {
    case 0: return consistent + 1;
    case 1: return consistent ? consistent - 1 : 0;
    case 2: return 0;
    case 3: return 1;
    case 4: return (uint64_t)INT32_MAX;
    case 5: return (uint64_t)1 << 31;
    case 6: return (uint64_t)1 << 32;
    case 7: return (uint64_t)1 << 40;
    case 8: return (uint64_t)1 << 62;
    case 9: return (uint64_t)1 << 63;
    case 10: return UINT64_MAX - 1;
    case 11: return consistent * 2;
    case 12: return H5R_MAX_ROWS_WRITTEN + 1;
    case 13: return ((uint64_t)1 << 63) + consistent;
    case 14: return consistent * 1000;
    default: return ubytes(s, 4);
    }
}

static uint32_t interesting_len(src *s)
{
    static const uint32_t v[] = {0,    1,     15,       16,       17,        255,
                                 4096, 65537, 1u << 27, 1u << 31, UINT32_MAX};
    unsigned k = pick(s, 12);
    return k < 11 ? v[k] : (uint32_t)ubytes(s, 2);
}

/* Arguments of the reader calls that take them from the caller. */
typedef struct call_args {
    int64_t first, count;
} call_args;

enum {
    OP_NOP,
    OP_ATTR,
    OP_TABLE_KIND,
    OP_TABLE_ROWS,
    OP_TABLE_SPACE,
    OP_TABLE_LAYOUT,
    OP_TABLE_WRITE,
    OP_TABLE_BASE,
    OP_TABLE_MEMBER,
    OP_TABLE_MISC,
    OP_SAMPLES_GROUP,
    OP_SAMPLE,
    OP_STUDY,
    OP_CONTRACTS,
    OP_CONTRACT,
    OP_EXTRAS,
    OP_FLIP,
    OP_TRUNCATE,
    OP_CALL,
    OP_N
};

static void decode(src *s, h5r_recipe *rc, call_args *ca)
{
    h5r_default(rc);
    rc->libver_latest = (int)(u8(s) & 1);
    rc->n_ranks = 1 + (int)((u8(s) + 1) % 4);
    rc->n_cases = (int)((u8(s) + 2) % (H5R_MAX_CASES + 1));
    rc->max_trials = (int)((u8(s) + 2) % 5);
    rc->n_samples = (int)((u8(s) + 3) % 6);
    uint64_t consistent[H5R_N_TABLES] = {(uint64_t)rc->n_cases,
                                         (uint64_t)rc->n_cases * (uint64_t)rc->n_ranks *
                                             (uint64_t)rc->max_trials,
                                         (uint64_t)rc->n_ranks};
    ca->first = 0;
    ca->count = 1;
    while (s->i < s->n) {
        unsigned op = pick(s, OP_N), t;
        h5r_table_spec *ts;
        switch (op) {
        case OP_ATTR: {
            h5r_attr_spec *a = &rc->attr[pick(s, H5R_N_ATTRS)];
            a->kind = (int)pick(s, H5R_AK_N);
            a->width = 1 << pick(s, 4);
            a->is_unsigned = (int)(u8(s) & 1);
            a->ival = interesting_i64(s);
            a->str_pad = (int)pick(s, 4);
            a->str_len = interesting_len(s);
            if (a->str_len > (1u << 20))
                a->str_len = 1u << 20;
            unsigned tl = pick(s, sizeof a->text);
            for (unsigned k = 0; k < tl; k++) {
                unsigned c = u8(s);
                a->text[k] = (char)(c ? c : 'k');
            }
            a->text[tl] = '\0';
            break;
        }
        case OP_TABLE_KIND:
            t = pick(s, H5R_N_TABLES);
            rc->table[t].kind = (int)pick(s, H5R_TK_N);
            break;
        case OP_TABLE_ROWS:
            t = pick(s, H5R_N_TABLES);
            rc->table[t].rows_set = 1;
            rc->table[t].rows = interesting_rows(s, consistent[t]);
            break;
        case OP_TABLE_SPACE:
            t = pick(s, H5R_N_TABLES);
            rc->table[t].space = (int)pick(s, 4);
            break;
        case OP_TABLE_LAYOUT:
            ts = &rc->table[pick(s, H5R_N_TABLES)];
            ts->layout = (int)pick(s, H5R_L_N);
            ts->chunk = u8(s) & 1 ? ubytes(s, 4) : 1 + u8(s);
            break;
        case OP_TABLE_WRITE:
            ts = &rc->table[pick(s, H5R_N_TABLES)];
            ts->write = (int)pick(s, 3);
            ts->partial = ubytes(s, 2);
            break;
        case OP_TABLE_BASE:
            t = pick(s, H5R_N_TABLES);
            rc->table[t].base = (int)pick(s, 4);
            break;
        case OP_TABLE_MEMBER: {
            ts = &rc->table[pick(s, H5R_N_TABLES)];
            unsigned i = pick(s, H5R_MAX_FIELDS);
            ts->mop[i] = (unsigned char)pick(s, H5R_MT_N);
            ts->marg[i] = (unsigned short)ubytes(s, 2);
            break;
        }
        case OP_TABLE_MISC: {
            ts = &rc->table[pick(s, H5R_N_TABLES)];
            unsigned f = u8(s);
            ts->reverse = f & 1;
            ts->extra_member = (int)((f >> 1) % 3);
            ts->str_fill = (f >> 3) & 1;
            ts->bad_ids = (f >> 4) & 1;
            ts->seed = (uint8_t)u8(s);
            break;
        }
        case OP_SAMPLES_GROUP: rc->samples_group = (int)pick(s, 4); break;
        case OP_SAMPLE: {
            unsigned i = pick(s, H5R_MAX_CASES);
            rc->sample[i] = (unsigned char)pick(s, H5R_SK_N);
            break;
        }
        case OP_STUDY:
            rc->study.kind = (int)pick(s, H5R_XK_N);
            rc->study.len = interesting_len(s);
            break;
        case OP_CONTRACTS:
            rc->contracts_group = (int)pick(s, 3);
            rc->n_contracts = (int)pick(s, H5R_MAX_CONTRACTS + 1);
            break;
        case OP_CONTRACT: {
            h5r_text_spec *x = &rc->contract[pick(s, H5R_MAX_CONTRACTS)];
            x->kind = (int)pick(s, H5R_XK_N);
            x->len = interesting_len(s);
            x->name = (int)pick(s, 6);
            break;
        }
        case OP_EXTRAS: rc->extras ^= u8(s) & 31u; break;
        case OP_FLIP:
            if (rc->n_flips < H5R_MAX_FLIPS) {
                h5r_flip *f = &rc->flip[rc->n_flips++];
                f->region = (uint8_t)u8(s);
                f->offset = (uint32_t)ubytes(s, 4);
                f->xor_mask = (uint8_t)u8(s);
            }
            break;
        case OP_TRUNCATE: rc->truncate = (uint16_t)ubytes(s, 2); break;
        case OP_CALL:
            ca->first = interesting_i64(s);
            ca->count = (int64_t)pick(s, 8) - 1;
            break;
        default: break;
        }
    }
}

/* --- driving the reader -------------------------------------------------- */

static char g_path[256];
static int g_verbose; /* FUZZ_H5READ_VERBOSE=1: say what open said */

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz_h5read: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* A failure must be a clean one: an input or I/O error naming the file
 * and the object (obj; for open, some object or a file-level diagnosis). */
static void check_fail(int rc, const kcs_error *err, const char *what, const char *obj)
{
    if (rc != KCS_E_INVAL && rc != KCS_E_IO && rc != KCS_E_NOMEM)
        die("%s: unexpected code %d: %s", what, rc, err->msg);
    size_t n = strlen(g_path);
    if (strncmp(err->msg, g_path, n) != 0 || strncmp(err->msg + n, ": ", 2) != 0)
        die("%s: the message does not start with the file: %s", what, err->msg);
    const char *rest = err->msg + n + 2;
    if (obj ? strncmp(rest, obj, strlen(obj)) != 0
            : rest[0] != '/' && strncmp(rest, "not an HDF5 file", 16) != 0 &&
                  strncmp(rest, "cannot open", 11) != 0 &&
                  strncmp(rest, "cannot read the file", 20))
        die("%s: the message does not name the object%s%s: %s", what, obj ? " " : "",
            obj ? obj : "", err->msg);
}

#define TERMINATED(s) (strnlen((s), sizeof(s)) < sizeof(s))

static void check_result(const kcs_result_rec *x)
{
    if (!TERMINATED(x->status) || !TERMINATED(x->verdict) || !TERMINATED(x->signature))
        die("a /results string is not terminated");
}

static void check_info(const kcs_store_info *in)
{
    if (in->schema_version != KCS_SCHEMA_VERSION || in->n_ranks < 1 || in->n_cases < 0 ||
        in->max_trials < 0 || in->n_samples < 0 || (in->complete != 0 && in->complete != 1))
        die("open accepted a header out of range: ranks %d cases %" PRId64
            " trials %d samples %d complete %d",
            in->n_ranks, in->n_cases, in->max_trials, in->n_samples, in->complete);
    if (!TERMINATED(in->software) || !TERMINATED(in->software_version) ||
        !TERMINATED(in->git_hash) || !TERMINATED(in->created) || !TERMINATED(in->study_name) ||
        !TERMINATED(in->plan_hash) || !in->command_line)
        die("open returned an unterminated or missing header string");
}

static void read_texts(kcs_store_reader *r)
{
    kcs_error err = {0};
    char *text = NULL, *v = NULL;
    int rc = kcs_store_read_text(r, "/study", &text, &err);
    if (rc)
        check_fail(rc, &err, "read_text", "/study");
    free(text);
    char **ids = NULL;
    int n = 0;
    rc = kcs_store_read_contract_ids(r, &ids, &n, &err);
    if (rc) {
        check_fail(rc, &err, "read_contract_ids", "/contracts");
    } else {
        for (int i = 0; i < n && i < 16; i++) {
            char obj[512];
            snprintf(obj, sizeof obj, "/contracts/%s", ids[i]);
            text = NULL;
            if ((rc = kcs_store_read_text(r, obj, &text, &err)))
                check_fail(rc, &err, "read_text", obj);
            free(text);
            if ((rc = kcs_store_read_attr(r, obj, "path", &v, &err)))
                check_fail(rc, &err, "read_attr", obj);
            else
                free(v);
        }
        kcs_store_strings_free(ids, n);
    }
    static const char *const attrs[][2] = {
        {"/", "schema"}, {"/", "n_ranks"}, {"/provenance/build", "backends"}, {"/nowhere", "x"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        v = NULL;
        if ((rc = kcs_store_read_attr(r, attrs[i][0], attrs[i][1], &v, &err)))
            check_fail(rc, &err, "read_attr", attrs[i][0]);
        else
            free(v);
    }
}

/* What kcs reduce does with a dataset, and a few calls out of range. */
static void drive(const call_args *ca)
{
    kcs_error err = {0};
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(g_path, &r, &err);
    if (g_verbose)
        fprintf(stderr, "open: %d %s\n", rc, rc ? err.msg : "ok");
    if (rc) {
        check_fail(rc, &err, "open", NULL);
        if (r)
            die("open failed and still returned a reader");
        return;
    }
    const kcs_store_info *in = kcs_store_reader_info(r);
    check_info(in);
    /* the caller's buffers, sized from the header as kcs reduce sizes them */
    size_t nr = (size_t)in->n_ranks, per_case = nr * (size_t)in->max_trials;
    size_t ns = (size_t)(in->n_samples > 0 ? in->n_samples : 1);
    kcs_rank_rec *ranks = calloc(nr, sizeof *ranks);
    kcs_result_rec *res = calloc(per_case ? per_case : 1, sizeof *res);
    double *smp = calloc(nr * ns, sizeof *smp);
    if (!ranks || !res || !smp)
        die("open accepted a header whose buffers cannot be allocated");
    if ((rc = kcs_store_read_ranks(r, ranks, &err)))
        check_fail(rc, &err, "read_ranks", "/provenance/ranks");
    /* every case of a complete file (kcs reduce refuses incomplete ones;
     * of those, the first 64 and the last) */
    int64_t n = in->n_cases;
    for (int64_t c = 0; c < n; c++) {
        if (!in->complete && c == 64 && n > 65)
            c = n - 1;
        kcs_case_rec cs;
        int found = 0;
        if ((rc = kcs_store_read_cases(r, c, 1, &cs, &err))) {
            check_fail(rc, &err, "read_cases", "/cases");
            break;
        }
        if (!TERMINATED(cs.contract) || !TERMINATED(cs.op) || !TERMINATED(cs.input_dist))
            die("a /cases string is not terminated");
        if ((rc = kcs_store_read_case_results(r, c, res, &err)))
            check_fail(rc, &err, "read_case_results", "/results");
        else
            for (size_t i = 0; i < per_case; i++)
                check_result(&res[i]);
        if ((rc = kcs_store_read_samples(r, cs.case_id, smp, &found, &err)))
            check_fail(rc, &err, "read_samples", "/samples");
    }
    if ((rc = kcs_store_read_case_results(r, n, res, &err)) != KCS_E_INVAL ||
        (rc = kcs_store_read_case_results(r, -1, res, &err)) != KCS_E_INVAL)
        die("read_case_results out of range returned %d", rc);
    kcs_case_rec cs;
    if ((rc = kcs_store_read_cases(r, n, 1, &cs, &err)) != KCS_E_INVAL)
        die("read_cases past the end returned %d", rc);
    int64_t count = ca->count < 0 || (size_t)ca->count > per_case ? (int64_t)per_case : ca->count;
    if ((rc = kcs_store_read_results(r, ca->first, count, res, &err)))
        check_fail(rc, &err, "read_results", "/results");
    read_texts(r);
    kcs_store_reader_close(r);
    free(ranks);
    free(res);
    free(smp);
}

/* --- the structure-less mode: valid files cut short ---------------------- */

static unsigned char *g_valid[4];
static size_t g_valid_size[4];

static void valid_file(int v)
{
    if (g_valid[v])
        return;
    h5r_recipe rc;
    h5r_default(&rc);
    rc.libver_latest = v & 1;
    if (v & 2)
        rc.table[H5R_RESULTS].layout = H5R_L_CHUNKED;
    rc.table[H5R_RESULTS].chunk = 3;
    if (h5r_build(&rc, g_path) != 0)
        die("cannot build the valid file %d at %s", v, g_path);
    FILE *f = fopen(g_path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        die("cannot read back %s", g_path);
    long size = ftell(f);
    rewind(f);
    g_valid[v] = malloc((size_t)size);
    if (!g_valid[v] || fread(g_valid[v], 1, (size_t)size, f) != (size_t)size)
        die("cannot read back %s", g_path);
    fclose(f);
    g_valid_size[v] = (size_t)size;
}

static void cut_file(src *s)
{
    int v = (int)(u8(s) & 3);
    valid_file(v);
    size_t at = (size_t)(ubytes(s, 4) % (g_valid_size[v] + 1));
    FILE *f = fopen(g_path, "wb");
    if (!f || fwrite(g_valid[v], 1, at, f) != at || fclose(f) != 0)
        die("cannot write %s", g_path);
}

/* --- libFuzzer entry points ---------------------------------------------- */

static void cleanup(void)
{
    for (int i = 0; i < 4; i++)
        free(g_valid[i]);
    if (g_path[0])
        unlink(g_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    kcs_h5_quiet();
    /* HDF5 keeps freed blocks for reuse (the 1 MiB conversion buffers of
     * every read would otherwise be fresh pages each time: half the time
     * of a run). HDF5 is not instrumented, so ASan loses nothing. */
    H5set_free_list_limits(-1, -1, -1, -1, -1, -1);
    g_verbose = getenv("FUZZ_H5READ_VERBOSE") != NULL;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(g_path, sizeof g_path, "%s/kcs-fuzz-h5read-%ld.h5", dir ? dir : "/tmp",
             (long)getpid());
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    src s = {data, size, 0};
    call_args ca = {0, 1};
    if (size > 0 && (data[0] & 0x80)) {
        cut_file(&s);
    } else {
        h5r_recipe rc;
        decode(&s, &rc, &ca);
        if (h5r_build(&rc, g_path) != 0)
            die("cannot create %s", g_path);
    }
    if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
        die("the file builder left HDF5 objects open");
    drive(&ca);
    ssize_t open_objs = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open_objs != 0)
        die("the reader left %zd HDF5 objects open", open_objs);
    unlink(g_path);
    return 0;
}
