/* The checks of the MPI test programs of tests/integration (allreduce_test,
 * oracle_shared_test, store_mpi_test): CHECK(cond, fmt, ...) counts a
 * failed check on this rank and says where; check_finish() sums them over
 * the ranks. Each program sets check_rank after MPI_Init. */
#ifndef KCS_TEST_MPI_CHECK_H
#define KCS_TEST_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

static int check_fails; /* failed checks on this rank */
static int check_rank;  /* this rank, for the messages */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            check_fails++;                                                                         \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", check_rank, __FILE__,         \
                    __LINE__, #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The failed checks of every rank summed (rank 0 prints "PROG: N ranks,
 * F failed checks"), then MPI_Finalize; main's exit status. */
static inline int check_finish(const char *prog)
{
    int total = 0, size = 0;
    MPI_Allreduce(&check_fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (check_rank == 0)
        printf("%s: %d ranks, %d failed checks\n", prog, size, total);
    MPI_Finalize();
    return total != 0;
}

#endif
