/* The shipped contracts (contracts/ of the source tree) as the calibration
 * loads them, for the suites of tests/unit/calibrate: loaded before the
 * suite runs, freed after it (the suite's fixture). */
#ifndef KCS_TEST_SHIPPED_CONTRACTS_H
#define KCS_TEST_SHIPPED_CONTRACTS_H

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"

static kcs_contract **contracts;
static int n_contracts;

/* Load them into contracts / n_contracts; 0, or 1 with the reason printed. */
static inline int shipped_contracts_load(void)
{
    kcs_error err = {0};
    if (kcs_calib_load(KCS_TEST_SOURCE_DIR "/contracts", NULL, 0, &contracts, &n_contracts,
                       &err) != 0) {
        fprintf(stderr, "contracts: %s\n", err.msg);
        return 1;
    }
    return 0;
}

static inline int shipped_contracts_free(void)
{
    kcs_calib_contracts_free(contracts, n_contracts);
    return 0;
}

/* The shipped contract `id`; fails the test when there is none. */
static inline const kcs_contract *find(const char *id)
{
    for (int i = 0; i < n_contracts; i++)
        if (!strcmp(contracts[i]->id, id))
            return contracts[i];
    CU_FAIL_FATAL("contract not shipped");
    return NULL;
}

#endif
