/* A recipe for a (possibly hostile) kcs dataset, built with the HDF5 API
 * by h5r_build(): which objects exist, their shapes, types and values,
 * and at the end a few byte flips confined to the raw data of contiguous
 * datasets and an optional truncation. HDF5's own metadata is never
 * damaged byte-wise (HDF5 1.10 is known to crash on some corrupt
 * metadata, which kcs cannot fix). Used by fuzz_h5read.c; every field's
 * zero value means "as a valid kcs dataset has it". */
#ifndef KCS_H5READ_RECIPE_H
#define KCS_H5READ_RECIPE_H

#include <stdint.h>

#define H5R_MAX_FIELDS 24
#define H5R_MAX_CASES 6
#define H5R_MAX_CONTRACTS 5
#define H5R_MAX_FLIPS 8
#define H5R_MAX_ROWS_WRITTEN 4096 /* larger tables are declared, never written */

enum h5r_table { H5R_CASES, H5R_RESULTS, H5R_RANKS, H5R_N_TABLES };

/* The root attributes of schema version 1, in this order. */
enum h5r_attr {
    H5R_A_SCHEMA,
    H5R_A_SCHEMA_VERSION,
    H5R_A_SOFTWARE,
    H5R_A_SOFTWARE_VERSION,
    H5R_A_GIT_HASH,
    H5R_A_CREATED,
    H5R_A_STUDY_NAME,
    H5R_A_PLAN_HASH,
    H5R_A_COMMAND_LINE,
    H5R_A_N_RANKS,
    H5R_A_N_CASES,
    H5R_A_COMPLETE,
    H5R_A_MAX_TRIALS,
    H5R_A_N_SAMPLES,
    H5R_N_ATTRS
};

enum h5r_attr_kind {
    H5R_AK_VALID, /* the value and type the writer uses */
    H5R_AK_ABSENT,
    H5R_AK_INT,       /* ival as an integer of width bytes */
    H5R_AK_STR,       /* text repeated to str_len bytes */
    H5R_AK_FLOAT,     /* (double)ival */
    H5R_AK_ARRAY,     /* two int32 values */
    H5R_AK_NULLSPACE, /* an int32 attribute with a null dataspace */
    H5R_AK_EMPTY,     /* an int32 attribute of 0 elements */
    H5R_AK_N
};

typedef struct h5r_attr_spec {
    int kind;
    int width;       /* INT: 1, 2, 4 or 8 bytes */
    int is_unsigned; /* INT */
    int64_t ival;    /* INT, FLOAT, ARRAY */
    int str_pad;     /* STR: 0 variable length, 1 nullterm, 2 nullpad, 3 spacepad */
    uint32_t str_len;
    char text[16]; /* STR: NUL-terminated, repeated to str_len */
} h5r_attr_spec;

enum h5r_table_kind {
    H5R_TK_DATASET,
    H5R_TK_ABSENT,
    H5R_TK_GROUP,         /* a group of that name */
    H5R_TK_SOFT_OTHER,    /* a soft link to the next table */
    H5R_TK_SOFT_DANGLING, /* a soft link to nothing */
    H5R_TK_SOFT_LOOP,     /* a soft link to itself */
    H5R_TK_EXTERNAL,      /* an external link into a file that does not exist */
    H5R_TK_HARD_OTHER,    /* a second name of the next table's dataset */
    H5R_TK_N
};

/* Member operations on the compound type of a table. */
enum h5r_member_op {
    H5R_MT_KEEP,
    H5R_MT_DROP,
    H5R_MT_RENAME,
    H5R_MT_I8,
    H5R_MT_U16,
    H5R_MT_I32,
    H5R_MT_U32,
    H5R_MT_I64,
    H5R_MT_U64,
    H5R_MT_F32,
    H5R_MT_F64,
    H5R_MT_LDOUBLE,
    H5R_MT_STR,
    H5R_MT_VSTR,
    H5R_MT_OPAQUE,
    H5R_MT_ENUM,
    H5R_MT_ARRAY,
    H5R_MT_BITFIELD,
    H5R_MT_NESTED,
    H5R_MT_SWAP, /* the name of another field (marg picks it), that one taking this name */
    H5R_MT_N
};

enum h5r_layout {
    H5R_L_CONTIG,
    H5R_L_CHUNKED,
    H5R_L_COMPACT,
    H5R_L_DEFLATE,
    H5R_L_UNLIMITED,
    H5R_L_EXTERNAL,
    H5R_L_N
};

