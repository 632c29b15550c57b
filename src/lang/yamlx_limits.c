/* Size limits of a YAML file, checked on libfyaml's event stream before a
 * document tree is built (yamlx_limits.h). The tree builder of libfyaml
 * 0.7.12 checks each new key of a mapping against the keys before it (time
 * quadratic in the keys of one mapping) and spends ~450 bytes per node; the
 * event parser is linear in time and constant in memory, so a file over
 * the limits is refused after one linear pass, before the tree exists. */
#include "yamlx_limits.h"

#include <stdio.h>
#include <string.h>

typedef struct frame {
    int mapping;     /* 1: mapping, 0: sequence */
    long children;   /* events of direct children: 2 per mapping entry */
} frame;

static void hit_at(kcs_yaml_limit_hit *hit, const struct fy_mark *m, const char *fmt, long a)
{
    hit->line = m ? m->line + 1 : 1;
    hit->col = m ? m->column + 1 : 1;
    snprintf(hit->msg, sizeof hit->msg, fmt, a);
}

struct fy_diag *kcs_yaml_quiet_diag(void)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.level = FYET_ERROR;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (diag)
        fy_diag_set_collect_errors(diag, true);
    return diag;
}

int kcs_yaml_events_open(const char *text, size_t len, struct fy_parser **fyp_p,
                         struct fy_diag **diag_p)
{
    struct fy_diag *diag = kcs_yaml_quiet_diag();
    if (!diag)
        return -1;
    struct fy_parse_cfg cfg = KCS_YAML_PARSE_CFG(diag);
    struct fy_parser *fyp = fy_parser_create(&cfg);
    if (fyp && fy_parser_set_string(fyp, text, len) != 0) {
        fy_parser_destroy(fyp);
        fyp = NULL;
    }
    *fyp_p = fyp;
    *diag_p = diag;
    return 0;
}

void kcs_yaml_events_close(struct fy_parser *fyp, struct fy_diag *diag)
{
    if (fyp)
        fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
}

int kcs_yaml_prescan(const char *text, size_t len, kcs_yaml_limit_hit *hit)
{
    memset(hit, 0, sizeof *hit);
    struct fy_parser *fyp;
    struct fy_diag *diag;
    if (kcs_yaml_events_open(text, len, &fyp, &diag))
        return -1;
    frame stack[KCS_YAML_MAX_DEPTH + 1];
    int depth = 0, found = 0;
    long nodes = 0;
    double key_work = 0.0; /* sum over mappings of keys^2 / 2: the builder's comparisons */
    if (fyp) {
        struct fy_event *ev;
        while (!found && (ev = fy_parser_parse(fyp))) {
            int t = ev->type;
            const struct fy_mark *m = fy_event_start_mark(ev);
            int is_node = t == FYET_SCALAR || t == FYET_ALIAS || t == FYET_MAPPING_START ||
                          t == FYET_SEQUENCE_START;
            if (is_node) {
                if (++nodes > KCS_YAML_MAX_NODES) {
                    hit_at(hit, m, "more than %ld YAML nodes in one file", KCS_YAML_MAX_NODES);
                    found = 1;
                } else if (depth > 0) {
                    frame *f = &stack[depth - 1];
                    f->children++;
                    if (f->mapping && f->children % 2 == 1) { /* a new key */
                        long keys = (f->children + 1) / 2;
                        key_work += (double)keys;
                        if (keys > KCS_YAML_MAX_KEYS) {
                            hit_at(hit, m, "a mapping with more than %ld keys",
                                   KCS_YAML_MAX_KEYS);
                            found = 1;
                        } else if (key_work > KCS_YAML_MAX_KEY_WORK) {
                            hit_at(hit, m, "too many keys in the file's mappings (the sum of "
                                   "keys^2/2 over mappings exceeds %ld)", KCS_YAML_MAX_KEY_WORK);
                            found = 1;
                        }
                    } else if (!f->mapping && f->children > KCS_YAML_MAX_ITEMS) {
                        hit_at(hit, m, "a list with more than %ld items", KCS_YAML_MAX_ITEMS);
                        found = 1;
                    }
                }
            }
            if (!found && (t == FYET_MAPPING_START || t == FYET_SEQUENCE_START)) {
                if (depth >= KCS_YAML_MAX_DEPTH) {
                    hit_at(hit, m, "nesting deeper than %ld levels", KCS_YAML_MAX_DEPTH);
                    found = 1;
                } else {
                    stack[depth].mapping = t == FYET_MAPPING_START;
                    stack[depth].children = 0;
                    depth++;
                }
            } else if ((t == FYET_MAPPING_END || t == FYET_SEQUENCE_END) && depth > 0) {
                depth--;
            }
            fy_parser_event_free(fyp, ev);
        }
    }
    kcs_yaml_events_close(fyp, diag);
    return found;
}
