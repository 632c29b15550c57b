/* kcs calibrate --sweep: the power-curve table (src/calib_sweep.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_sweep.h"
#include "cli.h"

int kcs_calibrate_sweep_cmd(kcs_contract **cs, int n, const kcs_calib_run *run, int trials,
                            long long min_k, long long max_k, const char *out,
                            const char *cmdline, int *rc_p, kcs_error *err)
{
    if (trials < 1 || trials > 100000) {
        *rc_p = kcs_fail(err, KCS_E_INVAL, "--trials: %d is not in 1..100000", trials);
        return 2;
    }
    kcs_sweep_opts o = {trials, max_k, 4, 1, min_k};
    kcs_sweep_row *rows = NULL;
    int nr = 0, misses = 0;
    *rc_p = kcs_calib_sweep(cs, n, run, &o, &rows, &nr, &misses, err);
    if (*rc_p)
        return 0;
    printf("kcs calibrate --sweep: cpu backend, %d trial(s) per point; rate = flagged / trials, "
           "[95%% Clopper-Pearson]; a bad kernel's trials are those where its output differed "
           "from every conforming kernel's (INERT: identical, the defect did not show; for "
           "nondeterminism and batch dependence, where a probe saw it: calib_sweep_proto.h)\n",
           trials);
    printf("%-9s %-10s %-26s %-10s %-6s %5s %9s %7s %6s %8s  %s\n", "CONTRACT", "OP", "KERNEL",
           "CLASS", "DTYPE", "N", "K", "FLAGGED", "INERT", "RATE", "95% CI  MxNxK");
    for (int i = 0; i < nr; i++) {
        const kcs_sweep_row *r = &rows[i];
        int miss = kcs_sweep_row_missed(r);
        char fl[24];
        snprintf(fl, sizeof fl, "%d/%d", r->flagged, r->trials);
        printf("%-9s %-10s %-26s %-10s %-6s %5lld %9lld %7s %6d %8.3f  [%.3f, %.3f]  "
               "%lldx%lldx%lld%s\n",
               r->contract, r->op, r->kernel, r->klass, r->dtype_in, (long long)r->n,
               (long long)r->k, fl, r->inert, r->rate, r->ci_lo, r->ci_hi, (long long)r->m,
               (long long)r->n, (long long)r->k,
               miss ? (strcmp(r->klass, "bad") ? "  FALSE ALARM" : "  MISSED") : "");
    }
    printf("\n%d point(s); %d bad-kernel point(s) detected in < 99%% of the trials where the "
           "defect showed, or conforming point(s) flagged\n", nr, misses);
    if (out) {
        *rc_p = kcs_store_sweep_write(out, rows, nr, cmdline, err);
        if (!*rc_p)
            printf("sweep written to %s (/calibration_sweep)\n", out);
    }
    free(rows);
    return misses ? 3 : 0;
}
