// The CPU backend's own helper threads (cpu/helpers.h).
#include "cpu/helpers.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // _mm_pause
#endif

namespace jas {
namespace {

void Relax() {
#if defined(__x86_64__) || defined(__i386__)
  for (int i = 0; i < 16; ++i) _mm_pause();
#elif defined(__aarch64__)
  for (int i = 0; i < 16; ++i) asm volatile("yield");
#endif
}

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The CPUs the calling thread may run on.
std::vector<int> AllowedCpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// How many, as the process's first call (or a child's first call after fork)
// saw them; -1 until then.
std::atomic<int64_t> allowed_cpu_count{-1};

// How many helpers to start: the threads per call the first call asked for
// (JAX_ASCEND_SILU_THREADS's cap, read once), at most one per allowed CPU;
// -1 until a call asks. A caller pinned to one of their CPUs still finds one
// fewer than it may take, which the handler's cap already allows for.
std::atomic<int64_t> helpers_wanted{-1};

int64_t AllowedCpuCount() {
  int64_t n = allowed_cpu_count.load(std::memory_order_relaxed);
  if (n < 0) {
    n = static_cast<int64_t>(AllowedCpus().size());
    allowed_cpu_count.store(n, std::memory_order_relaxed);
  }
  return n;
}

// One helper thread, pinned to `cpu`.
struct alignas(64) Helper {
  // The waking handshake: bit 0 says the helper sleeps (or is about to) in a
  // futex wait on this word; the bits above count the tasks handed to it.
  // Both sides change it only by atomic read-modify-write, so a task handed
  // over while the helper goes to sleep either finds the bit set (and wakes
  // it) or makes the helper's attempt to set it fail.
  std::atomic<uint32_t> word{0};
  // Held by the call whose task the helper has (or is about to get).
  std::atomic<bool> claimed{false};
  bool stop = false;  // written before a hand-over, read after one
  void (*task)(void*) = nullptr;
  void* arg = nullptr;
  int cpu = 0;
  pthread_t thread{};
  bool started = false;

  static constexpr uint32_t kSleeping = 1, kOneTask = 2;

  // Gives the helper the next task. The caller holds `claimed`.
  void HandOver() {
    if (word.fetch_add(kOneTask, std::memory_order_acq_rel) & kSleeping) word.notify_one();
  }

  // Waits, watching then sleeping, for a task after `seen` (the count when the
  // last one was taken); returns the new count.
  //
  // It watches for kHelperAwakeNanoseconds: the first kPauseNanoseconds with
  // the processor's pause (a call right after the last finds it within a
  // microsecond), then yielding its CPU between looks, so that any other
  // thread ready to run there (XLA's pool running the program's other
  // operations, another process) runs instead.
  uint32_t NextTask(uint32_t seen) {
    constexpr int64_t kPauseNanoseconds = 100 * 1000;
    const int64_t start = NowNanoseconds();
    for (int spins = 0;; ++spins) {
      const uint32_t w = word.load(std::memory_order_acquire);
      if ((w & ~kSleeping) != seen) return w & ~kSleeping;
      // The clock only every few rounds: a round is about a microsecond.
      if ((spins & 7) != 7) {
        Relax();
        continue;
      }
      const int64_t awake = NowNanoseconds() - start;
      if (awake >= kHelperAwakeNanoseconds) break;
      if (awake >= kPauseNanoseconds) {
        sched_yield();
      } else {
        Relax();
      }
    }
    for (;;) {
      uint32_t w = seen;
      if (word.compare_exchange_strong(w, seen | kSleeping, std::memory_order_acq_rel)) {
        word.wait(seen | kSleeping, std::memory_order_acquire);
        w = word.fetch_and(~kSleeping, std::memory_order_acq_rel);
      }
      if ((w & ~kSleeping) != seen) return w & ~kSleeping;
    }
  }

  static void* Main(void* self) {
    auto* h = static_cast<Helper*>(self);
    for (uint32_t seen = 0;;) {
      seen = h->NextTask(seen);
      if (h->stop) return nullptr;
      h->task(h->arg);
      h->claimed.store(false, std::memory_order_release);
    }
  }
};

// Every helper of the process, started together by the first shared pass.
class Helpers {
 public:
  explicit Helpers(const std::vector<int>& cpus) : helpers_(cpus.size()) {
    for (size_t i = 0; i < cpus.size(); ++i) helpers_[i].cpu = cpus[i];
  }
  Helpers(const Helpers&) = delete;
  Helpers& operator=(const Helpers&) = delete;

