/* kcs probe --order --op allreduce (probe_order.h): the tree over ranks of
 * the MPI library's MPI_Allreduce, per element. Rank i contributes +big,
 * rank j -big, every other rank a unit, at every element; rank 0 gathers
 * every rank's result, answers for the representative output and tells
 * every rank the answer, so all ranks rebuild the same tree in step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "order_tree.h"
#include "json.h"
#include "probe_order.h"

typedef struct aprobe {
    MPI_Comm comm;
    int rank, size;
    int64_t k;
    int dbl;              /* MPI_DOUBLE (fp64) or MPI_FLOAT */
    double big, unit;
    float *xf, *yf;
    double *xd, *yd, *all; /* all: rank 0, size * k results */
    int rep, *agree;      /* rank 0: per output (size * k) */
    long calls;
} aprobe;

static int a_size_of(const aprobe *A, int o)
{
    double v = A->all[o] / A->unit;
    if (!isfinite(v) || v != nearbyint(v) || v < 0 || v > A->size - 2)
        return -1;
    return A->size - (int)v;
}

static int a_measure(void *user, int i, int j, int *size_p, kcs_error *err)
{
    aprobe *A = user;
    double v = A->rank == i ? A->big : A->rank == j ? -A->big : A->unit;
    int mrc;
    A->calls++;
    if (A->dbl) {
        for (int64_t e = 0; e < A->k; e++)
            A->xd[e] = v;
        mrc = MPI_Allreduce(A->xd, A->yd, (int)A->k, MPI_DOUBLE, MPI_SUM, A->comm);
    } else {
        for (int64_t e = 0; e < A->k; e++)
            A->xf[e] = (float)v;
        mrc = MPI_Allreduce(A->xf, A->yf, (int)A->k, MPI_FLOAT, MPI_SUM, A->comm);
        for (int64_t e = 0; e < A->k; e++)
            A->yd[e] = A->yf[e];
    }
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Gather(A->yd, (int)A->k, MPI_DOUBLE, A->all, (int)A->k, MPI_DOUBLE, 0, A->comm);
    if (mrc != MPI_SUCCESS)
        return kcs_fail(err, KCS_E_MPI, "probe --order: MPI_Allreduce failed");
    int L = -1;
    if (A->rank == 0) {
        L = a_size_of(A, A->rep);
        for (int o = 0; L >= 0 && o < A->size * (int)A->k; o++)
            if (A->agree[o] && o != A->rep && a_size_of(A, o) != L)
                A->agree[o] = 0;
    }
    MPI_Bcast(&L, 1, MPI_INT, 0, A->comm);
    if (L < 0)
        return kcs_fail(err, KCS_E_DEVICE, "probe --order: ranks %d = +%g, %d = -%g, the others "
                        "%g: rank %d element %d is no count of the others", i, A->big, j, A->big,
                        A->unit, A->rep / (int)A->k, A->rep % (int)A->k);
    *size_p = L;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kcs_order_probe_allreduce_comm(const kcs_order_opts *o, MPI_Comm comm, kcs_order_result *r,
                                   kcs_error *err)
{
    memset(r, 0, sizeof *r);
    aprobe A = {.comm = comm, .k = o->k, .dbl = o->in == KCS_FMT_FP64};
    MPI_Comm_rank(comm, &A.rank);
    MPI_Comm_size(comm, &A.size);
    if (o->k < 1 || o->k > (1 << 16))
        return kcs_fail(err, KCS_E_INVAL, "probe --order: allreduce -k %lld outside 1..65536",
                        (long long)o->k);
    if (A.size < 2)
        return kcs_fail(err, KCS_E_INVAL, "probe --order: allreduce needs >= 2 ranks (mpirun "
                        "-n P); this job has %d", A.size);
    if (o->in != KCS_FMT_FP32 && o->in != KCS_FMT_FP64)
        return kcs_fail(err, KCS_E_INVAL, "probe --order: allreduce sums fp32 or fp64 (MPI_FLOAT,"
                        " MPI_DOUBLE), not %s", kcs_format_name(o->in));
    A.big = A.dbl ? ldexp(1.0, 1000) : ldexp(1.0, 126);
    A.unit = 1.0;
    double t0 = now_s();
    size_t k = (size_t)o->k, no = (size_t)A.size * k;
    A.xf = malloc(k * sizeof *A.xf);
    A.yf = malloc(k * sizeof *A.yf);
    A.xd = malloc(k * sizeof *A.xd);
    A.yd = malloc(k * sizeof *A.yd);
    A.all = A.rank == 0 ? malloc(no * sizeof *A.all) : NULL;
    A.agree = A.rank == 0 ? calloc(no, sizeof *A.agree) : NULL;
    int *tree_of = A.rank == 0 ? malloc(no * sizeof *tree_of) : NULL;
    int bad = !A.xf || !A.yf || !A.xd || !A.yd || (A.rank == 0 && (!A.all || !A.agree || !tree_of));
    int anybad = 0, rc = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad)
        rc = kcs_fail(err, KCS_E_NOMEM, "probe --order: out of memory (k = %lld)", (long long)k);
    for (size_t i = 0; !rc && A.rank == 0 && i < no; i++)
        tree_of[i] = -1;
    r->noutputs = (int)no;
    r->big = A.big;
    r->unit = A.unit;
    for (int pass = 0; !rc; pass++) {
        int rep = -1;
        if (A.rank == 0)
            for (size_t i = 0; i < no; i++) {
                A.agree[i] = tree_of[i] < 0;
                if (rep < 0 && tree_of[i] < 0)
                    rep = (int)i;
            }
        MPI_Bcast(&rep, 1, MPI_INT, 0, comm);
        if (rep < 0)
            break;
        A.rep = rep;
        kcs_otree t;
        rc = kcs_otree_recover(A.size, a_measure, &A, o->seed + (uint64_t)pass, o->verify, &t,
                               NULL, err);
        if (rc)
            break;
        char *s = kcs_otree_str(&t);
        int fan = kcs_otree_max_fanin(&t);
        kcs_otree_free(&t);
        kcs_order_tree *nt = realloc(r->trees, (size_t)(r->ntrees + 1) * sizeof *nt);
        if (!nt || !s) { /* out of memory: the same on every rank is not assured; abort */
            free(s);
            fprintf(stderr, "kcs probe: out of memory\n");
            MPI_Abort(comm, 1);
        }
        r->trees = nt;
        kcs_order_tree *T = &r->trees[r->ntrees++];
        memset(T, 0, sizeof *T);
        T->tree = s;
        T->max_fanin = fan;
        /* rank 0 knows which outputs agreed: share the list */
        int cnt = 0;
        int *list = malloc(no * sizeof *list);
        if (!list)
            MPI_Abort(comm, 1);
        if (A.rank == 0)
            for (size_t i = 0; i < no; i++)
                if (A.agree[i] && tree_of[i] < 0) {
                    tree_of[i] = r->ntrees - 1;
                    list[cnt++] = (int)i;
                }
        MPI_Bcast(&cnt, 1, MPI_INT, 0, comm);
        MPI_Bcast(list, cnt, MPI_INT, 0, comm);
        T->outputs = list;
        T->nout = cnt;
    }
    r->calls = A.calls;
    r->seconds = now_s() - t0;
    free(A.xf);
    free(A.yf);
    free(A.xd);
    free(A.yd);
    free(A.all);
    free(A.agree);
    free(tree_of);
    if (rc)
        kcs_order_result_free(r);
    return rc;
}

