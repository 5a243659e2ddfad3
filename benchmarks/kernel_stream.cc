// The CPU kernel past the cache: one call through the kernel's public API
// (phase 1 and phase 2, as the FFI handler makes it) against the memory
// traffic it cannot avoid, on the same threads:
//   kernel   SiluGrad over contiguous grad_output, self -> grad_input;
//   stream   out[i] = g[i] * x[i] over the same bytes (float32 lanes, ordinary
//            stores), each thread one contiguous half: two in, one out;
//   copy     memcpy of g into out, each thread one half: one in, one out.
// "ratio" is stream time / kernel time (1 = the kernel runs at the speed of a
// plain two-in-one-out stream). Output buffers are either warm (one buffer
// per contender, reused) or fresh (newly mapped before each call, given the FFI handler's
// huge-page advice, ffi/cpu/fresh_pages.h, and unmapped after it, outside the
// timing; "fresh-4k" without the advice). x ~ uniform(-6, 6), g ~ uniform(-1, 1). Every case is sampled round
// after round, contenders next to each other, so load from other processes
// falls on each alike; medians and 10th-90th percentiles of the rounds.
// Not a ctest entry. Build the target `kernel_stream` (configure with
// -DJAX_ASCEND_SILU_TESTS=ON) and run
//   kernel_stream [--rounds R] [--threads T] [--log2 N]... [--dtype float32|bfloat16|float16]...
//                 [--output warm|fresh|fresh-4k]... [--clock wall|cpu]
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/dtype.h"
#include "common/half.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "cpu/fresh_pages.h"

namespace {

// A persistent pool, as XLA's intra-op pool is: a task handed to it starts on
// a thread that is already running (spinning briefly, then asleep), not on a
// new one. Serves the kernel's Parallel and the contenders alike.
inline void CpuRelax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  int workers() const { return static_cast<int>(threads_.size()); }
  void Schedule(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
      pending_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_one();
  }
  static void ScheduleRaw(void* pool, void (*task)(void*), void* arg) {
    static_cast<Pool*>(pool)->Schedule([task, arg] { task(arg); });
  }

 private:
  void Loop() {
    for (;;) {
      // Spin for a while first: a call's helper task arrives within
      // microseconds of the previous one, and a futex wake-up costs tens.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      while (pending_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until) {
        CpuRelax();
      }
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        pending_.fetch_sub(1, std::memory_order_relaxed);
      }
      task();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::atomic<int64_t> pending_{0};
  bool stop_ = false;
};

// Runs body(t, threads) on the calling thread (t = 0) and on the pool's
// workers, returning when all are done.
void OnAllThreads(Pool& pool, const std::function<void(int, int)>& body) {
  const int threads = pool.workers() + 1;
  std::atomic<int> left{threads - 1};
  for (int t = 1; t < threads; ++t) {
    pool.Schedule([&, t] {
      body(t, threads);
      if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) left.notify_one();
    });
  }
  body(0, threads);
  for (int l; (l = left.load(std::memory_order_acquire)) != 0;) left.wait(l, std::memory_order_acquire);
}

void MulStreamPlain(const float* g, const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] * x[i];
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void MulStreamAvx512(const float* g, const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(g + i), _mm512_loadu_ps(x + i)));
  }
  MulStreamPlain(g + i, x + i, out + i, n - i);
}
#endif

// AVX-512 where the processor has it (the kernel's widest path), else the compiler's loop.
void MulStream(const float* g, const float* x, float* out, int64_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return MulStreamAvx512(g, x, out, n);
#endif
  MulStreamPlain(g, x, out, n);
}

void* MapBytes(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("kernel_stream: mmap");
    std::exit(1);
  }
  return p;
}

struct Config {
  jas::DataType dtype;
  int log2;
  bool fresh;
  bool advice;  // fresh outputs: the huge-page advice
};

struct Samples {
  std::vector<double> kernel, stream, copy;
};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// Milliseconds on a clock: wall time, or with --clock cpu the calling
// thread's own processor time, which leaves out the time other processes
// hold its core (meaningful with --threads 1 only).
bool g_cpu_clock = false;

