/* Landlock's UAPI, for the files that use it (landlock.c measures it, confine.c
 * applies it): musl's include path has no linux/landlock.h. */
#ifndef PROBE_LANDLOCK_H
#define PROBE_LANDLOCK_H

#include <stdint.h>

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1 /* enum landlock_rule_type */
#endif

/* Filesystem access rights, by the ABI version that introduced them. */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ABI1 ((1ULL << 13) - 1)  /* execute .. make_sym */
#define LL_FS_REFER (1ULL << 13)       /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
/* The rights a rule on a file (not a folder) may carry. */
#define LL_FS_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/* ABI 1 layout; newer kernels accept it (missing fields mean "handle nothing"). */
struct probe_ruleset_attr { uint64_t handled_access_fs; };
/* ABI 6's: scopes, which keep a domain from signalling, or connecting to the abstract
 * unix sockets of, any process outside it. */
struct probe_ruleset_attr6 { uint64_t handled_access_fs, handled_access_net, scoped; };
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)
/* struct landlock_path_beneath_attr, which the UAPI declares packed (12 bytes). */
struct probe_path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

#endif
