// The emulator's launcher: one emulated launch of a kernel library in a process of its own,
// so that a kernel that crashes (a wild pointer, a stack overflow, an abort: nothing the
// emulator's bounds checks see) ends this process and not its caller. Built and run by
// kernels/emulator_launch.py, which also fixes the layout of the shared file.
//
// usage: launcher LIB FD SIZE X W OUT COUNTS STATUS
//   LIB     the kernel's emulator library (exports iobound_emulate)
//   FD      an open file of SIZE bytes shared with the caller; X, W, OUT, COUNTS, STATUS are
//           byte offsets in it: the input, weights and output (fp32), the four uint64
//           counters, and where the launch's status (int32) and seconds (double, 8 bytes
//           further) are written.
// Exit 0 once the status is written; 64 for bad arguments, 65 when LIB cannot be loaded,
// 66 when FD cannot be mapped (the message on stderr), 67 when its caller is gone.
// C headers only: the launcher is built once per compiler and cache, in tests often
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

typedef int (*emulate_fn)(const float*, const float*, float*, unsigned long long*);

static double now_seconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
#ifdef __linux__
  // Ends with its caller: an executor that kills a worker mid-launch (a Ray actor past its
  // timeout) would otherwise leave a kernel that never ends running here forever.
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) return 67;  // the caller died between the two calls
#endif
  if (argc != 9) {
    fprintf(stderr, "usage: %s LIB FD SIZE X W OUT COUNTS STATUS\n", argv[0]);
    return 64;
  }
  unsigned long long at[7];
  for (int i = 0; i < 7; ++i) {
    char* end = nullptr;
    at[i] = strtoull(argv[2 + i], &end, 10);
    if (end == argv[2 + i] || *end != '\0') {
      fprintf(stderr, "not a number: %s\n", argv[2 + i]);
      return 64;
    }
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  emulate_fn launch = lib ? (emulate_fn)dlsym(lib, "iobound_emulate") : nullptr;
  if (!launch) {
    fprintf(stderr, "%s\n", dlerror());
    return 65;
  }
  void* mapped = mmap(nullptr, at[1], PROT_READ | PROT_WRITE, MAP_SHARED, (int)at[0], 0);
  if (mapped == MAP_FAILED) {
    perror("mmap");
    return 66;
  }
  char* base = static_cast<char*>(mapped);
  double start = now_seconds();
  int status = launch(reinterpret_cast<const float*>(base + at[2]),
                      reinterpret_cast<const float*>(base + at[3]),
                      reinterpret_cast<float*>(base + at[4]),
                      reinterpret_cast<unsigned long long*>(base + at[5]));
  double seconds = now_seconds() - start;
  memcpy(base + at[6], &status, sizeof status);
  memcpy(base + at[6] + 8, &seconds, sizeof seconds);
  return 0;
}