typedef struct h5r_table_spec {
    int kind;     /* H5R_TK_* */
    int space;    /* 0: 1-D, 1: scalar, 2: 2-D [rows, 2], 3: null */
    int rows_set; /* 0: the consistent row count; 1: `rows` */
    uint64_t rows;
    int layout;     /* H5R_L_* */
    uint64_t chunk; /* chunk rows */
    int write;      /* 0: every row, 1: none, 2: the first `partial` rows */
    uint64_t partial;
    int base;                            /* 0: compound, 1: int64, 2: fixed string, 3: double */
    int reverse;                         /* members in reverse order */
    unsigned char mop[H5R_MAX_FIELDS];   /* H5R_MT_* per field */
    unsigned short marg[H5R_MAX_FIELDS]; /* string size, rename variant, swap partner */
    int extra_member;                    /* 0: none, 1: an int, 2: a string, of an unknown name */
    int str_fill;                        /* string members filled to the brim (no NUL) */
    uint8_t seed;                        /* the bytes of members that are not kcs's own */
    int bad_ids;                         /* case_id/rank/trial fields of rows scrambled */
} h5r_table_spec;

enum h5r_sample_kind {
    H5R_SK_OK,
    H5R_SK_ABSENT,
    H5R_SK_INT,
    H5R_SK_F32,
    H5R_SK_STRING,
    H5R_SK_SWAPPED,
    H5R_SK_ONE_D,
    H5R_SK_THREE_D,
    H5R_SK_HUGE,
    H5R_SK_ZERO,
    H5R_SK_UNWRITTEN,
    H5R_SK_WRONG_NAME,
    H5R_SK_COMPOUND,
    H5R_SK_SCALAR,
    H5R_SK_GROUP,
    H5R_SK_N
};

enum h5r_text_kind {
    H5R_XK_OK, /* fixed length nullpad of exactly the text (the writer's form) */
    H5R_XK_ABSENT,
    H5R_XK_VLEN,
    H5R_XK_DECLARED, /* fixed length `len`, never written */
    H5R_XK_TWO,      /* two strings */
    H5R_XK_INT,
    H5R_XK_GROUP,
    H5R_XK_SPACEPAD,
    H5R_XK_NULLTERM_FULL, /* nullterm of `len` bytes all non-NUL */
    H5R_XK_VLEN_UNWRITTEN,
    H5R_XK_EMPTY_SPACE, /* a string dataset of 0 elements */
    H5R_XK_N
};

typedef struct h5r_text_spec {
    int kind;
    uint32_t len;
    int name; /* contracts: 0 plain id, 1 long, 2 spaces, 3 UTF-8, 4 "..", 5 leading dash */
} h5r_text_spec;

typedef struct h5r_flip {
    uint8_t region; /* which contiguous dataset (modulo their number) */
    uint32_t offset;
    uint8_t xor_mask;
} h5r_flip;

enum h5r_extra {
    H5R_X_ANALYSIS = 1,     /* an /analysis group with a table */
    H5R_X_MANY_ATTRS = 2,   /* 12 more root attributes (dense storage with libver latest) */
    H5R_X_OUTPUTS = 4,      /* an /outputs/<id> dataset */
    H5R_X_NO_BUILD = 8,     /* no /provenance/build */
    H5R_X_PROV_DATASET = 16 /* /provenance is a dataset (so there are no ranks) */
};

typedef struct h5r_recipe {
    int libver_latest;
    int n_ranks, n_cases, max_trials, n_samples; /* the consistent shape */
    h5r_attr_spec attr[H5R_N_ATTRS];
    h5r_table_spec table[H5R_N_TABLES];
    int samples_group; /* 0 group, 1 absent, 2 a dataset, 3 a soft link to /cases */
    unsigned char sample[H5R_MAX_CASES];
    h5r_text_spec study;
    int contracts_group; /* 0 group, 1 absent, 2 a dataset */
    int n_contracts;
    h5r_text_spec contract[H5R_MAX_CONTRACTS];
    unsigned extras;
    int n_flips;
    h5r_flip flip[H5R_MAX_FLIPS];
    uint16_t truncate; /* 0: none; else cut at size * truncate / 65536 */
} h5r_recipe;

/* A valid recipe: n_ranks 2, n_cases 2, max_trials 2, n_samples 3. */
void h5r_default(h5r_recipe *rc);

/* Write the recipe's file at path (replacing it). Returns 0 when a file is
 * there (whatever HDF5 refused to create along the way is simply missing)
 * and -1 when none could be created. Leaves no HDF5 object open. */
int h5r_build(const h5r_recipe *rc, const char *path);

#endif