  // A helper that cannot be started (no thread to be had) is left out.
  void Start() {
    for (Helper& h : helpers_) {
      pthread_attr_t attr;
      if (pthread_attr_init(&attr) != 0) continue;
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(h.cpu, &set);
      pthread_attr_setaffinity_np(&attr, sizeof set, &set);
      h.started = pthread_create(&h.thread, &attr, &Helper::Main, &h) == 0;
      pthread_attr_destroy(&attr);
      if (h.started) {
        char name[16];
        std::snprintf(name, sizeof name, "jas-silu/%d", h.cpu);
        pthread_setname_np(h.thread, name);
      } else {
        h.claimed.store(true, std::memory_order_relaxed);  // never handed a task
      }
    }
  }

  ~Helpers() {
    for (Helper& h : helpers_) {
      if (!h.started) continue;
      // Waits for a task in progress, then owns the helper for good.
      while (h.claimed.exchange(true, std::memory_order_acquire)) Relax();
      h.stop = true;
      h.HandOver();
      pthread_join(h.thread, nullptr);
    }
  }

  bool Idle() const {
    for (const Helper& h : helpers_) {
      if (h.started && h.claimed.load(std::memory_order_acquire)) return false;
    }
    return true;
  }

  // Hands `task` to a free helper pinned to a CPU other than the caller's, or
  // runs it on the caller when there is none (Parallel allows either).
  void Schedule(void (*task)(void*), void* arg) {
    const int cpu = sched_getcpu();
    const size_t n = helpers_.size();
    // Callers on different CPUs start their search at different helpers.
    const size_t first = cpu < 0 ? 0 : static_cast<size_t>(cpu) % n;
    for (size_t k = 0; k < n; ++k) {
      Helper& h = helpers_[(first + k) % n];
      if (h.cpu == cpu || h.claimed.load(std::memory_order_relaxed) ||
          h.claimed.exchange(true, std::memory_order_acquire)) {
        continue;
      }
      h.task = task;
      h.arg = arg;
      h.HandOver();
      return;
    }
    task(arg);
  }

 private:
  std::vector<Helper> helpers_;
};

// The process's helpers, started on first use. A child of fork has none of
// its parent's threads: it starts helpers of its own on its first shared
// pass, on the CPUs it may use then (a pool of worker processes often pins
// each to one), and leaves its copy of the parent's alone (reachable, so no
// leak).
std::mutex start_mutex;
std::atomic<Helpers*> running{nullptr};
Helpers* inherited_by_child = nullptr;

struct Owner {
  Owner() {
    pthread_atfork([] { start_mutex.lock(); }, [] { start_mutex.unlock(); },
                   [] {
                     start_mutex.unlock();
                     allowed_cpu_count.store(-1, std::memory_order_relaxed);
                     helpers_wanted.store(-1, std::memory_order_relaxed);
                     if (Helpers* h = running.exchange(nullptr)) inherited_by_child = h;
                   });
  }
  ~Owner() {  // at exit: every helper stopped and joined
    std::lock_guard<std::mutex> lock(start_mutex);
    delete running.exchange(nullptr);
  }
} owner;

Helpers* Running() {
  if (Helpers* h = running.load(std::memory_order_acquire)) return h;
  std::lock_guard<std::mutex> lock(start_mutex);
  if (Helpers* h = running.load(std::memory_order_relaxed)) return h;
  std::vector<int> cpus = AllowedCpus();
  const int64_t wanted = helpers_wanted.load(std::memory_order_relaxed);
  if (wanted >= 0 && static_cast<int64_t>(cpus.size()) > wanted) cpus.resize(static_cast<size_t>(wanted));
  auto* h = new (std::nothrow) Helpers(cpus);
  if (h == nullptr) return nullptr;
  h->Start();
  running.store(h, std::memory_order_release);
  return h;
}

void ScheduleOnHelpers(void*, void (*task)(void*), void* arg) {
  if (Helpers* h = Running()) {
    h->Schedule(task, arg);
  } else {
    task(arg);
  }
}

}  // namespace

bool CpuHelpersIdle() {
  const Helpers* h = running.load(std::memory_order_acquire);
  return h == nullptr || h->Idle();
}

Parallel CpuHelpers(int64_t threads) {
  const int64_t cpus = AllowedCpuCount();
  const int64_t workers = std::max<int64_t>(0, std::min(threads, cpus) - 1);
  // Read first: every call passes here, and only the first need write.
  if (workers > 0 && helpers_wanted.load(std::memory_order_relaxed) < 0) {
    int64_t unset = -1;
    helpers_wanted.compare_exchange_strong(unset, std::min(threads, cpus), std::memory_order_relaxed);
  }
  return Parallel{nullptr, workers, workers > 0 ? &ScheduleOnHelpers : nullptr};
}

}  // namespace jas
