/* What writereach.c (fs-write-reach's mount points and walk) and writelist.c (the
 * host's complete list of its folders, tried where the walk could not list) share. */
#ifndef WRITEREACH_H
#define WRITEREACH_H

#include "probe.h"

/* How a write was made, or why one that may go through was not tried: a row whose
 * `how` starts with UNTRIED is no proof, and the harness makes it an error where it
 * lies beyond the grants. */
#define UNTRIED "not tried: "
struct tried { const char *how; int left; };
struct walk { const struct mnt *m; struct tried *t, kept; char *proof; size_t cap; int dirs; };

int untried(const struct tried *t);
/* Removal from `path`'s parent (`path` being what `st` says), and truncation of a
 * file, each proved without changing anything. */
int remove_way_at(const char *path, const struct stat *st, struct tried *t);
int truncate_way(const char *path, const struct stat *st, struct tried *t);
/* writeways.c: removal from a folder (its entry `name`, a moment ago `st`), the
 * mount's kind (a server that decides each change: those ways are not tried), the
 * leases and file-size limit truncation needs (set and undone around the walk), and
 * harness's decoys (each_target's callback). */
int remove_way(int dir, const char *name, const struct stat *st, struct tried *t);
int server_decided(const char *type);
extern int g_server_decided, g_lease_skips;
void read_leases(void);
void fsize_zero(int on);
int decoy_target(const char *path, const char *rest, const struct stat *st, void *ctx);
/* A listable folder of the host's list below one the walk did not list, walked. */
int walk_listed(struct walk *w, dev_t dev, const char *path, size_t base);
int write_dir(const char *path, struct tried *t);
int in_lines(const char *lines, const char *path);
int path_within(const char *path, const char *top);
/* One more folder tried: 0 once the walk's bounds are spent (then it is cut). */
int walk_step(void);
extern int g_walk_cut;

/* linkcount.c: the files of the write grants with links beyond them, as the
 * evidence's "links" rows (their number; -1 where they cannot all be told, said in
 * "links_cut"), walked within `budget_ms` of wall time. */
int links_beyond(double budget_ms);

/* writelist.c: a folder the walk listed (its children were tried); the host's folders
 * whose parent it did not list, tried on mount w->m (1 at the first write). */
void list_seen(const char *path);
int list_pass(struct walk *w, dev_t dev);

#endif
