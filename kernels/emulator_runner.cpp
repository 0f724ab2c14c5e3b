// The emulator's launcher: one emulated launch of a kernel library in a process of its own,
// so that a kernel that crashes (a wild pointer, a stack overflow, an abort: nothing the
// emulator's bounds checks see) ends this process and not its caller. Built and run by
// kernels/emulator_launch.py, which also fixes the layout of the shared file.
//
// usage: launcher LIB FD SIZE X W OUT COUNTS STATUS
//   LIB     the kernel's emulator library (exports iobound_emulate)
//   FD      an open file of SIZE bytes shared with the caller; X, W, OUT, COUNTS, STATUS are
//           byte offsets in it: the input, weights and output (fp32), the three uint64
//           counters, and where the launch's status (int32) and seconds (double, 8 bytes
//           further) are written.
// Exit 0 once the status is written; 64 for bad arguments, 65 when LIB cannot be loaded,
// 66 when FD cannot be mapped (the message on stderr).
#include <dlfcn.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

typedef int (*emulate_fn)(const float*, const float*, float*, unsigned long long*);

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: %s LIB FD SIZE X W OUT COUNTS STATUS\n", argv[0]);
    return 64;
  }
  unsigned long long at[7];
  for (int i = 0; i < 7; ++i) {
    char* end = nullptr;
    at[i] = std::strtoull(argv[2 + i], &end, 10);
    if (end == argv[2 + i] || *end != '\0') {
      std::fprintf(stderr, "not a number: %s\n", argv[2 + i]);
      return 64;
    }
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  emulate_fn launch = lib ? (emulate_fn)dlsym(lib, "iobound_emulate") : nullptr;
  if (!launch) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 65;
  }
  void* mapped = mmap(nullptr, at[1], PROT_READ | PROT_WRITE, MAP_SHARED, (int)at[0], 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    return 66;
  }
  char* base = static_cast<char*>(mapped);
  auto start = std::chrono::steady_clock::now();
  int status = launch(reinterpret_cast<const float*>(base + at[2]),
                      reinterpret_cast<const float*>(base + at[3]),
                      reinterpret_cast<float*>(base + at[4]),
                      reinterpret_cast<unsigned long long*>(base + at[5]));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::memcpy(base + at[6], &status, sizeof status);
  std::memcpy(base + at[6] + 8, &seconds, sizeof seconds);
  return 0;
}