/* "ranks 0-3 elements 0-15; rank 4 elements 0-7": each rank's element
 * ranges, consecutive ranks with the same ranges merged. */
static void print_outputs(FILE *f, const int *out, int n, int64_t k, int size)
{
    char *prev = NULL;
    int from = 0, first = 1;
    for (int r = 0; r <= size; r++) {
        char *rg = NULL;
        if (r < size) {
            int a = 0;
            while (a < n && out[a] / k < r)
                a++;
            int b = a;
            while (b < n && out[b] / k == r)
                b++;
            int *el = malloc((size_t)(b - a + 1) * sizeof *el);
            if (!el)
                return;
            for (int i = a; i < b; i++)
                el[i - a] = (int)(out[i] % k);
            rg = kcs_order_ranges(el, b - a);
            free(el);
        }
        if (prev && (!rg || strcmp(rg, prev) != 0)) {
            if (prev[0]) {
                if (from == r - 1)
                    fprintf(f, "%srank %d elements %s", first ? "" : "; ", from, prev);
                else
                    fprintf(f, "%sranks %d-%d elements %s", first ? "" : "; ", from, r - 1, prev);
                first = 0;
            }
            free(prev);
            prev = NULL;
        }
        if (!prev) {
            prev = rg;
            from = r;
        } else {
            free(rg);
        }
    }
    free(prev);
}

