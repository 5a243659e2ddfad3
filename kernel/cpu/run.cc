// Phase 2: walk the planned loop nest in chunks, on the calling thread and on
// whatever helpers the caller's Parallel provides.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "cpu/backend.h"
#include "cpu/executor.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // _mm_getcsr, _mm_pause
#endif

namespace jas {
namespace {

// Results must not depend on the caller's floating-point environment (XLA and
// other libraries may enable flush-to-zero on their threads): every piece of
// work runs with round-to-nearest and subnormals honoured.
class FloatEnvGuard {
 public:
#if defined(__x86_64__) || defined(__i386__)
  // Writing MXCSR costs far more than reading it, and callers usually run
  // with the defaults already: it is written only when it differs.
  FloatEnvGuard() : saved_(_mm_getcsr()) {
    if (saved_ & kClear) _mm_setcsr(saved_ & ~kClear);
  }
  ~FloatEnvGuard() {
    if (saved_ & kClear) _mm_setcsr(saved_);
  }

 private:
  static constexpr unsigned kClear = 0x8000u /*FTZ*/ | 0x0040u /*DAZ*/ | 0x6000u /*rounding*/;
  unsigned saved_;
#elif defined(__aarch64__)
  // FPCR, likewise: flush-to-zero (FZ, FZ16), default NaN (DN), the
  // alternative half format (AHP), the rounding mode (RMode) and FEAT_AFP's
  // FIZ/AH/NEP (AH changes what FNEG/FABS do to a NaN; simd_neon.h).
  FloatEnvGuard() : saved_(Read()) {
    if (saved_ & kClear) Write(saved_ & ~kClear);
  }
  ~FloatEnvGuard() {
    if (saved_ & kClear) Write(saved_);
  }

 private:
  static uint64_t Read() {
    uint64_t v;
    asm volatile("mrs %0, fpcr" : "=r"(v));
    return v;
  }
  static void Write(uint64_t v) { asm volatile("msr fpcr, %0" : : "r"(v)); }
  static constexpr uint64_t kClear = (1u << 26) /*AHP*/ | (1u << 25) /*DN*/ | (1u << 24) /*FZ*/ |
                                     (3u << 22) /*RMode*/ | (1u << 19) /*FZ16*/ | 0x7u /*NEP, AH, FIZ*/;
  uint64_t saved_;
#endif
};

// Elements per stack tile when an operand must be gathered (strided or
// broadcast innermost dimension) or the output scattered.
constexpr int64_t kTile = 512;

template <int64_t kBytes>
void GatherN(const char* src, int64_t stride, int64_t n, char* dst) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + kBytes * i, src + kBytes * i * stride, kBytes);
}

void Gather(const char* src, int64_t stride, int64_t elem, int64_t n, char* dst) {
  switch (elem) {
    case 8: return GatherN<8>(src, stride, n, dst);
    case 4: return GatherN<4>(src, stride, n, dst);
    default: return GatherN<2>(src, stride, n, dst);
  }
}

// One pass of a block function over a loop's elements: the main pass (the
// result), or the pass that writes f'(x) into the workspace.
struct Pass {
  Loop loop;
  BlockFn fn = nullptr;
  // What writes results straight into the output (not into a stack tile to
  // be scattered): `fn`, or its non-temporal-store twin for outputs past the
  // cache (plan.cc).
  BlockFn direct = nullptr;
  const char* a = nullptr;  // null when the mode has no first operand
  const char* b = nullptr;
  char* out = nullptr;
};

// One innermost run of n elements starting at the given addresses.
void InnerRun(const Pass& p, const char* a, const char* b, char* out, int64_t n) {
  const Loop& l = p.loop;
  const int64_t inner = l.rank - 1;
  const int64_t sa = l.strides[0][inner], sb = l.strides[1][inner], so = l.strides[2][inner];
  if ((a == nullptr || sa == 1) && sb == 1 && so == 1) {
    p.direct(a, b, out, n);
    return;
  }
  alignas(64) char ta[kTile * 8], tb[kTile * 8], to[kTile * 8];
  const int64_t ea = l.elem_bytes[0], eb = l.elem_bytes[1], eo = l.elem_bytes[2];
  for (int64_t i = 0; i < n; i += kTile) {
    const int64_t m = std::min(kTile, n - i);
    const char* pa = nullptr;
    if (a != nullptr) {
      pa = a + i * sa * ea;
      if (sa != 1) Gather(pa, sa, ea, m, ta), pa = ta;
    }
    const char* pb = b + i * sb * eb;
    if (sb != 1) Gather(pb, sb, eb, m, tb), pb = tb;
    char* po = out + i * so * eo;
    if (so == 1) {
      p.direct(pa, pb, po, m);
    } else {
      p.fn(pa, pb, to, m);
      for (int64_t k = 0; k < m; ++k) std::memcpy(po + k * so * eo, to + k * eo, eo);
    }
  }
}

