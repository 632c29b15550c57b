/* A study: which contracts, which ranks run which implementation, and the
 * cases to run. Expanded into a plan that every rank builds identically. */
#ifndef KCS_STUDY_H
#define KCS_STUDY_H

#include <stdint.h>

#include "contract.h"
#include "error.h"
#include "op.h"

#define KCS_MAX_PLACEMENT 64
#define KCS_MAX_CONTRACTS 32

/* What one rank runs: backend:device[:profile] with an implementation. */
typedef struct kcs_placement {
    char backend[16];
    int device;          /* -1: auto */
    char profile[32];    /* emulated silicon profile (cpu), with a library path:
                          * "nvidia-h100,fp8_promote=128" (profile.h) */
    char variant[32];    /* native | own | calibration variant */
    kcs_schedule schedule;
    kcs_acc acc;         /* accumulator of "own" (default: contract's) */
    int acc_set;
    char options[128];   /* backend build options */
    char path[256];      /* plugin library */
    uint32_t declares;   /* properties the study says the implementation declares, on top
                            of what its backend reports (declares.h: KCS_DECL_BIT) */
    int line;            /* study file line of the entry (0: not from a file) */
} kcs_placement;

typedef struct kcs_sweep {
    int contract;         /* index into study contracts */
    kcs_op op;
    kcs_format dtype_in, dtype_out;
    kcs_shape shapes[KCS_MAX_SHAPES];
    int n_shapes;         /* 0: the contract's measurement shapes */
    kcs_dist dists[KCS_MAX_DISTS];
    int n_dists;          /* 0: the contract's inputs */
    int trials;           /* 0: the contract's trials */
} kcs_sweep;

typedef struct kcs_study {
    char *path;
    char *text;
    char name[64];
    uint64_t seed;
    int placement_auto;
    kcs_placement placement[KCS_MAX_PLACEMENT];
    int n_placement;
    kcs_contract *contracts[KCS_MAX_CONTRACTS];
    int n_contracts;
    kcs_sweep *sweeps;
    int n_sweeps;
    int n_samples; /* output values sampled per case into /samples */
    double timeout_s; /* per kernel call; a hung call is marked timeout (default 600) */
    int64_t max_memory_mib; /* per-rank memory a case may need; larger plans are refused */
    int record_order; /* record_order: true: every rank's summation trees into
                         /provenance/order (src/run/probe_order_record.c) */
} kcs_study;

int kcs_study_load(const char *path, kcs_study **s_p, kcs_error *err);
void kcs_study_free(kcs_study *s);

/* One case of the plan. */
typedef struct kcs_case {
    int64_t id;
    int contract;       /* index into study contracts */
    kcs_op op;
    kcs_format dtype_in, dtype_out;
    kcs_acc acc;        /* declared by the contract */
    kcs_shape shape;
    kcs_dist dist;
    int trials;
    uint64_t seed;      /* derived from study seed and case id */
    int held_out;       /* the shape is one of the contract's held-out classes */
} kcs_case;

typedef struct kcs_plan {
    kcs_case *cases;
    int64_t n_cases;
    int max_trials;
    uint64_t hash;      /* XXH3 of the canonical plan text */
} kcs_plan;

int kcs_plan_build(const kcs_study *s, kcs_plan *plan_p, kcs_error *err);
void kcs_plan_free(kcs_plan *p);
/* The placement entry for a rank (cyclic over the list). */
const kcs_placement *kcs_study_placement(const kcs_study *s, int rank);
/* Parse "backend[:device[:profile]]" into p (other fields default). */
int kcs_placement_parse(const char *text, kcs_placement *p, kcs_error *err);
/* Whether kcs has a backend of that name at all, built here or not (the one
 * list of backend names; backends/registry.c answers kcs_backend_known
 * from it). */
int kcs_study_backend_known(const char *name);
/* "cpu:0 own pairwise fp32"-style description. */
const char *kcs_placement_str(const kcs_placement *p, char *buf, size_t len);

#endif
