/* Size limits of the YAML files kcs reads (contracts, studies), enforced
 * on the event stream before a tree is built, so that `kcs lint` and every
 * loader stay linear in time and bounded in memory on large or adversarial
 * input (contracts/README.md states them). Real contracts and studies are
 * far below every limit. */
#ifndef KCS_YAMLX_LIMITS_H
#define KCS_YAMLX_LIMITS_H

#include <libfyaml.h>
#include <stddef.h>

#define KCS_YAML_MAX_KEYS 1024L         /* keys of one mapping */
#define KCS_YAML_MAX_ITEMS 65536L       /* items of one list */
#define KCS_YAML_MAX_NODES 262144L      /* scalars + collections in one file */
#define KCS_YAML_MAX_KEY_WORK 4194304L  /* sum over mappings of keys^2/2 */
#define KCS_YAML_MAX_DEPTH 1024L        /* collections open at once (the tree check says 256) */

typedef struct kcs_yaml_limit_hit {
    int line, col;  /* 1-based position of the node that went over */
    char msg[160];
} kcs_yaml_limit_hit;

/* A diagnostics object that collects errors and prints none (NULL: out of
 * memory); the parse configuration kcs uses with it. */
struct fy_diag *kcs_yaml_quiet_diag(void);
#define KCS_YAML_PARSE_CFG(diag) {.flags = FYPCF_QUIET | FYPCF_JSON_NONE, .diag = (diag)}

/* A quiet event parser over text[0..len) (errors collected, none printed):
 * 0 with *fyp_p (NULL when libfyaml could not start one) and *diag_p set,
 * or -1 out of memory. kcs_yaml_events_close() them. */
int kcs_yaml_events_open(const char *text, size_t len, struct fy_parser **fyp_p,
                         struct fy_diag **diag_p);
void kcs_yaml_events_close(struct fy_parser *fyp, struct fy_diag *diag);

/* One linear pass over text's events. 1: a limit is exceeded (hit says
 * where and which); 0: within the limits, or a syntax error (left to the
 * tree builder, which reports it with its position); -1: out of memory. */
int kcs_yaml_prescan(const char *text, size_t len, kcs_yaml_limit_hit *hit);

#endif
