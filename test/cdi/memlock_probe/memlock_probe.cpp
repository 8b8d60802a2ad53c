/* Runs as a container's process (static: the container's root holds nothing else) and says
 * what RDMA memory registration would find: its RLIMIT_MEMLOCK as /proc/self/limits shows
 * it, and whether locking argv[1] bytes works. memlock_e2e in cdi_consumer_test reads it.
 *   memlock_probe <bytes>
 *   -> "Max locked memory <soft> <hard> bytes" (the /proc line), then "mlock <bytes>: ok" or
 *      "mlock <bytes>: FAILED (<errno name>)"; exit 0 either way.
 * And what a library reading its environment finds (NCCL and UCX call getenv):
 *   memlock_probe --env NAME...
 *   -> "environ NAME=value" for every entry of that name the process was given, then
 *      "getenv NAME=value" (or "getenv NAME unset"), per name. */
#include <errno.h>  // strerrorname_np: glibc 2.32+
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

extern char** environ;

static int PrintEnv(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const size_t n = strlen(argv[i]);
    for (char** e = environ; *e != NULL; ++e) {
      if (strncmp(*e, argv[i], n) == 0 && (*e)[n] == '=') printf("environ %s\n", *e);
    }
    const char* value = getenv(argv[i]);
    if (value != NULL) {
      printf("getenv %s=%s\n", argv[i], value);
    } else {
      printf("getenv %s unset\n", argv[i]);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--env") == 0) return PrintEnv(argc, argv);
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