// Elements [begin, end) in row-major order of the loop's dims.
void RunRange(const Pass& p, int64_t begin, int64_t end) {
  const Loop& l = p.loop;
  const int64_t r = l.rank;
  int64_t idx[kMaxRank];
  int64_t rem = begin;
  for (int64_t d = r - 1; d >= 0; --d) {
    idx[d] = rem % l.dims[d];
    rem /= l.dims[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t off[3] = {0, 0, 0};
    for (int op = 0; op < 3; ++op) {
      for (int64_t d = 0; d < r; ++d) off[op] += idx[d] * l.strides[op][d];
      off[op] *= l.elem_bytes[op];
    }
    const int64_t n = std::min(l.dims[r - 1] - idx[r - 1], end - pos);
    InnerRun(p, p.a ? p.a + off[0] : nullptr, p.b + off[1], p.out + off[2], n);
    pos += n;
    idx[r - 1] += n;
    for (int64_t d = r - 1; d > 0 && idx[d] == l.dims[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

// End of the chunk starting at `begin`; no overflow however large the chunk.
int64_t ChunkEnd(int64_t begin, int64_t chunk, int64_t numel) { return begin + std::min(chunk, numel - begin); }

// A Pass split into chunks among the caller and its helper tasks, and the
// state they share. Helpers hold a reference, so a
// helper that starts after the pass has finished finds no chunk left and
// touches nothing else.
//
// The chunks are split into one contiguous segment per participant. Each
// starts on its own segment, then takes what is left of the others: threads
// stream through separate stretches of memory (and fault in separate pages of
// a fresh output), and a participant that starts late or is descheduled has
// its work taken over chunk by chunk.
struct ParallelPass {
  static constexpr int64_t kMaxSegments = 64;
  struct Segment {  // padded to a cache line: segments do not share one
    std::atomic<int64_t> next{0};
    int64_t end = 0;
    char pad[48];
  };

  RangeFn fn = nullptr;
  const void* context = nullptr;  // read only while chunks remain: the caller waits for them
  int64_t numel = 0;
  int64_t chunk = 0;
  int64_t num_chunks = 0;
  int64_t num_segments = 1;
  Segment segments[kMaxSegments];
  std::atomic<int64_t> joined{0};  // hands out participant numbers
  std::atomic<int64_t> done{0};    // chunks finished

  void Plan(int64_t participants) {
    num_segments = std::min({participants, num_chunks, kMaxSegments});
    for (int64_t s = 0; s < num_segments; ++s) {
      segments[s].next.store(s * num_chunks / num_segments, std::memory_order_relaxed);
      segments[s].end = (s + 1) * num_chunks / num_segments;
    }
  }

  void Work() {
    FloatEnvGuard env;
    const int64_t first = joined.fetch_add(1, std::memory_order_relaxed) % num_segments;
    for (int64_t k = 0; k < num_segments; ++k) {
      Segment& seg = segments[(first + k) % num_segments];
      for (int64_t c; (c = seg.next.fetch_add(1, std::memory_order_relaxed)) < seg.end;) {
        const int64_t begin = c * chunk;
        fn(context, begin, ChunkEnd(begin, chunk, numel));
        if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == num_chunks) done.notify_all();
      }
    }
  }
};

// Waits until every chunk is done. By the time the caller gets here only chunks
// that helpers have claimed are outstanding, finishing within one chunk's time
// (microseconds), so it spins briefly first: a futex sleep would add tens of
// microseconds of wake-up latency on top. It then sleeps, which matters when
// a helper shares the caller's core and needs it to finish.
void WaitForChunks(const std::atomic<int64_t>& done, int64_t num_chunks) {
  constexpr auto kSpin = std::chrono::microseconds(30);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (done.load(std::memory_order_acquire) < num_chunks && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < 16; ++i) _mm_pause();
#elif defined(__aarch64__)
    for (int i = 0; i < 16; ++i) asm volatile("yield");
#endif
  }
  for (int64_t d; (d = done.load(std::memory_order_acquire)) < num_chunks;) {
    done.wait(d, std::memory_order_acquire);
  }
}

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// When a helper task last finished, or a pass long enough to share last
// ended. A helper keeps watching for work for a while (kHelperAwakeNanoseconds),
// then sleeps; and calls that follow each other closely (a loop of mid-sized
// calls) pay for waking a helper once, then find it awake.
std::atomic<int64_t> last_busy_ns{std::numeric_limits<int64_t>::min() / 2};

void HelperTask(void* arg) {
  std::unique_ptr<std::shared_ptr<ParallelPass>> job(static_cast<std::shared_ptr<ParallelPass>*>(arg));
  (*job)->Work();
  last_busy_ns.store(NowNanoseconds(), std::memory_order_relaxed);
}

// The clock is read only for passes long enough for it not to matter.
bool Share(int64_t numel, int64_t parallel_min, int64_t cold_min) {
  return numel >= parallel_min &&
         WorthSharing(numel, parallel_min, cold_min, NowNanoseconds() - last_busy_ns.load(std::memory_order_relaxed));
}

// Marks the end of a pass of at least `parallel_min` elements.
void MarkBusy(int64_t numel, int64_t parallel_min) {
  if (numel >= parallel_min) last_busy_ns.store(NowNanoseconds(), std::memory_order_relaxed);
}

void RunPassRange(const void* pass, int64_t begin, int64_t end) {
  RunRange(*static_cast<const Pass*>(pass), begin, end);
}

Status RunPass(const Pass& pass, const CpuExecutor& e, const Parallel* parallel) {
  return e.RunChunks(pass.loop.numel, parallel, &RunPassRange, &pass);
}

}  // namespace

Status RunInChunks(int64_t numel, int64_t chunk, int64_t parallel_min, int64_t cold_min, const Parallel* parallel,
                   RangeFn fn, const void* context) {
  const int64_t num_chunks = numel / chunk + (numel % chunk != 0);
  const int64_t helpers =
      (parallel == nullptr || parallel->schedule == nullptr || !Share(numel, parallel_min, cold_min))
          ? 0
          : std::min<int64_t>(std::max<int64_t>(parallel->num_workers, 0), num_chunks - 1);
  if (helpers == 0) {  // small tensors: no synchronisation at all
    {
      FloatEnvGuard env;
      for (int64_t begin = 0; begin < numel; begin = ChunkEnd(begin, chunk, numel)) {
        fn(context, begin, ChunkEnd(begin, chunk, numel));
      }
    }
    MarkBusy(numel, parallel_min);
    return kSuccess;
  }
  std::shared_ptr<ParallelPass> job;
  try {
    job = std::make_shared<ParallelPass>();
  } catch (const std::bad_alloc&) {
    return kErrInnerCreateExecutor;
  }
  job->fn = fn;
  job->context = context;
  job->numel = numel;
  job->chunk = chunk;
  job->num_chunks = num_chunks;
  job->Plan(helpers + 1);
  for (int64_t i = 0; i < helpers; ++i) {
    auto* ref = new (std::nothrow) std::shared_ptr<ParallelPass>(job);
    if (ref == nullptr) break;  // fewer helpers; the caller still does the rest
    parallel->schedule(parallel->context, &HelperTask, ref);
  }
  job->Work();
  WaitForChunks(job->done, num_chunks);
  MarkBusy(numel, parallel_min);
  return kSuccess;
}

Status CpuRun(void* workspace, uint64_t workspace_size, CpuExecutor* executor, const Parallel* parallel) {
  if (executor == nullptr) return kErrParamNullptr;
  // A run-once executor is released whatever happens below.
  const std::unique_ptr<CpuExecutor> owned(executor->repeatable ? nullptr : executor);
  return executor->Run(workspace, workspace_size, parallel);
}

Status GradPlan::Run(void* workspace, uint64_t workspace_size, const Parallel* parallel) const {
  if (workspace_size < workspace_bytes) return kErrParamInvalid;
  if (workspace_bytes > 0 && workspace == nullptr) return kErrParamNullptr;
  if (main.numel == 0) return kSuccess;
  if (grad_output == nullptr || self == nullptr || grad_input == nullptr) {
    return kErrParamNullptr;
  }
  const BlockKernels* kernels = KernelsFor(isa);
  if (kernels == nullptr) return kErrInnerNullptr;
  const GradBlocks& k = kernels->by_type[DtypeIndex(dtype)].*blocks;
  const int64_t elem = main.elem_bytes[0];
  const char* go = static_cast<const char*>(grad_output) + offsets[0] * elem;
  const char* x = static_cast<const char*>(self) + offsets[1] * elem;
  char* out = static_cast<char*>(grad_input) + offsets[2] * elem;

  Pass pass{main, k.full, stream_stores ? k.full_stream : k.full, go, x, out};
  if (precompute) {
    char* ws = static_cast<char*>(workspace);
    if (Status s = RunPass(Pass{pre, k.derivative, k.derivative, nullptr, x, ws}, *this, parallel); s != kSuccess) {
      return s;
    }
    pass.fn = pass.direct = k.from_derivative;
    pass.b = ws;
  }
  return RunPass(pass, *this, parallel);
}

}  // namespace jas
