/* kcs_ocl_build: clBuildProgram with the compiler's diagnostics kept off the
 * user's stderr. Whatever the OpenCL implementation writes to file
 * descriptor 2 while it builds (PoCL's clang, a vendor compiler) is
 * captured, and so is CL_PROGRAM_BUILD_LOG; both go to the file named by
 * KCS_OPENCL_BUILD_LOG (appended, one header per program), or to stderr
 * only with --verbose. A failing build's log is still part of the error
 * message (ocl_util.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocl.h"

static void emit(kcs_backend_ctx *ctx, const char *file, const char *opts, const char *text,
                 size_t len)
{
    size_t n = len;
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == '\r'))
        n--;
    if (n == 0)
        return;
    const char *path = getenv("KCS_OPENCL_BUILD_LOG");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "== %s [%s] on %s\n%.*s\n", file, opts, ctx->info.model, (int)n, text);
        fclose(f);
    }
    if (ctx->verbose)
        fprintf(stderr, "opencl: build log of %s [%s]:\n%.*s\n", file, opts, (int)n, text);
}

cl_int kcs_ocl_build(kcs_backend_ctx *ctx, cl_program prog, const char *file, const char *opts)
{
    fflush(stderr);
    FILE *cap = tmpfile();
    int saved = cap ? dup(STDERR_FILENO) : -1;
    int redirected = saved >= 0 && dup2(fileno(cap), STDERR_FILENO) >= 0;
    cl_int rc = clBuildProgram(prog, 1, &ctx->device, opts, NULL, NULL);
    if (redirected) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
    }
    if (saved >= 0)
        close(saved);
    if (cap) { /* what the compiler printed */
        long len = ftell(cap) >= 0 ? (fseek(cap, 0, SEEK_END), ftell(cap)) : 0;
        if (redirected && len > 0 && len < (1L << 24)) {
            char *buf = malloc((size_t)len + 1);
            rewind(cap);
            if (buf && fread(buf, 1, (size_t)len, cap) == (size_t)len)
                emit(ctx, file, opts, buf, (size_t)len);
            free(buf);
        }
        fclose(cap);
    }
    size_t len = 0; /* the build log proper (warnings of a successful build) */
    if (rc == CL_SUCCESS &&
        clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
            CL_SUCCESS &&
        len > 1) {
        char *buf = malloc(len + 1);
        if (buf && clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len, buf,
                                         NULL) == CL_SUCCESS) {
            buf[len] = 0;
            emit(ctx, file, opts, buf, strlen(buf));
        }
        free(buf);
    }
    return rc;
}
