#include "backend_names.h"
#include "placement.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blas_info.h"

/* auto: the node-local rank's device. A GPU's vendor-native backend (cuda,
 * hip, level_zero) wins over the same GPU's OpenCL ICD and over the CPU:
 * with one GPU visible per rank (the scheduler's --gpus-per-task, or
 * scripts/slurm/pin-device) every rank takes its own GPU natively; with
 * several visible, node-local rank i takes the (i mod n)-th native device.
 * Only a node without any native device spreads its ranks over the other
 * devices (OpenCL before the CPU). */
static int is_native_gpu(const char *name)
{
#define KCS_BACKEND_GPU(n, kind, gpu)                                                          \
    if (gpu && strcmp(name, #n) == 0)                                                          \
        return 1;
    KCS_BACKEND_LIST(KCS_BACKEND_GPU)
#undef KCS_BACKEND_GPU
    return 0;
}

int kcs_placement_auto_pick(const char *const *backends, const int *counts, int nb, int local,
                            kcs_placement *p)
{
    const char *names[64];
    int devs[64], n = 0;
    /* pass 0: native GPU backends; 1: others but the CPU; 2: the CPU */
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1 && n > 0)
            break; /* a native GPU is there: never its ICD, never the CPU */
        for (int i = 0; i < nb; i++) {
            if (strcmp(backends[i], "plugin") == 0)
                continue; /* a plugin needs a path: never an automatic choice */
            int cls = is_native_gpu(backends[i]) ? 0 : strcmp(backends[i], "cpu") == 0 ? 2 : 1;
            if (cls != pass)
                continue;
            for (int d = 0; d < counts[i] && d < KCS_MAX_DEVICES && n < 64; d++) {
                names[n] = backends[i];
                devs[n++] = d;
            }
        }
    }
    memset(p, 0, sizeof *p);
    snprintf(p->variant, sizeof p->variant, "native");
    if (n == 0) {
        snprintf(p->backend, sizeof p->backend, "cpu");
        return 0;
    }
    int k = (local < 0 ? 0 : local) % n;
    snprintf(p->backend, sizeof p->backend, "%s", names[k]);
    p->device = devs[k];
    return n;
}

int kcs_placement_devices(const char *names[16], int counts[16])
{
    int nb = 0;
    const kcs_backend_ops *const *all = kcs_backends_all();
    for (int i = 0; all[i] && nb < 16; i++) {
        kcs_device_info info[KCS_MAX_DEVICES];
        int count = 0;
        kcs_error e = {0};
        if (strcmp(all[i]->name, "plugin") == 0 ||
            all[i]->discover(info, KCS_MAX_DEVICES, &count, &e) != 0)
            continue;
        names[nb] = all[i]->name;
        counts[nb++] = count;
    }
    return nb;
}

static void auto_placement(MPI_Comm comm, kcs_placement *p)
{
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    const char *names[16];
    int counts[16];
    int nb = kcs_placement_devices(names, counts);
    kcs_placement_auto_pick(names, counts, nb, local, p);
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
        KCS_SET_STATUS(b->status, KCS_ST_UNAVAILABLE);
        snprintf(b->why, sizeof b->why, "backend %s is %s", b->pl.backend,
                 kcs_backend_why(b->pl.backend));
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
        KCS_SET_STATUS(b->status, KCS_ST_UNAVAILABLE);
        snprintf(b->why, sizeof b->why, "%s", e.msg);
        goto report;
    }
    if (b->ops->describe(b->ctx, &b->info, &e) != 0)
        snprintf(b->why, sizeof b->why, "describe: %s", e.msg);
    KCS_SET_STATUS(b->status, KCS_ST_OK);
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

uint32_t kcs_binding_declares(const kcs_rank_binding *b, const kcs_call *call)
{
    uint32_t d = b->pl.declares;
    if (b->ops && b->ops->declares && b->ctx)
        d |= b->ops->declares(b->ctx, call);
    return d;
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
    int threads = 0;
    kcs_blas_info(r->blas, sizeof r->blas, &threads);
    r->blas_threads = threads;
    if (!b->ctx)
        snprintf(r->why, sizeof r->why, "%s", b->why);
}

void kcs_binding_close(kcs_rank_binding *b)
{
    if (b->ctx && b->ops)
        b->ops->close(b->ctx);
    b->ctx = NULL;
}
