/* The file builder's insides, shared by h5read_recipe.c (the file, its
 * attributes, texts and samples, the damage) and h5read_tables.c (the
 * three tables and the links in their place). Test code only. */
#ifndef KCS_H5READ_BUILD_H
#define KCS_H5READ_BUILD_H

#include <hdf5.h>
#include <stdint.h>

#include "h5read_recipe.h"

#define H5R_MAX_PATHS 32

typedef struct h5r_builder {
    const h5r_recipe *rc;
    const char *path;
    hid_t file;
    char flippable[H5R_MAX_PATHS][96]; /* datasets without variable-length data */
    int n_flippable;
} h5r_builder;

/* n pseudo-random bytes from seed. */
void h5r_pattern(unsigned char *p, size_t n, unsigned seed);
/* obj is a dataset whose raw bytes may be flipped (no variable-length data). */
void h5r_note_flippable(h5r_builder *b, const char *obj);
/* A dataset at obj: rank -1 a null dataspace, 0 scalar, else dims[rank],
 * in layout (H5R_L_*; HDF5's default when it refuses that one). */
hid_t h5r_make_dset(h5r_builder *b, const char *obj, hid_t t, int rank, const hsize_t *dims,
                    int layout, uint64_t chunk);
/* The table (H5R_CASES, ...) as the recipe says; links in place of tables
 * are made by h5r_make_links once every table exists. */
void h5r_make_table(h5r_builder *b, int table);
void h5r_make_links(h5r_builder *b);

#endif
