// cuda_emu.h -- run iobound's generated CUDA kernels on the CPU (g++ -std=c++20 -pthread).
//
// One std::thread per CUDA thread of a block; __syncthreads() is a std::barrier; blocks run
// one after another on the same thread team. Shared memory is one buffer per launch,
// filled with NaN before every block (reading an unwritten shared value shows up as a
// NaN output). LDG/STG count global loads and stores per thread (summed at the end) and
// check that every access falls inside a buffer the launcher registered (stores only to
// writable ones); a stray access is counted as a fault and not performed.
// The kernel's `float` is `emu::real` here (kernels/emulator_build.py renames it): every
// binary +, -, * and / on it counts one flop, so an FMA counts two; a negation, a copy or
// a conversion counts none.
#pragma once

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace emu {

// Largest launch the emulator accepts: a CUDA block limit, and a total-thread cap that
// keeps a run within seconds (each block's threads are real OS threads).
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockDim[3] = {1024, 1024, 64};  // per axis (x, y, z)
constexpr unsigned long long kMaxTotalThreads = 1ull << 22;

enum Status : int { kOk = 0, kFault = 1, kBadLaunch = 2, kThreadError = 3 };

inline thread_local dim3 tl_thread_idx, tl_block_idx, tl_block_dim, tl_grid_dim;
inline thread_local void* tl_shared = nullptr;
inline thread_local std::barrier<>* tl_barrier = nullptr;
inline thread_local unsigned long long tl_loads = 0, tl_stores = 0, tl_faults = 0, tl_flops = 0;

// A float that counts the arithmetic done on it (layout-compatible with float: buffers and
// shared memory are reinterpreted in place).
struct real {
  float v;
  real() = default;
  constexpr real(float x) : v(x) {}
  constexpr real(int x) : v(static_cast<float>(x)) {}  // float op int: the int made float
  // A double operand would be rounded to float here but not under nvcc: refused instead.
  real(double) = delete;
  friend real operator+(real a, real b) { ++tl_flops; return a.v + b.v; }
  friend real operator-(real a, real b) { ++tl_flops; return a.v - b.v; }
  friend real operator*(real a, real b) { ++tl_flops; return a.v * b.v; }
  friend real operator/(real a, real b) { ++tl_flops; return a.v / b.v; }
  friend real operator-(real a) { return -a.v; }
  real& operator+=(real b) { return *this = *this + b; }
  real& operator-=(real b) { return *this = *this - b; }
  real& operator*=(real b) { return *this = *this * b; }
  real& operator/=(real b) { return *this = *this / b; }
  // Comparisons are no flops (the model counts arithmetic only).
  friend bool operator==(real a, real b) { return a.v == b.v; }
  friend auto operator<=>(real a, real b) { return a.v <=> b.v; }
};
static_assert(sizeof(real) == sizeof(float) && alignof(real) == alignof(float));

struct Buffer {
  const float* base;
  std::size_t size;  // elements
  bool writable;
  Buffer(const float* base_, std::size_t size_, bool writable_)
      : base(base_), size(size_), writable(writable_) {}
  Buffer(const real* base_, std::size_t size_, bool writable_)
      : Buffer(reinterpret_cast<const float*>(base_), size_, writable_) {}
};

inline thread_local const std::vector<Buffer>* tl_buffers = nullptr;

inline bool in_buffers(const float* p, bool write) {
  for (const Buffer& b : *tl_buffers) {
    if (p >= b.base && p < b.base + b.size) return !write || b.writable;
  }
  return false;
}

inline float ldg(const float* p) {
  ++tl_loads;
  if (!in_buffers(p, false)) { ++tl_faults; return std::numeric_limits<float>::quiet_NaN(); }
  return *p;
}

inline void stg(float* p, float v) {
  ++tl_stores;
  if (!in_buffers(p, true)) { ++tl_faults; return; }
  *p = v;
}

inline real ldg(const real* p) { return ldg(reinterpret_cast<const float*>(p)); }
inline void stg(real* p, real v) { stg(reinterpret_cast<float*>(p), v.v); }

inline void syncthreads() { tl_barrier->arrive_and_wait(); }

// Run `kernel` over the grid. counts[0..3] receive global loads, stores, faults and flops.
template <class Kernel>
int launch(dim3 grid, dim3 block, std::size_t shared_bytes, const std::vector<Buffer>& buffers,
           const Kernel& kernel, unsigned long long* counts) {
  const unsigned threads = block.x * block.y * block.z;
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  if (threads == 0 || threads > kMaxThreadsPerBlock || block.x > kMaxBlockDim[0] ||
      block.y > kMaxBlockDim[1] || block.z > kMaxBlockDim[2] || blocks == 0 ||
      blocks * threads > kMaxTotalThreads)
    return kBadLaunch;
  std::vector<float> shared((shared_bytes + sizeof(float) - 1) / sizeof(float) + 1);
  std::barrier<> barrier(threads);
  std::atomic<unsigned long long> loads{0}, stores{0}, faults{0}, flops{0};
  std::atomic<bool> thread_error{false};
  std::vector<std::thread> team;
  team.reserve(threads);
  // Threads wait for `go` so that a failure to create the whole team (a system limit)
  // can release the ones already started instead of leaving them at the barrier.
  std::atomic<int> go{0};  // 0: wait, 1: run, 2: abort
  try {
    for (unsigned t = 0; t < threads; ++t) {
      team.emplace_back([&, t]() {
        go.wait(0);
        if (go.load() != 1) return;
        tl_thread_idx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
        tl_block_dim = block;
        tl_grid_dim = grid;
        tl_barrier = &barrier;
        tl_shared = shared.data();
        tl_buffers = &buffers;
        tl_loads = tl_stores = tl_faults = tl_flops = 0;
        for (unsigned long long b = 0; b < blocks; ++b) {
          tl_block_idx = dim3(b % grid.x, (b / grid.x) % grid.y, b / (1ull * grid.x * grid.y));
          if (t == 0)
            for (float& v : shared) v = std::numeric_limits<float>::quiet_NaN();
          barrier.arrive_and_wait();  // shared memory is fresh before anyone starts the block
          try {
            kernel();
          } catch (...) {
            thread_error = true;
          }
          barrier.arrive_and_wait();  // everyone is done before the buffer is reset
        }
        loads += tl_loads;
        stores += tl_stores;
        faults += tl_faults;
        flops += tl_flops;
      });
    }
  } catch (...) {
    go = 2;
    go.notify_all();
    for (std::thread& th : team) th.join();
    return kThreadError;
  }
  go = 1;
  go.notify_all();
  for (std::thread& th : team) th.join();
  counts[0] = loads;
  counts[1] = stores;
  counts[2] = faults;
  counts[3] = flops;
  if (thread_error) return kThreadError;
  return faults ? kFault : kOk;
}

}  // namespace emu

// numeric_limits<float> of a kernel (renamed) answers as float's, not as an unknown type's zeros.
template <>
struct std::numeric_limits<emu::real> : std::numeric_limits<float> {};

#define threadIdx (emu::tl_thread_idx)
#define blockIdx (emu::tl_block_idx)
#define blockDim (emu::tl_block_dim)
#define gridDim (emu::tl_grid_dim)
#define __syncthreads() emu::syncthreads()
#define LDG(p) (emu::ldg(p))
#define STG(p, v) (emu::stg((p), (v)))
#define SHARED_DECL(T, name) T* name = static_cast<T*>(emu::tl_shared)