double Now() {
  timespec t;
  clock_gettime(g_cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

class Bench {
 public:
  Bench(Pool& pool, Config c) : pool_(pool), c_(c) {
    n_ = int64_t{1} << c.log2;
    bytes_ = static_cast<size_t>(n_) * jas::ElementBytes(c.dtype);
    g_ = static_cast<char*>(MapBytes(bytes_));
    x_ = static_cast<char*>(MapBytes(bytes_));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> ux(-6.0f, 6.0f), ug(-1.0f, 1.0f);
    for (int64_t i = 0; i < n_; ++i) {
      const float x = ux(rng), g = ug(rng);
      switch (c.dtype) {
        case jas::DataType::kFloat32:
          reinterpret_cast<float*>(x_)[i] = x;
          reinterpret_cast<float*>(g_)[i] = g;
          break;
        case jas::DataType::kBFloat16:
          reinterpret_cast<uint16_t*>(x_)[i] = jas::half::FloatToBF16(x);
          reinterpret_cast<uint16_t*>(g_)[i] = jas::half::FloatToBF16(g);
          break;
        default:
          reinterpret_cast<uint16_t*>(x_)[i] = jas::half::FloatToF16(x);
          reinterpret_cast<uint16_t*>(g_)[i] = jas::half::FloatToF16(g);
          break;
      }
    }
    if (!c.fresh) {
      for (char*& out : warm_out_) {
        out = static_cast<char*>(MapBytes(bytes_));
        std::memset(out, 0, bytes_);
      }
    }
  }
  ~Bench() {
    munmap(g_, bytes_);
    munmap(x_, bytes_);
    for (char* out : warm_out_) {
      if (out) munmap(out, bytes_);
    }
  }

  // One sample of each contender, in the given order.
  void Round(int order, Samples* s) {
    for (int k = 0; k < 3; ++k) {
      switch ((order + k) % 3) {
        case 0: s->kernel.push_back(Time(0, [this](char* out) { Kernel(out); })); break;
        case 1: s->stream.push_back(Time(1, [this](char* out) { Stream(out); })); break;
        default: s->copy.push_back(Time(2, [this](char* out) { Copy(out); })); break;
      }
    }
  }

  // Checks the kernel wrote every element (a failed call would time nothing).
  bool KernelWrites() {
    char* out = static_cast<char*>(MapBytes(bytes_));
    std::memset(out, 0xff, bytes_);  // NaN in every dtype
    Kernel(out);
    bool ok = true;
    for (int64_t i = 0; i < n_ && ok; ++i) {
      float v;
      if (c_.dtype == jas::DataType::kFloat32) {
        v = reinterpret_cast<float*>(out)[i];
      } else if (c_.dtype == jas::DataType::kBFloat16) {
        v = jas::half::BF16ToFloat(reinterpret_cast<uint16_t*>(out)[i]);
      } else {
        v = jas::half::F16ToFloat(reinterpret_cast<uint16_t*>(out)[i]);
      }
      ok = v == v;
    }
    munmap(out, bytes_);
    return ok;
  }

 private:
  template <class F>
  double Time(int contender, F&& call) {
    // Calls per sample: at least about 2 ms of work per sample.
    const int calls = c_.fresh ? 1 : 2 * static_cast<int>((int64_t{1} << 21) >> std::min(c_.log2, 21));
    double total = 0;
    for (int i = 0; i < calls; ++i) {
      char* out = warm_out_[contender];
      if (c_.fresh) {
        out = static_cast<char*>(MapBytes(bytes_));
        if (c_.advice) jas::ffi::AdviseHugePagesIfFresh(out, bytes_);
      }
      const double start = Now();
      call(out);
      total += Now() - start;
      if (c_.fresh) munmap(out, bytes_);
    }
    return total / calls;
  }

  void Kernel(char* out) {
    const int64_t dims[1] = {n_};
    jas::TensorDesc g{c_.dtype, 1, dims, nullptr, 0, n_, g_};
    jas::TensorDesc x{c_.dtype, 1, dims, nullptr, 0, n_, x_};
    jas::TensorDesc o{c_.dtype, 1, dims, nullptr, 0, n_, out};
    uint64_t ws = 0;
    jas::CpuExecutor* e = nullptr;
    if (jas::SiluGradGetWorkspaceSize(&g, &x, &o, &ws, &e) != jas::kSuccess || ws != 0) std::abort();
    const jas::Parallel parallel{&pool_, pool_.workers(), &Pool::ScheduleRaw};
    if (jas::CpuRun(nullptr, 0, e, &parallel) != jas::kSuccess) std::abort();
  }
  void Stream(char* out) {
    const int64_t floats = static_cast<int64_t>(bytes_ / 4);
    OnAllThreads(pool_, [&](int t, int threads) {
      const int64_t b = floats * t / threads, e = floats * (t + 1) / threads;
      MulStream(reinterpret_cast<const float*>(g_) + b, reinterpret_cast<const float*>(x_) + b,
                reinterpret_cast<float*>(out) + b, e - b);
    });
  }
  void Copy(char* out) {
    OnAllThreads(pool_, [&](int t, int threads) {
      const size_t b = bytes_ * t / threads, e = bytes_ * (t + 1) / threads;
      std::memcpy(out + b, g_ + b, e - b);
    });
  }

  Pool& pool_;
  Config c_;
  int64_t n_ = 0;
  size_t bytes_ = 0;
  char* g_ = nullptr;
  char* x_ = nullptr;
  char* warm_out_[3] = {};  // each contender's own: only its previous call wrote it
};

int Fail(const char* what) {
  std::fprintf(stderr, "kernel_stream: %s\n", what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> sizes;
  std::vector<jas::DataType> dtypes;
  std::vector<std::string> outputs;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Fail(("missing value after " + flag).c_str());
    const std::string v = argv[i + 1];
    if (flag == "--rounds") {
      rounds = std::max(1, std::atoi(v.c_str()));
    } else if (flag == "--threads") {
      threads = std::max(1, std::atoi(v.c_str()));
    } else if (flag == "--log2") {
      const int l = std::atoi(v.c_str());
      if (l < 10 || l > 28) return Fail("--log2 takes 10 to 28");
      sizes.push_back(l);
    } else if (flag == "--dtype") {
      if (v == "float32") dtypes.push_back(jas::DataType::kFloat32);
      else if (v == "bfloat16") dtypes.push_back(jas::DataType::kBFloat16);
      else if (v == "float16") dtypes.push_back(jas::DataType::kFloat16);
      else return Fail("--dtype takes float32, bfloat16 or float16");
    } else if (flag == "--clock") {
      if (v != "wall" && v != "cpu") return Fail("--clock takes wall or cpu");
      g_cpu_clock = v == "cpu";
    } else if (flag == "--output") {
      if (v != "warm" && v != "fresh" && v != "fresh-4k") {
        return Fail("--output takes warm, fresh or fresh-4k");
      }
      outputs.push_back(v);
    } else {
      return Fail(("unknown flag " + flag).c_str());
    }
  }
  if (sizes.empty()) sizes = {20, 22, 24};
  if (dtypes.empty()) dtypes = {jas::DataType::kFloat32, jas::DataType::kBFloat16, jas::DataType::kFloat16};
  if (outputs.empty()) outputs = {"warm", "fresh"};

  Pool pool(threads - 1);
  std::printf("kernel ISA %s, %d threads, %d rounds, %s clock; "
              "ms per call, median (10th-90th percentile)\n\n",
              jas::IsaName(jas::BestIsa()), threads, rounds, g_cpu_clock ? "thread CPU" : "wall");
  std::printf("| dtype | n | output | kernel | stream | copy | stream / kernel, median (range) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const jas::DataType t : dtypes) {
    for (const int l : sizes) {
      for (const std::string& output : outputs) {
        Bench bench(pool, {t, l, output != "warm", output == "fresh"});
        if (!bench.KernelWrites()) return Fail("the kernel left elements unwritten");
        Samples s;
        for (int r = 0; r < rounds; ++r) bench.Round(r, &s);
        std::vector<double> ratio;
        for (int r = 0; r < rounds; ++r) ratio.push_back(s.stream[r] / s.kernel[r]);
        auto cell = [](const std::vector<double>& v) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.3f (%.3f-%.3f)", Percentile(v, 0.5), Percentile(v, 0.1),
                        Percentile(v, 0.9));
          return std::string(buf);
        };
        std::printf("| %s | 2^%d | %s | %s | %s | %s | %.2f (%.2f-%.2f) |\n", jas::DtypeName(t), l,
                    output.c_str(), cell(s.kernel).c_str(), cell(s.stream).c_str(), cell(s.copy).c_str(),
                    Percentile(ratio, 0.5), Percentile(ratio, 0.1), Percentile(ratio, 0.9));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
