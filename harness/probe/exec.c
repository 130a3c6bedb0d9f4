/* Executing a file outside the allowed folder, scenario "filesystem": the catalogue's
 * EXECUTE kind, by path and through an O_PATH handle. */

#include "probe.h"

/* Run `exec-me version` in a grandchild, stdout to a pipe: by path (dirfd AT_FDCWD)
 * or through an O_PATH handle (AT_EMPTY_PATH). 1 if it ran (printed the probe's
 * version line), else 0 with *err the refusal's errno. */
static int exec_ran(const char *path, int by_handle, int *err)
{
    char out[512];
    char *const argv[] = { (char *)target_name[T_exec_me], "version", NULL }, *const envp[] = { NULL };
    run_program(path, argv, envp, by_handle, 1, out, sizeof out);
    const char *ee = strstr(out, "\"exec_errno\":");
    *err = ee ? atoi(ee + 13) : EIO;
    return strstr(out, "\"type\":\"version\"") != NULL;
}

/* Refused as a seccomp filter refuses (EPERM, ENOSYS), not as Landlock, DAC or a
 * noexec mount do (EACCES), which refuse every other way alike. */
static int filter_refusal(int e) { return e == EPERM || e == ENOSYS; }

/* EXECUTE: <outside>/exec-me is a copy of the probe harness put there (static, so a
 * sandbox's own libraries do not matter): run by path, and through an O_PATH handle,
 * which no read right governs when it opens. Where both were refused as a filter
 * refuses (a deny-list of x86_64's execve and execveat in place of the right), the
 * i386 entry's execve (11) and execveat (358) too: a 64-bit process may make them, and
 * the kernel loads the copy as the ELF64 it is. It ran: escaped. */
void chk_fs_exec_outside(void)
{
    const char *path = outside(T_exec_me);
    int e1, e2, e3, e4;
    if (exec_ran(path, 0, &e1))
        outcome(OC_ESCAPED, 0, "ran %s (execve): it printed the probe's version line", path);
    if (exec_ran(path, 1, &e2))
        outcome(OC_ESCAPED, 0, "ran %s through an O_PATH handle (execveat AT_EMPTY_PATH)", path);
    ev_str("by_handle", errname(e2));
    if (filter_refusal(e1) && filter_refusal(e2)) {
        if (exec_ran(path, RUN_I386, &e3))
            outcome(OC_ESCAPED, 0, "ran %s (execve (i386)): it printed the probe's version line", path);
        if (exec_ran(path, RUN_I386 | 1, &e4))
            outcome(OC_ESCAPED, 0, "ran %s through an O_PATH handle (execveat (i386) AT_EMPTY_PATH)", path);
        ev_str("i386", errname(e3));
    }
    outcome(OC_BLOCKED, e1, "execve %s", path);
}
