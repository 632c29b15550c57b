/* Where a run's time goes: wall seconds this process spent in each stage of
 * the case loop (runner.c, protocol.c), summed since the last reset. Read by
 * `kcs bench study` (per rank, as shares of end to end). The runner is
 * single-threaded, so plain process-wide counters suffice. */
#ifndef KCS_STAGE_TIME_H
#define KCS_STAGE_TIME_H

typedef enum kcs_stage {
    KCS_ST_INPUTS = 0, /* kcs_inputs_make: generation, rounding, input digests */
    KCS_ST_ORACLE,     /* kcs_oracle_run: reference, |A||B|, scale */
    KCS_ST_KERNEL,     /* the guarded backend call(s), incl. repeats */
    KCS_ST_METRICS,    /* errors, ULPs, output digest */
    KCS_ST_VERDICT,    /* tolerance and signatures */
    KCS_ST_STORE,      /* HDF5: create, per-case writes, close */
    KCS_ST_JOURNAL,    /* the durable per-case journal record */
    KCS_ST_SYNC,       /* agreement and input-digest collectives (waiting included) */
    KCS_ST_COUNT
} kcs_stage;

extern double kcs_stage_seconds[KCS_ST_COUNT];

double kcs_stage_now(void); /* monotonic seconds */
void kcs_stage_reset(void);
const char *kcs_stage_name(kcs_stage s);

static inline void kcs_stage_add(kcs_stage s, double t0)
{
    kcs_stage_seconds[s] += kcs_stage_now() - t0;
}

#endif
