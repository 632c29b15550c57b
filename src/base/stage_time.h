/* Where a run's time goes: wall seconds this process spent in each stage of
 * the case loop (runner.c, protocol.c), and the process CPU seconds (all its
 * threads, BLAS's included) in them, summed since the last reset. Read by
 * `kcs bench study` (per rank, as shares of end to end). The runner is
 * single-threaded, so plain process-wide counters suffice. */
#ifndef KCS_STAGE_TIME_H
#define KCS_STAGE_TIME_H

typedef enum kcs_stage {
    KCS_STAGE_INPUTS = 0, /* kcs_inputs_make: generation, rounding, input digests */
    KCS_STAGE_ORACLE,     /* kcs_oracle_run: reference, |A||B|, scale */
    KCS_STAGE_KERNEL,     /* the guarded backend call(s), incl. repeats */
    KCS_STAGE_METRICS,    /* errors, ULPs, output digest */
    KCS_STAGE_VERDICT,    /* tolerance and signatures */
    KCS_STAGE_STORE,      /* HDF5: create, per-case writes, close */
    KCS_STAGE_JOURNAL,    /* the durable per-case journal record */
    KCS_STAGE_SYNC,       /* collectives: agreement, input digests, gathering the shared
                        * reference (waiting for other ranks included) */
    KCS_STAGE_COUNT
} kcs_stage;

/* [0, KCS_STAGE_COUNT): wall seconds; [KCS_STAGE_COUNT, 2 KCS_STAGE_COUNT): CPU. */
extern double kcs_stage_seconds[2 * KCS_STAGE_COUNT];

typedef struct kcs_stage_mark {
    double wall, cpu;
} kcs_stage_mark;

double kcs_stage_now(void); /* monotonic seconds */
double kcs_stage_cpu(void); /* process CPU seconds */
void kcs_stage_reset(void);
const char *kcs_stage_name(kcs_stage s);

static inline kcs_stage_mark kcs_stage_begin(void)
{
    kcs_stage_mark m = {kcs_stage_now(), kcs_stage_cpu()};
    return m;
}

static inline void kcs_stage_add(kcs_stage s, kcs_stage_mark t0)
{
    kcs_stage_seconds[s] += kcs_stage_now() - t0.wall;
    kcs_stage_seconds[KCS_STAGE_COUNT + s] += kcs_stage_cpu() - t0.cpu;
}

#endif
