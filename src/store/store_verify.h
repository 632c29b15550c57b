/* Trust nothing a parallel close says: reserve the dataset's space before
 * writing it, and read it back before it is renamed into place.
 *
 * MPI-IO layers do not always report a failed write (OMPIO drops some
 * pwritev errors below HDF5), and a write that fails on one rank inside a
 * collective HDF5 call can leave the others waiting in it for ever (ROMIO
 * on a full disk). So the runner reserves the file's estimated size with
 * fallocate before the first case is written (a full disk then fails
 * before any collective write, on rank 0, cleanly), and after the
 * collective close it fsyncs the file, trims it to HDF5's end of allocation,
 * reopens it read-only and compares every rank's rows with what it wrote. */
#ifndef KCS_STORE_VERIFY_H
#define KCS_STORE_VERIFY_H

#include <mpi.h>
#include <stdint.h>

#include "error.h"
#include "store.h"

/* Canonical digest of a (case, rank)'s result rows and sample row, field
 * by field (padding and bytes after a string's NUL do not count). */
uint64_t kcs_store_rows_digest(const kcs_result_rec *rows, int n_rows, const double *samples,
                               int n_samples);
/* From now on the store records in digests[case_idx] the digest of the
 * rows and samples it hands to HDF5 for each case (digests has n_cases). */
void kcs_store_record_digests(kcs_store *st, uint64_t *digests);

/* An upper bound of the size of the finished file (data, chunk slack,
 * metadata per case, texts). */
int64_t kcs_store_size_estimate(const kcs_store_meta *m);
/* Local (rank 0): allocate bytes for path (fallocate; file systems without
 * it are left alone). KCS_E_IO naming the shortfall on ENOSPC/EDQUOT. */
int kcs_store_reserve(const char *path, int64_t bytes, kcs_error *err);

/* Collective, after a successful kcs_store_close(): rank 0 fsyncs path,
 * checks its size against HDF5's end of allocation and trims the
 * reservation; every rank then reopens it read-only and checks the
 * superblock, the root attributes, every table's shape and its own rows and
 * samples of every case against digests[] (kcs_store_record_digests).
 * The same code and message on every rank (KCS_E_IO on any difference).
 * exe: the kcs executable; each step then runs in `exe _readback` under a
 * stall limit (store_readback.h), so that a damaged file cannot hang a
 * rank inside HDF5. NULL: in this process. */
int kcs_store_verify(const char *path, MPI_Comm comm, const kcs_store_meta *m,
                     const uint64_t *digests, const char *exe, kcs_error *err);

#endif
