/* Figures: analysis/plot.py (h5py + matplotlib) run on the reduced
 * dataset. The report does not depend on them: without Python, h5py or
 * matplotlib kcs says so in one line and the report links no figures. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build_info.h"
#include "report.h"

extern char **environ;

static int readable(const char *p)
{
    return p && p[0] && access(p, R_OK) == 0;
}

/* The script: --plot-script, KCS_PLOT_SCRIPT, the installed share/kcs next
 * to the binary, then the source tree kcs was built from. */
static const char *find_script(const kcs_reduce_opts *o, char *buf, size_t len)
{
    if (o->plot_script)
        return o->plot_script;
    const char *env = getenv("KCS_PLOT_SCRIPT");
    if (readable(env))
        return env;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        snprintf(buf, len, "%s/../share/kcs/plot.py", dirname(exe));
        if (readable(buf))
            return buf;
    }
    snprintf(buf, len, "%s/analysis/plot.py", KCS_SOURCE_DIR);
    return readable(buf) ? buf : NULL;
}

void kcs_plots_run(const kcs_reduce_opts *o, const char *report, const char *dataset,
                   const char *raw)
{
    (void)report;
    if (o->no_plots)
        return;
    char sbuf[4096];
    const char *script = find_script(o, sbuf, sizeof sbuf);
    const char *py = getenv("KCS_PYTHON");
    if (!py || !py[0])
        py = "/usr/bin/python3";
    if (!script) {
        fprintf(stderr, "kcs reduce: no figures: plot.py not found (set "
                        "KCS_PLOT_SCRIPT); the report is complete without them\n");
        return;
    }
    if (access(py, X_OK) != 0) {
        fprintf(stderr, "kcs reduce: no figures: %s not found (set KCS_PYTHON); the report is "
                        "complete without them\n",
                py);
        return;
    }
    char *argv[] = {(char *)py, (char *)script, (char *)dataset, (char *)o->out_dir, (char *)raw,
                    NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (o->quiet)
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, py, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "kcs reduce: no figures: cannot run %s: %s\n", py, strerror(rc));
        return;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "kcs reduce: no figures: %s %s exited with status %d (see its message "
                        "above); the report is complete without them\n",
                py, script, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int kcs_report_has_figure(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, R_OK) == 0;
}
