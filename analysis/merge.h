/* The merged dataset of `kcs reduce a.h5 b.h5 ...`: a schema-1 kcs dataset
 * of its own (kcs reduce and h5py read it like any other), written serially
 * while the view streams the cases:
 *   /                      the schema's root attributes; content = "merged",
 *                          study_name "merge: <a> + <b> ...", plan_hash the
 *                          XXH3 of the sources' plan hashes
 *   /provenance/ranks      every source's ranks, renumbered (file 2's ranks
 *                          are n1.., ...)
 *   /provenance/build      the first source's; each source's own build,
 *                          ranks, study text and root attributes are kept
 *                          under /provenance/sources/<i>/
 *   /provenance/case_origin  where each merged case's inputs come from
 *                          (source, its case id there, study seed)
 *   /study, /contracts/<id>  the first source's study text; every contract
 *                          text (the first source holding an id wins)
 *   /cases, /results, /samples/<case_id>  the union of cases, case ids
 *                          renumbered 0..n-1; a source that lacks a case
 *                          contributes rows with status "absent" */
#ifndef KCS_MERGE_H
#define KCS_MERGE_H

#include "h5out.h"
#include "view.h"

typedef struct kcs_merge_out kcs_merge_out;

int kcs_merge_out_open(const char *path, kcs_view *v, const char *command_line,
                       kcs_merge_out **m_p, kcs_error *err);
/* Case c of the view, in order 0, 1, ... */
int kcs_merge_out_case(kcs_merge_out *m, const kcs_view *v, int64_t c, const kcs_result_rec *res,
                       const double *samples, int have_samples, kcs_error *err);
/* Write /cases and /provenance/case_origin, mark the dataset complete,
 * close it and seal it (content digests, store_digest.h): the merged
 * dataset is raw data like a run's, never written again. */
int kcs_merge_out_finish(kcs_merge_out *m, const kcs_view *v, kcs_error *err);
void kcs_merge_out_abort(kcs_merge_out *m);

#endif
