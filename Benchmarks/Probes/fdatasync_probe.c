/*
 * fdatasync_probe: what one small durable write costs on this file system, by how the file was
 * prepared. Four files, written interleaved (256 bytes at the next offset, then fdatasync):
 *   append     - the file grows with every write (what a YapDB commit does today);
 *   overwrite  - over bytes written and synced before (no size change to journal);
 *   fallocate  - inside a range reserved with fallocate(fd, 0, ...) (size set up front);
 *   keep size  - inside a range reserved with FALLOC_FL_KEEP_SIZE (size still grows per write).
 * Prints p50 and p90 per file. The lever for W2 in docs/benchmarks.md.
 *
 *   cc -O2 -o /tmp/fdatasync_probe Benchmarks/Probes/fdatasync_probe.c
 *   /tmp/fdatasync_probe DIRECTORY_ON_THE_DISK_TO_MEASURE 1000
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kinds = 4, size = 256 };
static const char *names[kinds] = {"append", "overwrite (written + synced)", "fallocate (mode 0)", "fallocate (KEEP_SIZE)"};

static double microseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check(int ok, const char *what) {
    if (!ok) { perror(what); exit(1); }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s DIRECTORY WRITES\n", argv[0]); return 2; }
    int n = atoi(argv[2]);
    check(n > 0, "WRITES");
    off_t span = (off_t)n * size + 4096;
    char path[kinds][4096];
    int fd[kinds];
    for (int k = 0; k < kinds; k++) {
        snprintf(path[k], sizeof path[k], "%s/fdatasync-probe-%d", argv[1], k);
        fd[k] = open(path[k], O_RDWR | O_CREAT | O_TRUNC, 0644);
        check(fd[k] >= 0, path[k]);
    }
    char *zeros = calloc(1, span);
    check(zeros != NULL, "calloc");
    check(pwrite(fd[1], zeros, span, 0) == span, "pwrite zeros");
    check(fallocate(fd[2], 0, 0, span) == 0, "fallocate");
    check(fallocate(fd[3], FALLOC_FL_KEEP_SIZE, 0, span) == 0, "fallocate KEEP_SIZE");
    for (int k = 0; k < kinds; k++) check(fdatasync(fd[k]) == 0, "fdatasync");

    char record[size];
    memset(record, 0xa5, size);
    double *took[kinds];
    for (int k = 0; k < kinds; k++) check((took[k] = malloc(n * sizeof(double))) != NULL, "malloc");
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < kinds; k++) {
            double start = microseconds();
            check(pwrite(fd[k], record, size, (off_t)i * size) == size, "pwrite");
            check(fdatasync(fd[k]) == 0, "fdatasync");
            took[k][i] = microseconds() - start;
        }
    }
    for (int k = 0; k < kinds; k++) {
        qsort(took[k], n, sizeof(double), ascending);
        printf("%-30s p50 %7.1f us   p90 %7.1f us\n", names[k], took[k][n / 2], took[k][n * 9 / 10]);
        close(fd[k]);
        unlink(path[k]);
    }
    return 0;
}
