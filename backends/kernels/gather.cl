/* gather.cl: Y[p, c] = T[idx[p], c] (table mxk, idx n, Y nxk), copied in
 * the input's value type. An index outside [0, m) is handled by mode:
 *   0 raise: nothing is written for that row; the smallest such position
 *            is recorded with atomic_min in *bad (the host then raises)
 *   1 clamp: the index is clamped to [0, m-1] (m == 0, which the host
 *            refuses: the row is zero, never a read outside the table)
 *   2 zero:  the row is zero
 * global (max(k, 1), n): with k == 0 a bad index still raises. */
__kernel void gather_rows(IN_PTR T, __global const long *idx, __global out_t *Y, long m, long n,
                          long k, int mode, volatile __global int *bad)
{
    long c = get_global_id(0), p = get_global_id(1);
    if (p >= n)
        return;
    long r = idx[p];
    if (r < 0 || r >= m) {
        if (mode == 0) {
            if (c == 0)
                atomic_min(bad, (int)p);
            return;
        }
        if (c >= k)
            return;
        if (mode == 2 || m == 0) {
            Y[p * k + c] = 0;
            return;
        }
        r = r < 0 ? 0 : m - 1;
    }
    if (c >= k)
        return;
    Y[p * k + c] = LD(T, r * k + c);
}
