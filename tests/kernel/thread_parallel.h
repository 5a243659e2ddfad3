// A jas::Parallel backed by plain std::threads, one per scheduled task, all
// joined when it goes out of scope. For the kernel's own tests and the Python
// kernel binding; the XLA handler uses the backend's own helpers instead
// (kernel/cpu/helpers.h).
#ifndef JAX_ASCEND_SILU_TESTS_KERNEL_THREAD_PARALLEL_H_
#define JAX_ASCEND_SILU_TESTS_KERNEL_THREAD_PARALLEL_H_

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/backend.h"

namespace jas {

class ThreadParallel {
 public:
  // `threads` counts the calling thread: 1 gives no helpers.
  explicit ThreadParallel(int64_t threads)
      : parallel_{this, threads > 1 ? threads - 1 : 0, &Schedule} {}
  ThreadParallel(const ThreadParallel&) = delete;
  ThreadParallel& operator=(const ThreadParallel&) = delete;
  ~ThreadParallel() { Join(); }

  const Parallel* get() const { return &parallel_; }

  // Waits for every task scheduled so far.
  void Join() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

 private:
  static void Schedule(void* context, void (*task)(void*), void* arg) {
    auto* self = static_cast<ThreadParallel*>(context);
    try {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->threads_.emplace_back(task, arg);
      return;
    } catch (...) {  // no thread to be had: Parallel allows running the task inline
    }
    task(arg);
  }

  Parallel parallel_;
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

}  // namespace jas

#endif  // JAX_ASCEND_SILU_TESTS_KERNEL_THREAD_PARALLEL_H_
