/* record_order: true: every rank's summation trees for /provenance/order
 * (probe_order.h). Each rank probes its own binding; the records are
 * gathered so that every rank holds the same text (the store writes it
 * collectively). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "probe_order.h"
#include "study.h"

#define REC_MAX_PROBES 8
#define REC_MAX_K 4096
#define REC_MAX_DIM 8

typedef struct sb {
    char *s;
    size_t len, cap;
    int oom;
} sb;

static void put(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->oom = 1;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
}

/* JSON string body: the texts here are names, trees and error messages */
static void put_str(sb *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            put(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            put(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            put(b, "%c", *s);
    }
    put(b, "\"");
}

typedef struct want {
    kcs_op op;
    kcs_format in;
    int64_t k, m, n;
} want;

static int probes_of(const kcs_plan *plan, want *w)
{
    int nw = 0;
    for (int64_t c = 0; c < plan->n_cases && nw < REC_MAX_PROBES; c++) {
        const kcs_case *cs = &plan->cases[c];
        if (cs->op != KCS_OP_GEMM && cs->op != KCS_OP_DOT && cs->op != KCS_OP_REDUCE_SUM &&
            cs->op != KCS_OP_LAYERNORM && cs->op != KCS_OP_ALLREDUCE)
            continue;
        if (cs->op == KCS_OP_ALLREDUCE) { /* leaves: the m contributions; outputs: elements */
            want x = {cs->op, cs->dtype_in, cs->shape.m, 1,
                      cs->shape.k < REC_MAX_DIM ? (cs->shape.k > 0 ? cs->shape.k : 1)
                                                : REC_MAX_DIM};
            int dup = 0;
            for (int i = 0; i < nw && !dup; i++)
                dup = !memcmp(&w[i], &x, sizeof x);
            if (x.k >= 3 && x.k <= REC_MAX_K && !dup)
                w[nw++] = x;
            continue;
        }
        if (cs->shape.k < 3 || cs->shape.k > REC_MAX_K)
            continue;
        want x = {cs->op, cs->dtype_in, cs->shape.k, 1, 1};
        if (cs->op != KCS_OP_DOT)
            x.m = cs->shape.m < REC_MAX_DIM ? (cs->shape.m > 0 ? cs->shape.m : 1) : REC_MAX_DIM;
        if (cs->op == KCS_OP_GEMM)
            x.n = cs->shape.n < REC_MAX_DIM ? (cs->shape.n > 0 ? cs->shape.n : 1) : REC_MAX_DIM;
        int dup = 0;
        for (int i = 0; i < nw && !dup; i++)
            dup = !memcmp(&w[i], &x, sizeof x);
        if (!dup)
            w[nw++] = x;
    }
    return nw;
}

int kcs_order_record(const struct kcs_rank_binding *b, const struct kcs_plan *plan,
                     MPI_Comm comm, int verbose, char **text_p, kcs_error *err)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    want w[REC_MAX_PROBES];
    int nw = probes_of(plan, w);
    sb out = {0};
    char sch[64];
    put(&out, "{\"rank\": %d, \"backend\": ", rank);
    put_str(&out, b->pl.backend);
    put(&out, ", \"profile\": ");
    put_str(&out, b->pl.profile);
    put(&out, ", \"variant\": ");
    put_str(&out, b->pl.variant);
    put(&out, ", \"schedule\": ");
    put_str(&out, kcs_schedule_str(&b->pl.schedule, sch, sizeof sch));
    put(&out, ", \"model\": ");
    put_str(&out, b->info.model);
    put(&out, ", \"probes\": [");
    for (int i = 0; i < nw; i++) {
        if (rank == 0 && verbose)
            fprintf(stderr, "[rank 0] record_order: %s k %lld (%d of %d)\n", kcs_op_name(w[i].op),
                    (long long)w[i].k, i + 1, nw);
        put(&out, "%s\n  {\"op\": \"%s\", \"dtype_in\": \"%s\", \"k\": %lld, \"m\": %lld, "
                  "\"n\": %lld", i ? "," : "", kcs_op_name(w[i].op), kcs_format_name(w[i].in),
            (long long)w[i].k, (long long)w[i].m, (long long)w[i].n);
        if (!b->ctx || b->broken) {
            put(&out, ", \"error\": ");
            put_str(&out, b->why[0] ? b->why : "backend unavailable");
            put(&out, "}");
            continue;
        }
        kcs_order_opts o = {.op = w[i].op, .k = w[i].k, .m = w[i].m, .n = w[i].n,
                            .variant = b->pl.profile[0] ? "native" : b->pl.variant,
                            .schedule = b->pl.schedule, .in = w[i].in, .seed = 1, .verify = 16,
                            .recheck = 16};
        kcs_order_result r;
        kcs_error e = {0};
        if (kcs_order_probe(b->ops, b->ctx, &o, &r, &e)) {
            put(&out, ", \"error\": ");
            put_str(&out, e.msg);
            put(&out, "}");
            continue;
        }
        put(&out, ", \"calls\": %ld, \"seconds\": %.3f, \"trees\": [", r.calls, r.seconds);
        for (int t = 0; t < r.ntrees; t++) {
            put(&out, "%s{\"outputs\": [", t ? ", " : "");
            for (int a = 0; a < r.trees[t].nout; a++)
                put(&out, "%s%d", a ? "," : "", r.trees[t].outputs[a]);
            put(&out, "], \"tree\": ");
            put_str(&out, r.trees[t].tree);
            put(&out, "}");
        }
        put(&out, "]");
        if (r.call_varies) {
            /* the trees at the other call seed, which answered otherwise */
            kcs_order_opts o2 = o;
            o2.seed = o.seed ^ KCS_ORDER_RECHECK_SEED;
            o2.recheck = 0;
            kcs_order_result r2;
            put(&out, ", \"call_varies\": true");
            if (kcs_order_probe(b->ops, b->ctx, &o2, &r2, &e)) {
                put(&out, ", \"other_call_error\": ");
                put_str(&out, e.msg);
            } else {
                put(&out, ", \"other_call\": [");
                for (int t = 0; t < r2.ntrees; t++) {
                    put(&out, "%s{\"outputs\": [", t ? ", " : "");
                    for (int a = 0; a < r2.trees[t].nout; a++)
                        put(&out, "%s%d", a ? "," : "", r2.trees[t].outputs[a]);
                    put(&out, "], \"other_tree\": ");
                    put_str(&out, r2.trees[t].tree);
                    put(&out, "}");
                }
                put(&out, "]");
                kcs_order_result_free(&r2);
            }
        }
        put(&out, "}");
        kcs_order_result_free(&r);
    }
    put(&out, "]}");
    /* every rank: every rank's record, "[rec0,\nrec1, ...]" */
    int len = out.oom ? -1 : (int)out.len, *lens = malloc((size_t)size * sizeof *lens);
    int *offs = malloc((size_t)size * sizeof *offs), bad = !lens || !offs || len < 0, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad) {
        free(out.s);
        free(lens);
        free(offs);
        return kcs_fail(err, KCS_E_NOMEM, "record_order: out of memory");
    }
    MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm);
    long total = 0;
    for (int r = 0; r < size; r++) {
        offs[r] = (int)total;
        total += lens[r];
    }
    char *all = malloc((size_t)total + 1);
    char *text = malloc((size_t)total + 3 * (size_t)size + 8);
    bad = !all || !text;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (!anybad)
        MPI_Allgatherv(out.s, len, MPI_CHAR, all, lens, offs, MPI_CHAR, comm);
    free(out.s);
    if (anybad) {
        free(all);
        free(text);
        free(lens);
        free(offs);
        return kcs_fail(err, KCS_E_NOMEM, "record_order: out of memory");
    }
    char *p = text;
    *p++ = '[';
    for (int r = 0; r < size; r++) {
        if (r) {
            *p++ = ',';
            *p++ = '\n';
        }
        memcpy(p, all + offs[r], (size_t)lens[r]);
        p += lens[r];
    }
    *p++ = ']';
    *p++ = '\n';
    *p = '\0';
    free(all);
    free(lens);
    free(offs);
    *text_p = text;
    return 0;
}