int kcs_order_probe_allreduce(const char *backend, const kcs_order_opts *o, int json,
                              kcs_error *err)
{
    int inited = 0, rc;
    if (strcmp(backend, "cpu") != 0) {
        const kcs_backend_ops *ops = kcs_backend_find(backend);
        if (!ops) {
            const char *why = kcs_backend_why(backend);
            return kcs_fail(err, kcs_backend_known(backend) ? KCS_E_NODEV : KCS_E_INVAL,
                            "--backend %s: %s", backend, why ? why : "unknown backend");
        }
        kcs_backend_ctx *ctx = NULL;
        kcs_backend_config cfg = {0};
        if ((rc = ops->open(0, &cfg, &ctx, err)))
            return kcs_error_prefix(err, "probe --order --op allreduce --backend %s", backend);
        ops->close(ctx);
        return kcs_fail(err, KCS_E_UNSUPPORTED, "probe --order --op allreduce --backend %s: the "
                        "device collective (NCCL/RCCL) is not wired into kcs yet", backend);
    }
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kcs_order_result r;
    rc = kcs_order_probe_allreduce_comm(o, MPI_COMM_WORLD, &r, err);
    if (!rc && rank == 0) {
        const char *alg = getenv("OMPI_MCA_coll_tuned_allreduce_algorithm");
        const char *dyn = getenv("OMPI_MCA_coll_tuned_use_dynamic_rules");
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        char *comma = strchr(lib, ',');
        if (comma)
            *comma = '\0';
        if (json) {
            printf("{\"op\": \"allreduce\", \"backend\": \"%s\", \"library\": ", backend);
            kcs_json_str(stdout, lib);
            printf(", \"ranks\": %d, \"k\": %lld, \"dtype_in\": \"%s\", \"mca_allreduce_algorithm\""
                   ": %s%s%s, \"dynamic_rules\": %s%s%s, \"calls\": %ld, \"seconds\": %.3f,\n"
                   " \"trees\": [",
                   size, (long long)o->k, kcs_format_name(o->in), alg ? "\"" : "",
                   alg ? alg : "null", alg ? "\"" : "", dyn ? "\"" : "", dyn ? dyn : "null",
                   dyn ? "\"" : "", r.calls, r.seconds);
            for (int t = 0; t < r.ntrees; t++) {
                printf(t ? ",\n  {\"outputs\": [" : "\n  {\"outputs\": [");
                for (int i = 0; i < r.trees[t].nout; i++)
                    printf("%s%d", i ? "," : "", r.trees[t].outputs[i]);
                printf("], \"tree\": ");
                kcs_json_str(stdout, r.trees[t].tree);
                putchar('}');
            }
            printf("]}\n");
        } else {
            printf("kcs probe --order: allreduce over %d ranks (%s), %s, k %lld%s%s: %ld calls, "
                   "%.2f s, %d distinct tree%s (leaves are ranks; outputs: rank, element)\n",
                   size, lib, kcs_format_name(o->in), (long long)o->k,
                   alg ? ", coll_tuned_allreduce_algorithm " : "", alg ? alg : "", r.calls,
                   r.seconds, r.ntrees, r.ntrees == 1 ? "" : "s");
            for (int t = 0; t < r.ntrees; t++) {
                printf("tree %d: %s\n  used by ", t, r.trees[t].tree);
                print_outputs(stdout, r.trees[t].outputs, r.trees[t].nout, o->k, size);
                putchar('\n');
            }
        }
        fflush(stdout);
    }
    if (!rc)
        kcs_order_result_free(&r);
    if (!inited) /* every rank saw the same answers, so the same error */
        MPI_Finalize();
    return rc;
}
