// 10^5 phase-1/phase-2 cycles of every kind (successful runs, each failing
// status of either phase, empty tensors, executors planned and dropped,
// repeatable executors rerun at new addresses and destroyed, helper threads,
// allocation failures) must leave nothing allocated: counted with the
// replaced operator new, and, in a sanitized build, by LeakSanitizer.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloc_counter.h"
#include "kernel_test_util.h"
#include "cpu/helpers.h"
#include "cpu/testing.h"
#include "thread_parallel.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace jas::test {
namespace {

constexpr int64_t kCycles = 100000;

// The operands of one cycle, all sharing one dtype.
struct Case {
  Operand go, x, gi;
  TensorDesc d[3];
  Case(DataType t, const Dims& g, const Dims& xd) : go(Contiguous(t, g)), x(Contiguous(t, xd)),
                                                   gi(Contiguous(t, BroadcastShape(g, xd))) {
    d[0] = go.Desc(), d[1] = x.Desc(), d[2] = gi.Desc();
  }
  Status Plan(uint64_t* ws, CpuExecutor** e) { return SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], ws, e); }
};

// Phase 1, then phase 2 with `workspace_bytes` (the planned size when < 0) and
// the workspace present or not. Returns the status of the phase that failed.
Status PlanAndRun(Case& c, int64_t workspace_bytes = -1, bool null_workspace = false,
                  const Parallel* parallel = nullptr) {
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  if (Status s = c.Plan(&ws, &e); s != kSuccess) return s;
  const uint64_t size = workspace_bytes < 0 ? ws : static_cast<uint64_t>(workspace_bytes);
  std::vector<unsigned char> workspace(size + 1);
  return CpuRun(null_workspace ? nullptr : workspace.data(), size, e, parallel);
}

// One cycle of kind `i % 16`; returns the status it ended with.
Status Cycle(int64_t i) {
  const DataType t = kTypes[i % kTypes.size()];
  switch (i % 16) {
    case 0: {  // same shapes
      Case c(t, {4, 9}, {4, 9});
      return PlanAndRun(c);
    }
    case 1: {  // x broadcast: s'(x) precomputed in the workspace
      Case c(t, {6, 5}, {5});
      return PlanAndRun(c);
    }
    case 2: {  // empty
      Case c(t, {0, 5}, {5});
      return PlanAndRun(c);
    }
    case 3: {  // 161001 in phase 1: a null tensor
      Case c(t, {3}, {3});
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      return SiluGradGetWorkspaceSize(&c.d[0], nullptr, &c.d[2], &ws, &e);
    }
    case 4: {  // 161001 in phase 1: null dims
      Case c(t, {3}, {3});
      c.d[1].dims = nullptr;
      return PlanAndRun(c);
    }
    case 5: {  // 161002 in phase 1: dtypes differ
      Case c(t, {3}, {3});
      c.d[0].dtype = t == DataType::kFloat32 ? DataType::kFloat16 : DataType::kFloat32;
      return PlanAndRun(c);
    }
    case 6: {  // 161002 in phase 1: shapes that do not broadcast
      Case c(t, {3, 4}, {4});
      Dims five{5};
      c.d[1].dims = five.data();
      return PlanAndRun(c);
    }
    case 7: {  // 161002 in phase 1: a view past its storage
      Case c(t, {8}, {8});
      c.d[2].storage_numel = 7;
      return PlanAndRun(c);
    }
    case 8: {  // 161001 in phase 2: no data
      Case c(t, {8}, {8});
      c.d[0].data = nullptr;
      return PlanAndRun(c);
    }
    case 9: {  // 161002 in phase 2: workspace too small
      Case c(t, {6, 5}, {5});
      return PlanAndRun(c, 39);
    }
    case 10: {  // 161001 in phase 2: null workspace of non-zero size
      Case c(t, {6, 5}, {5});
      return PlanAndRun(c, -1, true);
    }
    case 11: {  // planned, never run, destroyed
      Case c(t, {6, 5}, {5});
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      const Status s = c.Plan(&ws, &e);
      if (s == kSuccess) CpuDestroyExecutor(e);
      return s;
    }
    case 12: {  // repeatable: runs at new addresses, a failed run, destroy
      Case c(t, {3, 7}, {7});
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      if (Status s = c.Plan(&ws, &e); s != kSuccess) return s;
      CpuSetRepeatable(e);
      Status s = kSuccess;
      for (int run = 0; run < 3 && s == kSuccess; ++run) {
        Case fresh(t, {3, 7}, {7});
        std::vector<unsigned char> workspace(ws);
        SiluGradSetData(e, fresh.go.bytes.data(), fresh.x.bytes.data(), fresh.gi.bytes.data());
        s = CpuRun(workspace.data(), ws, e, nullptr);
      }
      SiluGradSetData(e, nullptr, nullptr, nullptr);
      if (CpuRun(nullptr, 0, e, nullptr) != kErrParamInvalid) s = -1;  // workspace 0 < ws: refused, kept
      CpuDestroyExecutor(e);
      return s;
    }
    case 13: {  // helper threads (now and then: threads are slow to start)
      Case c(t, {64, 130}, i % 256 == 13 ? Dims{130} : Dims{64, 130});
      if (i % 128 != 13) return PlanAndRun(c);
      ThreadParallel parallel(3);
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      if (Status s = c.Plan(&ws, &e); s != kSuccess) return s;
      CpuSetChunkElements(e, 1000);
      std::vector<unsigned char> workspace(ws);
      return CpuRun(workspace.data(), ws, e, parallel.get());
    }
    case 14: {  // 561101: the executor, or phase 2's shared state, cannot be allocated
      if (i % 64 != 14) {
        Case c(t, {2}, {2});
        return PlanAndRun(c);
      }
      Case c(t, {64, 130}, {64, 130});
      ThreadParallel parallel(2);
      uint64_t ws = 0;
      CpuExecutor* e = nullptr;
      FailAllocation(1);
      const Status first = c.Plan(&ws, &e);
      FailAllocation(0);
      if (first != kErrInnerCreateExecutor) return -1;
      if (Status s = c.Plan(&ws, &e); s != kSuccess) return s;
      CpuSetChunkElements(e, 1000);
      FailAllocation(1);
      const Status s = CpuRun(nullptr, 0, e, parallel.get());
      FailAllocation(0);
      return s;
    }
    default: {  // rank 0 and rank 8
      Case c(t, (i / 16) % 2 ? Dims{} : Dims(8, 2), {});
      return PlanAndRun(c);
    }
  }
}

