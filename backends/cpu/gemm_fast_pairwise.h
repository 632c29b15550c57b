/* The pairwise recursion of the narrow kernels (gemm_fast_kern.h), included
 * there once per way of adding two narrow values: NAR_PW names the
 * function, NAR_PW_ADD(c, x, y, o) adds rows. Undefines both. */
static void NAR_PW(const nar_job *J, const nar_vc *c, size_t i0, size_t j0, size_t p0,
            size_t len, gf_vd out[R][WV])
{
    if (len <= 4) { /* the last levels here, in the model's order: fewer calls */
        GF_UNROLL for (int r = 0; r < R; r++) {
            gf_vd l0[WV], l1[WV], l2[WV], l3[WV], s0[WV], s1[WV];
            nar_leaves(J, c, i0, j0, p0, r, l0);
            if (len == 1) {
                memcpy(out[r], l0, sizeof l0);
                continue;
            }
            nar_leaves(J, c, i0, j0, p0 + 1, r, l1);
            if (len == 2) { /* l0 + l1 */
                NAR_PW_ADD(c, l0, l1, out[r]);
                continue;
            }
            nar_leaves(J, c, i0, j0, p0 + 2, r, l2);
            if (len == 3) { /* h = 1: l0 + (l1 + l2) */
                NAR_PW_ADD(c, l1, l2, s1);
                NAR_PW_ADD(c, l0, s1, out[r]);
                continue;
            }
            nar_leaves(J, c, i0, j0, p0 + 3, r, l3); /* (l0 + l1) + (l2 + l3) */
            NAR_PW_ADD(c, l0, l1, s0);
            NAR_PW_ADD(c, l2, l3, s1);
            NAR_PW_ADD(c, s0, s1, out[r]);
        }
        return;
    }
    size_t h = len / 2;
    gf_vd rt[R][WV];
    NAR_PW(J, c, i0, j0, p0, h, out);
    NAR_PW(J, c, i0, j0, p0 + h, len - h, rt);
    GF_UNROLL for (int r = 0; r < R; r++)
        NAR_PW_ADD(c, out[r], rt[r], out[r]);
}

#undef NAR_PW
#undef NAR_PW_ADD
