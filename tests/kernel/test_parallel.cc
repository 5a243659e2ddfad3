// When phase 2 asks its Parallel for helpers: not for tensors too small to
// repay waking a thread (unless a chunk size is set explicitly), and never
// more than there are chunks to share.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "cpu/executor.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "thread_parallel.h"

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
// broadcast along a leading dim of `rows` when rows > 1, so the precomputed
// s'(x) pass over numel / rows elements runs too) and returns how many helper
// tasks were scheduled.
int64_t HelpersFor(int64_t numel, int64_t chunk_elements, int64_t rows = 1) {
  Rng rng(static_cast<uint64_t>(numel));
  const Dims out = rows > 1 ? Dims{rows, numel / rows} : Dims{numel};
  Operand go = Contiguous(DataType::kFloat32, out);
  Operand x = Contiguous(DataType::kFloat32, rows > 1 ? Dims{numel / rows} : out);
  Operand gi = Contiguous(DataType::kFloat32, out);
  FillRandom(go, rng, 1.0);
  FillRandom(x, rng, 4.0);
  CountingParallel counting;
  EXPECT_EQ(Compute(go, x, gi, {Isa::kAuto, chunk_elements, 1, &counting.parallel}), kSuccess);
  CheckAgainstReference(go, x, gi, std::to_string(numel) + " elements, chunk " + std::to_string(chunk_elements));
  return counting.scheduled;
}

TEST(parallel, small_tensors_stay_on_the_calling_thread) {
  EXPECT_EQ(HelpersFor(1, 0), 0);
  EXPECT_EQ(HelpersFor(40000, 0), 0);
  EXPECT_EQ(HelpersFor(64 * 1024 - 1, 0), 0);
}

TEST(parallel, large_tensors_get_every_worker) {
  // From kColdParallelMinElements (256K, sixteen default chunks) all three
  // workers are asked, whether or not a helper finished lately.
  EXPECT_EQ(HelpersFor(kColdParallelMinElements, 0), 3);
  EXPECT_EQ(HelpersFor(300000, 0), 3);
  // The s'(x) pass over a broadcast x (300000 elements) and the main pass.
  EXPECT_EQ(HelpersFor(600000, 0, 2), 6);
  // A broadcast x of 40000 elements: its s'(x) pass stays on the caller.
  EXPECT_EQ(HelpersFor(320000, 0, 8), 3);
}

// Between 64K and 256K elements a pass is shared only while the helpers are
// likely still awake, after a helper task or a pass that could have had one:
// a sleeping thread joins too late to repay waking it.
TEST(parallel, mid_sized_passes_share_only_with_an_awake_pool) {
  constexpr int64_t kMin = kParallelMinElements, kCold = kColdParallelMinElements;
  const int64_t kAwake = kHelperAwakeNanoseconds;
  static_assert(kMin == 64 * 1024 && kCold == 256 * 1024);
  EXPECT_TRUE(WorthSharing(kMin, kMin, kCold, 0));
  EXPECT_TRUE(WorthSharing(kCold - 1, kMin, kCold, kAwake - 1));
  EXPECT_FALSE(WorthSharing(kCold - 1, kMin, kCold, kAwake));
  EXPECT_FALSE(WorthSharing(kMin - 1, kMin, kCold, 0));
  EXPECT_TRUE(WorthSharing(kCold, kMin, kCold, int64_t{1} << 62));
  // Through phase 2: once the helpers sleep, a 200000-element pass stays on
  // the calling thread.
  std::this_thread::sleep_for(std::chrono::nanoseconds(kAwake) + std::chrono::milliseconds(1));
  EXPECT_EQ(HelpersFor(200000, 0), 0);
}

TEST(parallel, an_explicit_chunk_size_shares_small_tensors) {
  EXPECT_EQ(HelpersFor(1000, 100), 3);
  EXPECT_EQ(HelpersFor(300, 100), 2);  // three chunks: two helpers
  EXPECT_EQ(HelpersFor(100, 100), 0);  // one chunk: nothing to share
}

// Real threads, default policy: a tensor just past the threshold for a parked
// pool (128K elements) is shared and gives the bits one thread gives.
TEST(parallel, shared_results_match_one_thread) {
  Rng rng(3);
  for (DataType t : kTypes) {
    Operand go = Contiguous(t, {3, 44000}), x = Contiguous(t, {3, 44000});
    FillRandom(go, rng, 1.0);
    FillRandom(x, rng, 4.0);
    Operand one = Contiguous(t, {3, 44000}), shared = one;
    EXPECT_EQ(Compute(go, x, one, {Isa::kAuto, 0, 1}), kSuccess);
    EXPECT_EQ(Compute(go, x, shared, {Isa::kAuto, 0, 3}), kSuccess);
    EXPECT_TRUE(SameBits(one, shared)) << DtypeName(t) << ": 3 threads differ from 1";
  }
}

// Two chunks of 2^20 elements: the helper (a new thread, started late) claims
// the second while the caller works on the first, so the caller usually
// finishes first and waits, past its short spin, for the helper's chunk.
// Phase 2 must not return before that chunk is written: the result is
// checked before the helper thread is joined.
TEST(parallel, the_caller_waits_for_a_helper_still_working) {
  Rng rng(4);
  const int64_t chunk = int64_t{1} << 20;
  Operand go = Contiguous(DataType::kFloat32, {2 * chunk}), x = go, gi = go;
  FillRandom(go, rng, 1.0);
  FillRandom(x, rng, 4.0);
  for (int round = 0; round < 3; ++round) {
    FillSentinel(gi);
    ThreadParallel parallel(2);
    EXPECT_EQ(Compute(go, x, gi, {Isa::kAuto, chunk, 1, parallel.get()}), kSuccess);
    // Backwards: the helper writes its chunk front to back, so an early
    // return shows first at the end (a forward scan could be overtaken).
    int64_t unwritten = 0;
    for (int64_t i = 2 * chunk - 1; i >= 0; --i) unwritten += gi.Bits(i) == Sentinel(DataType::kFloat32);
    EXPECT_TRUE(unwritten == 0) << "round " << round << ": " << unwritten
                                << " elements unwritten when phase 2 returned";
    parallel.Join();
    CheckAgainstReference(go, x, gi, "two 2^20-element chunks, round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace jas::test