TEST(leak, hundred_thousand_cycles_leave_nothing_allocated) {
  // Helpers an earlier test woke may not have run yet (on a busy machine),
  // and each still holds its pass's shared state.
  for (int waited_ms = 0; !CpuHelpersIdle() && waited_ms < 10000; ++waited_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const int64_t live = LiveAllocations();
  int64_t by_status[4] = {};  // success, 161001, 161002, 561101
  for (int64_t i = 0; i < kCycles; ++i) {
    const Status s = Cycle(i);
    const int k = s == kSuccess ? 0 : s == kErrParamNullptr ? 1 : s == kErrParamInvalid ? 2
                : s == kErrInnerCreateExecutor ? 3 : -1;
    EXPECT_TRUE(k >= 0) << "cycle " << i << " (kind " << i % 16 << ") ended with status " << s;
    if (k >= 0) ++by_status[k];
    if (i % 997 == 0)
      EXPECT_TRUE(LiveAllocations() == live) << "after cycle " << i << " (kind " << i % 16 << ")";
  }
  EXPECT_EQ(LiveAllocations(), live);
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(by_status[k] > 0) << "no cycle ended with status kind " << k;
  std::printf("  %lld cycles: %lld succeeded, %lld 161001, %lld 161002, %lld 561101; live operator-new blocks %lld "
              "before, %lld after\n",
              static_cast<long long>(kCycles), static_cast<long long>(by_status[0]),
              static_cast<long long>(by_status[1]), static_cast<long long>(by_status[2]),
              static_cast<long long>(by_status[3]), static_cast<long long>(live),
              static_cast<long long>(LiveAllocations()));
#if defined(__SANITIZE_ADDRESS__)
  const int leaks = __lsan_do_recoverable_leak_check();
  EXPECT_TRUE(leaks == 0) << "LeakSanitizer found leaks (reported above)";
  if (leaks == 0) std::printf("  LeakSanitizer: no leaks\n");
#endif
  std::fflush(stdout);
}

}  // namespace
}  // namespace jas::test
