// The CPU backend's own helper threads: what phase 2 shares a pass with in
// the FFI handler (a jas::Parallel, like any other).
//
// Why not XLA's intra-op pool: after an idle moment (a training loop's Python
// work between steps) its parked threads join a call 30-180 microseconds late,
// and are often woken on the caller's own CPU, where they compete with it.
// OpenMP's libgomp hangs a child that forks after its pool started and is not
// available to the clang that builds the wheels. So the package keeps its own:
//
// - one helper per CPU of the process's affinity mask, each pinned to its CPU,
//   started together on the first call big enough to share, named
//   "jas-silu/<cpu>" (top -H shows them); a process allowed one CPU gets none;
// - a call wakes only helpers pinned to CPUs other than the one it runs on,
//   so none competes with the caller, and takes one only if no other call is
//   using it (a busy helper is skipped: the caller does more itself);
// - after a task a helper watches for the next one for kHelperAwakeNanoseconds,
//   then sleeps on a futex until woken;
// - JAX_ASCEND_SILU_THREADS=n starts helpers on at most n CPUs (none for
//   n = 1) and lets a call take at most n - 1 of them;
// - a child process after fork starts helpers of its own (pthread_atfork), and
//   the helpers are stopped and joined at exit.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_HELPERS_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_HELPERS_H_

#include <cstdint>

#include "cpu/backend.h"

namespace jas {

// How long a helper keeps watching for work after a task before it sleeps,
// and so how long after a shared pass the next call may count on it being
// awake (executor.h's WorthSharing). A 2 ms pause is the Python work between
// a training loop's steps: watching through it spares the next step's calls
// a sleeping helper's wake-up (30-50 microseconds on a virtual machine). After
// its first 0.1 ms the watch yields the CPU to any other thread ready to run
// there, so it costs only otherwise idle time (benchmarks/README.md).
inline constexpr int64_t kHelperAwakeNanoseconds = 4 * 1000 * 1000;

// The helpers for a call of at most `threads` threads, the caller included
// (the handler passes JAX_ASCEND_SILU_THREADS's cap). num_workers is 0 when the
// process may run on one CPU only or threads < 2. Nothing starts until a pass
// is shared.
Parallel CpuHelpers(int64_t threads);

// Whether no helper holds a task. A helper may still hold its share of a
// pass (a reference to the pass's shared state) after the pass has returned,
// until it gets to run: tests that count live allocations wait for this.
bool CpuHelpersIdle();

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_HELPERS_H_
