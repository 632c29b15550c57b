/* Strict YAML reading on libfyaml with diagnostics "file:line:col: field:
 * message". A kcs_yctx collects several errors per file (up to a cap) so a
 * user sees them all at once. */
#ifndef KCS_YAMLX_H
#define KCS_YAMLX_H

#include <libfyaml.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define KCS_YAML_MAX_ERRORS 16

typedef struct kcs_yctx {
    const char *path;
    struct fy_document *doc;
    char *text;       /* file contents (owned) */
    int n_errors;
    char errors[KCS_YAML_MAX_ERRORS][256];
} kcs_yctx;

/* Read and parse path. Syntax errors are reported with their position.
 * The root must be a mapping. */
int kcs_yaml_open(kcs_yctx *y, const char *path, kcs_error *err);
/* Same, from a string (path is used in messages only). */
int kcs_yaml_open_string(kcs_yctx *y, const char *path, const char *text, kcs_error *err);
void kcs_yaml_close(kcs_yctx *y);
struct fy_node *kcs_yaml_root(kcs_yctx *y);

/* Record "path:line:col: field: message" at node's position (node may be
 * NULL: the position of the root). */
void kcs_yaml_error(kcs_yctx *y, struct fy_node *node, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* If errors were recorded: fill err with all of them (newline separated),
 * return KCS_E_INVAL; else 0. */
int kcs_yaml_finish(kcs_yctx *y, kcs_error *err);

/* Mapping checks: every key of map must be in allowed (NULL-terminated);
 * unknown keys are errors naming the key and the allowed set. */
void kcs_yaml_check_keys(kcs_yctx *y, struct fy_node *map, const char *field,
                         const char *const *allowed);
/* Child of a mapping, or NULL. required: record "missing" error if absent. */
struct fy_node *kcs_yaml_get(kcs_yctx *y, struct fy_node *map, const char *key, bool required,
                             const char *field);

/* Typed scalar readers: return true on success; on a type error they record
 * a diagnostic and return false. field is the dotted path for messages. */
bool kcs_yaml_str(kcs_yctx *y, struct fy_node *n, const char *field, char *buf, size_t len);
char *kcs_yaml_strdup(kcs_yctx *y, struct fy_node *n, const char *field); /* malloc'd */
bool kcs_yaml_int(kcs_yctx *y, struct fy_node *n, const char *field, int64_t lo, int64_t hi,
                  int64_t *v_p);
bool kcs_yaml_num(kcs_yctx *y, struct fy_node *n, const char *field, double *v_p);
bool kcs_yaml_bool(kcs_yctx *y, struct fy_node *n, const char *field, bool *v_p);
/* The 1-based line and column of a node. */
void kcs_yaml_pos(struct fy_node *n, int *line_p, int *col_p);

#endif
