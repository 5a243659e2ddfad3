// The CPU backend's own helper threads (cpu/helpers.h), as the FFI handler
// uses them: results equal one thread's bit for bit, from several calling
// threads at once; a process allowed one CPU gets no helper; a child forked
// after the helpers started runs shared passes on helpers of its own.
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/helpers.h"

namespace jas::test {
namespace {

// float32 operands of `numel` elements, and grad_input computed on one thread.
struct Problem {
  Operand go, x, one;
  explicit Problem(int64_t numel, uint64_t seed)
      : go(Contiguous(DataType::kFloat32, {numel})), x(go), one(go) {
    Rng rng(seed);
    FillRandom(go, rng, 1.0);
    FillRandom(x, rng, 4.0);
    EXPECT_EQ(Compute(go, x, one, {Isa::kAuto, 0, 1}), kSuccess);
  }
  // Both phases on the helpers, at most `threads` threads with the caller,
  // with chunks of `chunk` elements (0: default); whether the result has one
  // thread's bits.
  bool SharedMatches(int64_t chunk, int64_t threads = INT64_MAX) {
    Operand gi = one;
    FillSentinel(gi);
    const Parallel helpers = CpuHelpers(threads);
    return Compute(go, x, gi, {Isa::kAuto, chunk, 1, &helpers}) == kSuccess && SameBits(one, gi);
  }
};

int AllowedCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

// Threads of this process, from /proc.
int ThreadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

TEST(helpers, one_per_other_cpu_capped_by_the_thread_count) {
  const int cpus = AllowedCpuCount();
  ASSERT_GT(cpus, 0);
  EXPECT_EQ(CpuHelpers(INT64_MAX).num_workers, cpus - 1);
  EXPECT_EQ(CpuHelpers(1).num_workers, 0);
  EXPECT_EQ(CpuHelpers(2).num_workers, cpus > 1 ? 1 : 0);
  EXPECT_EQ(CpuHelpers(1).schedule, nullptr);
}

TEST(helpers, shared_results_match_one_thread) {
  Problem p(300000, 1);  // past kColdParallelMinElements: shared however long since the last pass
  for (int round = 0; round < 20; ++round) {
    EXPECT_TRUE(p.SharedMatches(round % 2 ? 4096 : 0)) << "round " << round;
  }
}

// Four callers at once, more than there are helpers: a caller that finds every
// helper taken does the pass itself, and every caller gets its own answer.
TEST(helpers, concurrent_callers_each_get_their_own_answer) {
  std::vector<Problem> problems;
  for (int t = 0; t < 4; ++t) problems.emplace_back(100000 + 30000 * t, 10 + t);
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) wrong += !problems[t].SharedMatches(round % 3 ? 8192 : 0);
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Runs `child` in a child of fork and returns its exit status (SIGALRM ends
// one that hangs).
template <typename Child>
int InChild(Child child) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    std::_Exit(child());
  }
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

// As a worker process that pins itself to one CPU after fork, before its
// first call, would.
TEST(helpers, a_process_allowed_one_cpu_gets_none) {
  const int status = InChild([] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return 2;
    const Parallel p = CpuHelpers(INT64_MAX);
    return p.num_workers == 0 && p.schedule == nullptr ? 0 : 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// The parent's helpers do not exist in a child of fork; the child must start
// its own (a caller never waits for a helper that has not taken work, so
// without them it would run alone), and not hang. SIGALRM ends a child that
// hangs.
TEST(helpers, a_child_forked_after_they_started_runs_shared_passes) {
  Problem p(300000, 2);
  ASSERT_TRUE(p.SharedMatches(0));  // the helpers have started
  const int status = InChild([&p] {
    bool ok = true;
    for (int round = 0; round < 5; ++round) ok = ok && p.SharedMatches(round % 2 ? 4096 : 0);
    // The child's own helpers: one thread per allowed CPU beside the caller.
    const bool started = ThreadCount() == (AllowedCpuCount() > 1 ? 1 + AllowedCpuCount() : 1);
    return !ok ? 1 : !started ? 3 : 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "the child hung"
          : WIFEXITED(status) && WEXITSTATUS(status) == 3    ? "the child started no helpers of its own"
                                                              : "the child's results differ");
  EXPECT_TRUE(p.SharedMatches(0)) << "the parent after the fork";
}

// JAX_ASCEND_SILU_THREADS=n starts helpers on at most n CPUs, not one per
// CPU (in a child of fork, whose helpers start with its first shared pass).
// On a machine of two CPUs n = 2 starts both, as without a cap.
TEST(helpers, a_cap_on_threads_caps_the_helpers_started) {
  Problem p(300000, 3);
  const int status = InChild([&p] {
    // Counted before and after, not against 1: an emulator (qemu-user) runs
    // threads of its own in the process.
    const int before = ThreadCount();
    if (!p.SharedMatches(0, 2)) return 1;
    const int cpus = AllowedCpuCount();
    return ThreadCount() - before == (cpus > 1 ? 2 : 0) ? 0 : 3;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "more helpers started than the cap" : "status")
      << " " << status;
}

}  // namespace
}  // namespace jas::test
