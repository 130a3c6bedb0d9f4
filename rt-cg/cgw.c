#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
/* cgw PATH...: for each, read its value and write the same value back. */
int main(int argc, char **argv) {
    printf("inside: uid=%d\n", getuid());
    FILE *f = fopen("/proc/self/status", "r"); char l[256];
    while (f && fgets(l, sizeof l, f)) if (!strncmp(l, "CapEff", 6)) fputs(l, stdout);
    for (int i = 1; i < argc; i++) {
        char v[64] = {0};
        int fd = open(argv[i], O_RDONLY); int n = fd >= 0 ? read(fd, v, sizeof v - 1) : -1; if (fd >= 0) close(fd);
        fd = open(argv[i], O_WRONLY);
        if (fd < 0) { printf("%s: open for writing: %s\n", argv[i], strerror(errno)); continue; }
        int w = write(fd, v, n > 0 ? n : 0);
        printf("%s: opened for writing, wrote its value back (%.*s) -> %d %s\n", argv[i], n > 0 ? n - 1 : 0, v, w, w < 0 ? strerror(errno) : "");
        close(fd);
    }
    return 0;
}
