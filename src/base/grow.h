/* Growing a malloc'd array by doubling, for the tables kcs builds row by
 * row, and freeing several at once. Header-only (the sources are also
 * built alone into fuzz targets). */
#ifndef KCS_GROW_H
#define KCS_GROW_H

#include <stdlib.h>
#include <string.h>

/* Make room for element n of the array *arr_p (a pointer to the array's
 * pointer) of *cap_p elements of elem bytes: when n == *cap_p, double the
 * capacity (first when 0). 0, or -1 when out of memory (nothing changed). */
static inline int kcs_grow_z(void *arr_p, size_t n, size_t *cap_p, size_t elem, size_t first)
{
    if (n < *cap_p)
        return 0;
    size_t cap = *cap_p ? 2 * *cap_p : first;
    void *old, *p;
    memcpy(&old, arr_p, sizeof old);
    p = realloc(old, cap * elem);
    if (!p)
        return -1;
    memcpy(arr_p, &p, sizeof p);
    *cap_p = cap;
    return 0;
}

/* kcs_grow_z for an int count and capacity. */
static inline int kcs_grow(void *arr_p, int n, int *cap_p, size_t elem, int first)
{
    size_t cap = (size_t)*cap_p;
    int rc = kcs_grow_z(arr_p, (size_t)n, &cap, elem, (size_t)first);
    *cap_p = (int)cap;
    return rc;
}

/* free() each of the n pointers; KCS_FREE(a, b, ...) for a list. */
static inline void kcs_free_n(void *const *p, int n)
{
    for (int i = 0; i < n; i++)
        free(p[i]);
}
#define KCS_FREE(...)                                                                              \
    kcs_free_n((void *const[]){__VA_ARGS__},                                                       \
               (int)(sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *)))

#endif
