#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
/* set PATH VALUE */
int main(int argc, char **argv) {
    int fd = open(argv[1], O_WRONLY);
    if (fd < 0) { printf("%s: %s\n", argv[1], strerror(errno)); return 1; }
    int w = write(fd, argv[2], strlen(argv[2]));
    printf("inside (uid %d): wrote %s to %s -> %d %s\n", getuid(), argv[2], argv[1], w, w < 0 ? strerror(errno) : "");
    return 0;
}
