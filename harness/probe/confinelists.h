/* confinelists.c: the calls `probe confine`'s mutant options name (see there). */
#ifndef CONFINELISTS_H
#define CONFINELISTS_H

#define AUDIT_ARCH_I386_ 0x40000003U
#define DENY_SETOWN (-2L)
#define DENY_OPEN_CREAT (-3L)
#define MAX_DENY 24

/* The path-only calls aarch64 lacks (its *at calls stand for them): -1, never matched. */
#ifndef SYS_mkdir
#define SYS_mkdir -1
#endif
#ifndef SYS_symlink
#define SYS_symlink -1
#endif
#ifndef SYS_mknod
#define SYS_mknod -1
#endif
#ifndef SYS_creat /* aarch64 has openat alone */
#define SYS_creat -1
#endif
#ifndef SYS_open
#define SYS_open -1
#endif
#ifndef SYS_unlink /* aarch64 has unlinkat alone (-1: never matched) */
#define SYS_unlink -1
#endif
#ifndef SYS_rmdir
#define SYS_rmdir -1
#endif
#ifndef SYS_getdents /* aarch64 has getdents64 alone */
#define SYS_getdents -1
#endif

/* `--deny CALL`'s number (or DENY_SETOWN, DENY_OPEN_CREAT); an unknown name: exit 2. */
long confine_deny_nr(const char *name);
/* `--i386-open FAMILY`'s i386 numbers (up to 6, ended by -1 or 0); unknown: exit 2. */
const long *confine_i386_family(const char *family);

#endif
