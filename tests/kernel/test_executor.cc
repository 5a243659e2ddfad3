// Executor lifetimes: run-once executors are released by phase 2 whatever it
// returns; repeatable ones rerun with new buffers until destroyed. Leaks are
// seen by counting live operator-new blocks (alloc_counter.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alloc_counter.h"
#include "kernel_test_util.h"
#include "cpu/testing.h"
#include "thread_parallel.h"

namespace jas::test {
namespace {

// A layout to plan once and fill many times.
struct Layout {
  const char* name;
  DataType dtype;
  Operand go, x, gi;  // descriptors only: their storage is never used
};

std::vector<Layout> Layouts(Rng& rng) {
  std::vector<Layout> out;
  for (DataType t : kTypes) {
    out.push_back({"same shape", t, Contiguous(t, {33, 65}), Contiguous(t, {33, 65}), Contiguous(t, {33, 65})});
    out.push_back({"x broadcast", t, Contiguous(t, {33, 65}), Contiguous(t, {65}), Contiguous(t, {33, 65})});
    out.push_back({"strided", t, RandomView(t, {5, 1, 7, 9}, rng, false), RandomView(t, {7, 1}, rng, false),
                   RandomView(t, {5, 1, 7, 9}, rng, true)});
  }
  return out;
}

// Fresh storage of the layout's shape and strides, filled for one run.
Operand Refill(const Operand& layout, Rng& rng, double scale, bool output) {
  Operand op = layout;
  op.bytes.assign(op.bytes.size(), 0);
  if (output) {
    FillSentinel(op);
  } else {
    FillRandom(op, rng, scale);
  }
  return op;
}

TEST(executor, run_once_is_released_by_phase_two) {
  Rng rng(1);
  for (Layout& l : Layouts(rng)) {
    Operand go = Refill(l.go, rng, 1.0, false), x = Refill(l.x, rng, 4.0, false), gi = Refill(l.gi, rng, 0, true);
    const TensorDesc dg = go.Desc(), dx = x.Desc(), dgi = gi.Desc();
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    std::vector<unsigned char> workspace(1024);
    const int64_t live = LiveAllocations();
    EXPECT_EQ(SiluGradGetWorkspaceSize(&dg, &dx, &dgi, &ws, &e), kSuccess);
    EXPECT_EQ(LiveAllocations(), live + 1);
    EXPECT_TRUE(ws <= workspace.size());
    EXPECT_EQ(CpuRun(workspace.data(), ws, e, nullptr), kSuccess);
    EXPECT_TRUE(LiveAllocations() == live) << l.name;
    CheckAgainstReference(go, x, gi, l.name);
    // With helper threads, and after a failing run.
    for (int fail = 0; fail < 2; ++fail) {
      EXPECT_EQ(SiluGradGetWorkspaceSize(&dg, &dx, &dgi, &ws, &e), kSuccess);
      {
        ThreadParallel parallel(3);
        const Status s = fail ? SiluGradSetData(e, nullptr, x.bytes.data(), gi.bytes.data()) : kSuccess;
        EXPECT_EQ(s, kSuccess);
        EXPECT_EQ(CpuRun(workspace.data(), ws, e, parallel.get()), fail ? kErrParamNullptr : kSuccess);
      }
      EXPECT_TRUE(LiveAllocations() == live) << l.name << (fail ? " failed run" : " threaded run");
    }
  }
}

TEST(executor, unrun_executor_is_destroyed_explicitly) {
  Operand go = Contiguous(DataType::kFloat32, {8}), x = go, gi = go;
  const TensorDesc dg = go.Desc(), dx = x.Desc(), dgi = gi.Desc();
  uint64_t ws = 0;
  CpuExecutor* e = nullptr;
  const int64_t live = LiveAllocations();
  EXPECT_EQ(SiluGradGetWorkspaceSize(&dg, &dx, &dgi, &ws, &e), kSuccess);
  EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
  EXPECT_EQ(LiveAllocations(), live);
}

TEST(executor, repeatable_reruns_with_new_buffers_until_destroyed) {
  Rng rng(2);
  for (Layout& l : Layouts(rng)) {
    TensorDesc d[3] = {l.go.Desc(), l.x.Desc(), l.gi.Desc()};
    for (TensorDesc& desc : d) desc.data = nullptr;  // addresses come later
    uint64_t ws = 0;
    CpuExecutor* e = nullptr;
    EXPECT_EQ(SiluGradGetWorkspaceSize(&d[0], &d[1], &d[2], &ws, &e), kSuccess);
    EXPECT_EQ(CpuSetRepeatable(e), kSuccess);
    // Every run gets buffers at new addresses (all kept alive, so none is reused).
    std::vector<std::unique_ptr<Operand>> keep;
    for (int run = 0; run < 4; ++run) {
      keep.push_back(std::make_unique<Operand>(Refill(l.go, rng, 1.0, false)));
      Operand& go = *keep.back();
      keep.push_back(std::make_unique<Operand>(Refill(l.x, rng, 4.0, false)));
      Operand& x = *keep.back();
      keep.push_back(std::make_unique<Operand>(Refill(l.gi, rng, 0, true)));
      Operand& gi = *keep.back();
      std::vector<unsigned char> workspace(ws + 64);
      EXPECT_EQ(SiluGradSetData(e, go.bytes.data(), x.bytes.data(), gi.bytes.data()), kSuccess);
      const int64_t live = LiveAllocations();
      {
        ThreadParallel parallel(1 + run);
        EXPECT_EQ(CpuRun(ws ? workspace.data() + 8 * run : nullptr, ws, e, parallel.get()), kSuccess);
      }
      EXPECT_TRUE(LiveAllocations() == live)
          << l.name << " run " << run << ": the executor must survive, nothing leak";
      CheckAgainstReference(go, x, gi, std::string(l.name) + " run " + std::to_string(run));
    }
    // A failed run leaves a repeatable executor usable.
    EXPECT_EQ(SiluGradSetData(e, nullptr, nullptr, nullptr), kSuccess);
    EXPECT_EQ(CpuRun(nullptr, ws, e, nullptr), kErrParamNullptr);  // no data (and no workspace)
    Operand go = Refill(l.go, rng, 1.0, false), x = Refill(l.x, rng, 4.0, false), gi = Refill(l.gi, rng, 0, true);
    std::vector<unsigned char> workspace(ws);
    EXPECT_EQ(SiluGradSetData(e, go.bytes.data(), x.bytes.data(), gi.bytes.data()), kSuccess);
    if (ws > 0) EXPECT_EQ(CpuRun(workspace.data(), ws - 1, e, nullptr), kErrParamInvalid);
    EXPECT_EQ(CpuRun(workspace.data(), ws, e, nullptr), kSuccess);
    CheckAgainstReference(go, x, gi, std::string(l.name) + " after failures");
    const int64_t live = LiveAllocations();
    EXPECT_EQ(CpuDestroyExecutor(e), kSuccess);
    EXPECT_TRUE(LiveAllocations() == live - 1) << l.name << ": destroy releases the executor";
  }
}

}  // namespace
}  // namespace jas::test
