/* The body of `kcs _readback` (store_readback.h): the checks of
 * store_verify.c in a process of their own, reporting each step. */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "store_h5.h"
#include "store_readback.h"
#include "store_readback_wire.h"

static void tick_out(void *ctx)
{
    int fd = *(int *)ctx;
    char c = 'P';
    kcs_fd_write_all(fd, &c, 1);
}

int kcs_readback_child_main(int in, int out)
{
    wire_head h;
    if (kcs_fd_read_all(in, &h, sizeof h, -1.0) != 0 || h.magic != MAGIC ||
        h.path_len > 1 << 20 || h.n_cases < 0 || h.n_cases > ((int64_t)1 << 32)) {
        fprintf(stderr, "kcs _readback: internal command of kcs run (bad or missing request)\n");
        return 2;
    }
    char *path = calloc(h.path_len + 1, 1);
    int64_t *ids = malloc(((size_t)h.n_cases + 1) * sizeof *ids);
    uint64_t *digests = malloc(((size_t)h.n_cases + 1) * sizeof *digests);
    if (!path || !ids || !digests || kcs_fd_read_all(in, path, h.path_len, -1.0) != 0 ||
        kcs_fd_read_all(in, ids, (size_t)h.n_cases * sizeof *ids, -1.0) != 0 ||
        kcs_fd_read_all(in, digests, (size_t)h.n_cases * sizeof *digests, -1.0) != 0) {
        free(path);
        free(ids);
        free(digests);
        return 2;
    }
    kcs_readback_spec sp = {.path = path, .mode = h.mode, .rank = h.rank, .n_ranks = h.n_ranks,
                            .max_trials = h.max_trials, .n_samples = h.n_samples,
                            .n_cases = h.n_cases, .case_ids = ids, .digests = digests};
    memcpy(sp.plan_hash, h.plan_hash, sizeof sp.plan_hash);
    sp.plan_hash[sizeof sp.plan_hash - 1] = '\0';
    kcs_h5_quiet();
    /* this process is the isolation of the reads (store_vlen.c); beyond the
     * usual headroom, it allocates one case's rows and all ranks' samples */
    unsigned long long extra =
        ((unsigned long long)(h.max_trials > 0 ? h.max_trials : 0) + 1) * sizeof(kcs_result_rec) +
        ((unsigned long long)(h.n_ranks > 0 ? h.n_ranks : 0) *
             (unsigned long long)(h.n_samples > 0 ? h.n_samples : 0) + 1) * sizeof(double);
    kcs_h5_vlen_contain(extra);
    kcs_error err = {0};
    int rc = kcs_store_check(&sp, tick_out, &out, &err);
    int32_t code = rc ? (int32_t)err.code : 0;
    uint32_t len = rc ? (uint32_t)strlen(err.msg) : 0;
    char r = 'R';
    int sent = kcs_fd_write_all(out, &r, 1) == 0 &&
               kcs_fd_write_all(out, &code, sizeof code) == 0 &&
               kcs_fd_write_all(out, &len, sizeof len) == 0 &&
               kcs_fd_write_all(out, err.msg, len) == 0;
    free(path);
    free(ids);
    free(digests);
    return sent ? 0 : 1;
}
