/* The files of a bundle (kcs publish): relative paths under a root,
 * sorted, regular files only (a symbolic link is refused: a bundle holds
 * its own files). */
#ifndef KCS_PUB_WALK_H
#define KCS_PUB_WALK_H

#include "error.h"

typedef struct kcs_pub_files {
    char **path;
    int n;
} kcs_pub_files;

/* Every file under root/sub (sub "" for all), as paths relative to root. */
int kcs_pub_walk(const char *root, const char *sub, kcs_pub_files *out, kcs_error *err);
void kcs_pub_files_free(kcs_pub_files *f);

#endif
