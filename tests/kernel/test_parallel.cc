// When phase 2 asks its Parallel for helpers: not for tensors too small to
// repay waking a thread (unless a chunk size is set explicitly), and never
// more than there are chunks to share.
#include <cstdint>
#include <string>

#include "check.h"
#include "kernel_test_util.h"
#include "silu_grad.h"

namespace jas::test {
namespace {

// A Parallel that runs every task inline and counts them.
struct CountingParallel {
  int64_t scheduled = 0;
  Parallel parallel{this, 3, &Schedule};

  static void Schedule(void* context, void (*task)(void*), void* arg) {
    ++static_cast<CountingParallel*>(context)->scheduled;
    task(arg);
  }
};

// Runs both phases on contiguous float32 tensors of `numel` elements (x
// broadcast along a leading dim of 2 when `broadcast`, so the precomputed
// s'(x) pass runs too) and returns how many helper tasks were scheduled.
int64_t HelpersFor(int64_t numel, int64_t chunk_elements, bool broadcast = false) {
  Rng rng(static_cast<uint64_t>(numel));
  const Dims out = broadcast ? Dims{2, numel / 2} : Dims{numel};
  Operand go = Contiguous(DataType::kFloat32, out);
  Operand x = Contiguous(DataType::kFloat32, broadcast ? Dims{numel / 2} : out);
  Operand gi = Contiguous(DataType::kFloat32, out);
  FillRandom(go, rng, 1.0);
  FillRandom(x, rng, 4.0);
  FillSentinel(gi);
  const TensorDesc dg = go.Desc(), dx = x.Desc(), dgi = gi.Desc();
  uint64_t ws = 0;
  SiluGradExecutor* e = nullptr;
  CHECK_EQ(SiluGradGetWorkspaceSize(&dg, &dx, &dgi, &ws, &e), kSuccess);
  if (chunk_elements > 0) CHECK_EQ(SiluGradSetChunkElements(e, chunk_elements), kSuccess);
  std::vector<unsigned char> workspace(ws);
  CountingParallel counting;
  CHECK_EQ(SiluGradRun(ws ? workspace.data() : nullptr, ws, e, &counting.parallel), kSuccess);
  CheckAgainstReference(go, x, gi, std::to_string(numel) + " elements, chunk " + std::to_string(chunk_elements));
  return counting.scheduled;
}

TEST(parallel, small_tensors_stay_on_the_calling_thread) {
  CHECK_EQ(HelpersFor(1, 0), 0);
  CHECK_EQ(HelpersFor(40000, 0), 0);
  CHECK_EQ(HelpersFor(64 * 1024 - 1, 0), 0);
}

TEST(parallel, large_tensors_get_every_worker) {
  // 64K elements: four default chunks, so all three workers are asked.
  CHECK_EQ(HelpersFor(64 * 1024, 0), 3);
  CHECK_EQ(HelpersFor(300000, 0), 3);
  // The s'(x) pass over a broadcast x (150000 elements) and the main pass.
  CHECK_EQ(HelpersFor(300000, 0, true), 6);
}

TEST(parallel, an_explicit_chunk_size_shares_small_tensors) {
  CHECK_EQ(HelpersFor(1000, 100), 3);
  CHECK_EQ(HelpersFor(300, 100), 2);  // three chunks: two helpers
  CHECK_EQ(HelpersFor(100, 100), 0);  // one chunk: nothing to share
}

}  // namespace
}  // namespace jas::test
