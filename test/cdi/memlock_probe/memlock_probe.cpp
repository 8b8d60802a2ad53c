/* Runs as a container's process (static: the container's root holds nothing else) and says
 * what RDMA memory registration would find: its RLIMIT_MEMLOCK as /proc/self/limits shows
 * it, and whether locking argv[1] bytes works. memlock_e2e in cdi_consumer_test reads it.
 *   memlock_probe <bytes>
 *   -> "Max locked memory <soft> <hard> bytes" (the /proc line), then "mlock <bytes>: ok" or
 *      "mlock <bytes>: FAILED (<errno name>)"; exit 0 either way. */
#include <errno.h>  // strerrorname_np: glibc 2.32+
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* limits = fopen("/proc/self/limits", "r");
  char line[256];
  while (limits != NULL && fgets(line, sizeof(line), limits) != NULL) {
    if (strncmp(line, "Max locked memory", 17) == 0) fputs(line, stdout);
  }
  if (limits != NULL) fclose(limits);
  const size_t bytes = strtoull(argv[1], NULL, 10);
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    printf("mmap %zu: FAILED (%s)\n", bytes, strerror(errno));
    return 0;
  }
  if (mlock(p, bytes) == 0) {
    printf("mlock %zu: ok\n", bytes);
  } else {
    printf("mlock %zu: FAILED (%s)\n", bytes, strerrorname_np(errno));
  }
  return 0;
}
