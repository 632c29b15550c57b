#include "placement.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* auto: the i-th device of this node, accelerators before the CPU. */
static void auto_placement(MPI_Comm comm, kcs_placement *p)
{
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    char names[64][16];
    int devs[64], n = 0;
    const kcs_backend_ops *const *all = kcs_backends_all();
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; all[i]; i++) {
            if (strcmp(all[i]->name, "plugin") == 0)
                continue; /* a plugin needs a path: never an automatic choice */
            int is_cpu = strcmp(all[i]->name, "cpu") == 0;
            if (is_cpu != (pass == 1))
                continue;
            kcs_device_info info[KCS_MAX_DEVICES];
            int count = 0;
            kcs_error e = {0};
            if (all[i]->discover(info, KCS_MAX_DEVICES, &count, &e) != 0)
                continue;
            for (int d = 0; d < count && d < KCS_MAX_DEVICES && n < 64; d++) {
                snprintf(names[n], sizeof names[n], "%s", all[i]->name);
                devs[n++] = d;
            }
        }
    }
    memset(p, 0, sizeof *p);
    snprintf(p->variant, sizeof p->variant, "native");
    if (n == 0) {
        snprintf(p->backend, sizeof p->backend, "cpu");
        return;
    }
    snprintf(p->backend, sizeof p->backend, "%s", names[local % n]);
    p->device = devs[local % n];
}

void kcs_binding_open(const kcs_study *s, const char *plugin, MPI_Comm comm, int verbose,
                      kcs_rank_binding *b)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    memset(b, 0, sizeof *b);
    if (plugin) {
        kcs_error e = {0};
        char text[300];
        snprintf(text, sizeof text, "plugin:%s", plugin);
        kcs_placement_parse(text, &b->pl, &e);
    } else if (s->placement_auto) {
        auto_placement(comm, &b->pl);
    } else {
        b->pl = *kcs_study_placement(s, rank);
    }
    if (b->pl.device < 0)
        b->pl.device = 0;
    snprintf(b->info.backend, sizeof b->info.backend, "%s", b->pl.backend);
    b->info.index = b->pl.device;
    b->ops = kcs_backend_find(b->pl.backend);
    if (!b->ops) {
        snprintf(b->status, sizeof b->status, "unavailable");
        snprintf(b->why, sizeof b->why, "backend %s is %s", b->pl.backend,
                 kcs_backend_excluded(b->pl.backend) ? "excluded by KCS_BACKENDS"
                                                      : "not compiled in");
        goto report;
    }
    kcs_backend_config cfg = {
        .profile = b->pl.profile[0] ? b->pl.profile : NULL,
        .path = b->pl.path[0] ? b->pl.path : NULL,
        .options = b->pl.options[0] ? b->pl.options : NULL,
        .verbose = verbose,
    };
    kcs_error e = {0};
    if (b->ops->open(b->pl.device, &cfg, &b->ctx, &e) != 0) {
        b->ctx = NULL;
        snprintf(b->status, sizeof b->status, "unavailable");
        snprintf(b->why, sizeof b->why, "%s", e.msg);
        goto report;
    }
    if (b->ops->describe(b->ctx, &b->info, &e) != 0)
        snprintf(b->why, sizeof b->why, "describe: %s", e.msg);
    snprintf(b->status, sizeof b->status, "ok");
report:
    if (!b->ctx)
        fprintf(stderr, "kcs: rank %d: %s:%d unavailable: %s\n", rank, b->pl.backend,
                b->pl.device, b->why);
    else if (verbose) {
        char pl[256];
        fprintf(stderr, "[rank %d] %s on %s\n", rank, kcs_placement_str(&b->pl, pl, sizeof pl),
                b->info.model);
    }
}

void kcs_binding_apply(const kcs_rank_binding *b, kcs_call *call)
{
    call->variant = b->pl.variant;
    call->schedule = b->pl.schedule;
    if (b->pl.acc_set)
        call->acc = b->pl.acc;
    call->profile = b->pl.profile[0] ? b->pl.profile : NULL;
}

void kcs_binding_record(const kcs_rank_binding *b, int rank, kcs_rank_rec *r)
{
    memset(r, 0, sizeof *r);
    r->rank = rank;
    gethostname(r->host, sizeof r->host - 1);
    snprintf(r->backend, sizeof r->backend, "%s", b->pl.backend);
    r->device = b->pl.device;
    snprintf(r->vendor, sizeof r->vendor, "%s", b->info.vendor);
    snprintf(r->model, sizeof r->model, "%s", b->info.model);
    snprintf(r->arch, sizeof r->arch, "%s", b->info.arch);
    snprintf(r->driver, sizeof r->driver, "%s", b->info.driver);
    snprintf(r->runtime, sizeof r->runtime, "%s", b->info.runtime);
    snprintf(r->uuid, sizeof r->uuid, "%s", b->info.uuid);
    snprintf(r->profile, sizeof r->profile, "%s", b->pl.profile);
    kcs_placement_str(&b->pl, r->variant, sizeof r->variant);
    snprintf(r->status, sizeof r->status, "%s", b->status);
    if (!b->ctx)
        snprintf(r->why, sizeof r->why, "%s", b->why);
}

void kcs_binding_close(kcs_rank_binding *b)
{
    if (b->ctx && b->ops)
        b->ops->close(b->ctx);
    b->ctx = NULL;
}
