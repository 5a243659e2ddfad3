// The CUDA backend on the host: phase 1 must accept and reject exactly what
// the CPU phase 1 does, with the same status codes, and plan broadcasting as
// stride-0 dimensions; the kernels' grid loops (kernel/cuda/grid.h), run for
// every thread of a simulated grid, must write every output element exactly
// once with the CPU kernel's bits. Needs no GPU.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/isa.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/backend.h"
#include "fake_desc.h"
#include "kernel_test_util.h"

namespace {

using Dims = std::vector<int64_t>;

using jas::test::Desc;

jas::Status CpuStatus(const Desc& g, const Desc& x, const Desc& out) {
  const jas::TensorDesc a = g.get(), b = x.get(), c = out.get();
  uint64_t ws = 0;
  jas::CpuExecutor* e = nullptr;
  const jas::Status s = jas::SiluGradGetWorkspaceSize(&a, &b, &c, &ws, &e);
  if (s == jas::kSuccess) jas::CpuDestroyExecutor(e);
  return s;
}

struct Plan {
  jas::Status status;
  uint64_t workspace = 99;
  jas::GradCudaPlan plan;
};

Plan CudaPlan(const Desc& g, const Desc& x, const Desc& out) {
  const jas::TensorDesc a = g.get(), b = x.get(), c = out.get();
  Plan p;
  jas::CudaExecutor* e = nullptr;
  p.status = jas::SiluGradCudaGetWorkspaceSize(&a, &b, &c, &p.workspace, &e);
  if (p.status == jas::kSuccess) {
    p.plan = static_cast<const jas::GradCudaPlan&>(*e);
    jas::CudaDestroyExecutor(e);
  }
  return p;
}

Dims Strides(const jas::GradCudaPlan& e, int op) {
  return Dims(e.loop.strides[op], e.loop.strides[op] + e.loop.rank);
}

}  // namespace

TEST(cuda_plan, same_status_codes_as_the_cpu_phase_one) {
  const Desc f32{{3, 4}};
  Desc f16 = f32;
  f16.dtype = jas::DataType::kFloat16;
  Desc overlapping{{3, 4}, {1, 1}};
  Desc out_of_storage = f32;
  out_of_storage.storage = 11;
  Desc negative_stride{{3, 4}, {-4, 1}};
  const Desc rank9{{1, 1, 1, 1, 1, 1, 1, 1, 1}};
  const std::vector<std::vector<Desc>> cases = {
      {f32, f32, f32},              // valid
      {f16, f32, f32},              // mixed dtypes
      {f32, Desc{{5}}, f32},        // not broadcastable
      {f32, f32, Desc{{3, 5}}},     // wrong output shape
      {f32, f32, overlapping},      // output elements overlap
      {f32, out_of_storage, f32},   // reads past the storage
      {f32, negative_stride, f32},  // negative stride
      {rank9, rank9, rank9},        // rank 9
  };
  const jas::Status expected[] = {0, 161002, 161002, 161002, 161002, 161002, 161002, 161002};
  for (size_t i = 0; i < cases.size(); ++i) {
    const jas::Status cpu = CpuStatus(cases[i][0], cases[i][1], cases[i][2]);
    EXPECT_EQ(cpu, expected[i]);
    EXPECT_EQ(CudaPlan(cases[i][0], cases[i][1], cases[i][2]).status, cpu);
  }
  uint64_t ws = 0;
  jas::CudaExecutor* e = nullptr;
  const jas::TensorDesc d = f32.get();
  EXPECT_EQ(jas::SiluGradCudaGetWorkspaceSize(nullptr, &d, &d, &ws, &e), jas::kErrParamNullptr);
  EXPECT_EQ(jas::SiluGradCudaGetWorkspaceSize(&d, &d, &d, nullptr, &e), jas::kErrParamNullptr);
  EXPECT_EQ(jas::CudaRun(nullptr, 0, nullptr, nullptr, nullptr), jas::kErrParamNullptr);
}

// Phase 2 releases the executor into the calling thread's slot, and the
// next phase 1 takes it back: one allocation for a program's calls.
TEST(cuda_plan, a_thread_reuses_the_executor_it_released) {
  using Slot = jas::cuda::ExecutorSlot<jas::GradCudaPlan>;
  const Desc three{{3}};  // outlives d, which points at its dims
  const jas::TensorDesc d = three.get();
  uint64_t ws = 0;
  jas::CudaExecutor *first = nullptr, *second = nullptr, *third = nullptr;
  ASSERT_EQ(jas::SiluGradCudaGetWorkspaceSize(&d, &d, &d, &ws, &first), jas::kSuccess);
  ASSERT_EQ(jas::CudaDestroyExecutor(first), jas::kSuccess);
  EXPECT_EQ(Slot::Mine().kept, static_cast<void*>(first));
  ASSERT_EQ(jas::SiluGradCudaGetWorkspaceSize(&d, &d, &d, &ws, &second), jas::kSuccess);
  EXPECT_EQ(second, first);
  EXPECT_EQ(Slot::Mine().kept, nullptr);
  ASSERT_EQ(jas::SiluGradCudaGetWorkspaceSize(&d, &d, &d, &ws, &third), jas::kSuccess);  // two at once
  EXPECT_NE(third, second);
  ASSERT_EQ(jas::CudaDestroyExecutor(second), jas::kSuccess);
  ASSERT_EQ(jas::CudaDestroyExecutor(third), jas::kSuccess);  // the slot is taken: freed
  EXPECT_EQ(Slot::Mine().kept, static_cast<void*>(second));
}

TEST(cuda_plan, contiguous_operands_take_the_flat_path_without_workspace) {
  const Plan p = CudaPlan(Desc{{2, 1, 3}}, Desc{{2, 1, 3}}, Desc{{2, 1, 3}});
  EXPECT_EQ(p.status, jas::kSuccess);
  EXPECT_EQ(p.workspace, uint64_t{0});
  EXPECT_TRUE(p.plan.contiguous);
  EXPECT_EQ(p.plan.numel, int64_t{6});
  EXPECT_EQ(p.plan.loop.rank, int64_t{1});  // the size-1 dim dropped, the rest merged
  EXPECT_EQ(Strides(p.plan, 2), (Dims{1}));
}

TEST(cuda_plan, broadcast_operands_get_stride0_dims_and_no_workspace) {
  // self broadcast: the CPU plan would precompute s'(self) into a workspace;
  // the GPU reads it through stride 0 instead.
  const Plan p = CudaPlan(Desc{{5, 7}}, Desc{{7}}, Desc{{5, 7}});
  EXPECT_EQ(p.status, jas::kSuccess);
  EXPECT_EQ(p.workspace, uint64_t{0});
  EXPECT_TRUE(!p.plan.contiguous);
  EXPECT_EQ(Strides(p.plan, 0), (Dims{7, 1}));
  EXPECT_EQ(Strides(p.plan, 1), (Dims{0, 1}));
  const Plan q = CudaPlan(Desc{{5, 1}}, Desc{{7}}, Desc{{5, 7}});
  EXPECT_EQ(q.status, jas::kSuccess);
  EXPECT_EQ(Strides(q.plan, 0), (Dims{1, 0}));
  EXPECT_EQ(Strides(q.plan, 1), (Dims{0, 1}));
  const Plan scalar = CudaPlan(Desc{{5, 7}}, Desc{{}}, Desc{{5, 7}});
  EXPECT_EQ(scalar.status, jas::kSuccess);
  EXPECT_EQ(Strides(scalar.plan, 1), (Dims{0}));  // one dimension of 35: x at stride 0 throughout
}

TEST(cuda_plan, strided_views_and_offsets_are_kept) {
  Desc x{{3, 4}, {8, 2}};
  x.offset = 5;
  const Plan p = CudaPlan(Desc{{3, 4}}, x, Desc{{3, 4}});
  EXPECT_EQ(p.status, jas::kSuccess);
  EXPECT_TRUE(!p.plan.contiguous);
  EXPECT_EQ(Strides(p.plan, 1), (Dims{2}));  // 8 = 4 * 2: one dimension of stride 2
  EXPECT_EQ(p.plan.offsets[1], int64_t{5});
  Desc y{{3, 4}, {9, 2}};
  const Plan q = CudaPlan(Desc{{3, 4}}, y, Desc{{3, 4}});
  EXPECT_EQ(Strides(q.plan, 1), (Dims{9, 2}));
}

TEST(cuda_plan, scalars_and_empty_tensors) {
  const Plan s = CudaPlan(Desc{{}}, Desc{{}}, Desc{{}});
  EXPECT_EQ(s.status, jas::kSuccess);
  EXPECT_EQ(s.plan.numel, int64_t{1});
  EXPECT_EQ(s.plan.loop.rank, int64_t{1});
  EXPECT_TRUE(s.plan.contiguous);
  const Plan e = CudaPlan(Desc{{3, 0}}, Desc{{1}}, Desc{{3, 0}});
  EXPECT_EQ(e.status, jas::kSuccess);
  EXPECT_EQ(e.plan.numel, int64_t{0});
  // Empty, though the other dims multiply past int64 (UBSan checks no product
  // or row-major stride is formed).
  const int64_t big = int64_t{1} << 40;
  const Plan huge = CudaPlan(Desc{{0, big, big}}, Desc{{1}}, Desc{{0, big, big}});
  EXPECT_EQ(huge.status, jas::kSuccess);
  EXPECT_EQ(huge.plan.numel, int64_t{0});
}

TEST(cuda_plan, failures_leave_the_outputs_cleared) {
  const Desc f32{{3, 4}};
  const jas::TensorDesc d = f32.get();
  Desc bad{{3, 5}};
  const jas::TensorDesc b = bad.get();
  for (const jas::TensorDesc* out : {static_cast<const jas::TensorDesc*>(nullptr), &b}) {
    uint64_t ws = 9;
    auto* e = reinterpret_cast<jas::CudaExecutor*>(uintptr_t{0x10});
    EXPECT_EQ(jas::SiluGradCudaGetWorkspaceSize(&d, &d, out, &ws, &e),
              out == nullptr ? jas::kErrParamNullptr : jas::kErrParamInvalid);
    EXPECT_TRUE(e == nullptr);
    EXPECT_EQ(ws, uint64_t{0});
  }
}

// Offsets of one operand's element at output multi-index `idx`, by NumPy's
// rules, straight from its descriptor.
int64_t BruteOffset(const Desc& d, const Dims& out_dims, const Dims& idx) {
  Dims strides = d.strides;
  if (strides.empty()) {
    strides.assign(d.dims.size(), 1);
    for (size_t k = d.dims.size(); k-- > 1;) strides[k - 1] = strides[k] * d.dims[k];
  }
  int64_t off = 0;
  const size_t shift = out_dims.size() - d.dims.size();
  for (size_t k = 0; k < d.dims.size(); ++k) off += (d.dims[k] == 1 ? 0 : idx[k + shift]) * strides[k];
  return off;
}

// An H200 as the launches see it: 132 multiprocessors, and (for these
// tests) two blocks of each kernel on each at once.
constexpr jas::cuda::DeviceShape kH200{132, 2};

// Walks the plan exactly as BroadcastKernel does, with a grid of one thread,
// and checks every output element is visited once, reading the inputs at the
// offsets NumPy broadcasting implies.
void CheckWalk(const Desc& g, const Desc& x, const Desc& out) {
  const Plan p = CudaPlan(g, x, out);
  ASSERT_TRUE(p.status == jas::kSuccess);
  for (int64_t width : {1, 4, 8, 16}) {
    const jas::cuda::BroadcastLayout l = jas::cuda::MakeBroadcastLayout(p.plan, width);
    std::map<int64_t, std::pair<int64_t, int64_t>> seen;  // out offset -> (g, x) offsets
    int64_t visits = 0;
    const jas::cuda::Thread one_thread;  // a grid of one thread walks everything
    jas::cuda::BroadcastWalk<false>(one_thread, l, [&](const int64_t* o, int64_t count) {
      EXPECT_TRUE(count >= 1 && count <= width);
      for (int64_t k = 0; k < count; ++k) {
        seen[o[2] + k * l.inner_strides[2]] = {o[0] + k * l.inner_strides[0], o[1] + k * l.inner_strides[1]};
        ++visits;
      }
    });
    EXPECT_EQ(visits, p.plan.numel);
    EXPECT_EQ(static_cast<int64_t>(seen.size()), p.plan.numel);
    Dims idx(out.dims.size(), 0);
    for (int64_t n = 0; n < p.plan.numel; ++n) {
      const auto it = seen.find(BruteOffset(out, out.dims, idx));
      ASSERT_TRUE(it != seen.end());
      EXPECT_EQ(it->second.first, BruteOffset(g, out.dims, idx));
      EXPECT_EQ(it->second.second, BruteOffset(x, out.dims, idx));
      for (size_t k = idx.size(); k-- > 0;) {  // next multi-index, row-major
        if (++idx[k] < out.dims[k]) break;
        idx[k] = 0;
      }
    }
    // The 64-bit walk (for 2^31 items and more) decodes every item alike.
    for (int64_t item = 0; item < l.items; ++item) {
      int64_t narrow[3], wide[3];
      ASSERT_EQ(jas::cuda::ItemOffsets<false>(l, item, narrow), jas::cuda::ItemOffsets<true>(l, item, wide));
      ASSERT_EQ(Dims(narrow, narrow + 3), Dims(wide, wide + 3)) << "item " << item;
    }
  }
}

TEST(cuda_plan, broadcast_walk_visits_each_element_once_with_broadcast_offsets) {
  CheckWalk(Desc{{7}}, Desc{{5, 7}}, Desc{{5, 7}});
  CheckWalk(Desc{{5, 1}}, Desc{{1, 7}}, Desc{{5, 7}});
  CheckWalk(Desc{{}}, Desc{{3, 4}}, Desc{{3, 4}});
  CheckWalk(Desc{{2, 1, 4, 1, 3}}, Desc{{3, 1, 5, 3}}, Desc{{2, 3, 4, 5, 3}});
  CheckWalk(Desc{{2, 1, 2, 1, 2, 1, 2, 3}}, Desc{{1, 3, 1, 2, 1, 2, 1, 3}}, Desc{{2, 3, 2, 2, 2, 2, 2, 3}});
  CheckWalk(Desc{{600, 300}}, Desc{{600, 1}}, Desc{{600, 300}});
  CheckWalk(Desc{{3, 4}, {1, 3}}, Desc{{3, 4}, {8, 2}}, Desc{{3, 4}, {1, 3}});  // transposed and strided
  CheckWalk(Desc{{4, 64}}, Desc{{1, 64}}, Desc{{4, 64}});                      // vmap over a shared x
  CheckWalk(Desc{{3, 5, 9}}, Desc{{5, 1}}, Desc{{3, 5, 9}});
}

// Every n / d the walks ask of FastDivmod: n below 2^31 (kFastIndexLimit),
// d from 1 to n's range; exhaustively for small ones, at every multiple's
// edges and at random for the rest.
TEST(cuda_plan, fast_divmod_is_exact_for_every_index_range_the_walk_uses) {
  using jas::cuda::FastDivmod;
  const uint32_t top = static_cast<uint32_t>(jas::cuda::kFastIndexLimit - 1);
  auto check = [](const FastDivmod& f, uint32_t n) {
    if (f.Div(n) != n / f.d) {
      ADD_FAILURE() << n << " / " << f.d << ": got " << f.Div(n) << ", want " << n / f.d;
      return false;
    }
    return true;
  };
  for (uint32_t d = 1; d <= 2048; ++d) {
    const FastDivmod f = FastDivmod::Make(d);
    for (uint32_t n = 0; n < 20000; ++n) {
      if (!check(f, n)) return;
    }
    for (uint32_t n = top; n > top - 5000; --n) {
      if (!check(f, n)) return;
    }
  }
  jas::test::Rng rng(11);
  std::vector<uint32_t> divisors = {top, top - 1, uint32_t{1} << 30, (uint32_t{1} << 30) + 1, 65535, 65536, 65537,
                                    uint32_t{1} << 22, uint32_t{1} << 24, 3 * (uint32_t{1} << 20), 1000000007};
  for (int k = 0; k < 3000; ++k) divisors.push_back(1 + static_cast<uint32_t>(rng() % top));
  for (int k = 0; k < 30; ++k) divisors.push_back(uint32_t{1} << k);
  for (uint32_t d : divisors) {
    const FastDivmod f = FastDivmod::Make(d);
    for (uint32_t q = 0; q <= top / d && q < 300; ++q) {  // the edges of the first multiples
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t n = int64_t{q} * d + delta;
        if (n >= 0 && n <= top && !check(f, static_cast<uint32_t>(n))) return;
      }
    }
    const uint32_t last = top / d;  // ... and the last ones
    for (uint32_t q = last > 300 ? last - 300 : 0; q <= last; ++q) {
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t n = int64_t{q} * d + delta;
        if (n >= 0 && n <= top && !check(f, static_cast<uint32_t>(n))) return;
      }
    }
    for (int k = 0; k < 200; ++k) {
      if (!check(f, static_cast<uint32_t>(rng() % (uint64_t{top} + 1)))) return;
    }
  }
}

TEST(cuda_plan, grids_fill_the_device_and_stay_within_the_work) {
  using jas::cuda::GridBlocks;
  using jas::cuda::kThreads;
  EXPECT_EQ(GridBlocks(1, 2, kH200), int64_t{1});
  EXPECT_EQ(GridBlocks(0, 2, kH200), int64_t{1});
  EXPECT_EQ(GridBlocks(2 * kThreads, 2, kH200), int64_t{1});
  EXPECT_EQ(GridBlocks(2 * kThreads + 1, 2, kH200), int64_t{2});
  EXPECT_EQ(GridBlocks(int64_t{1} << 40, 2, kH200), int64_t{264});  // persistent: 132 SMs x 2 blocks
  EXPECT_EQ(GridBlocks(int64_t{1} << 40, 2, {}), jas::cuda::kMaxBlocks);  // device unknown
  // The flat kernel: 2^28 float32 elements are 2^26 vectors, four per
  // thread and pass: the device's 264 blocks, each thread going round ~250 times.
  const uintptr_t aligned[3] = {0x1000, 0x2000, 0x3000};
  const jas::cuda::FlatSplit big = jas::cuda::MakeFlatSplit(int64_t{1} << 28, 4, aligned, 3);
  EXPECT_EQ(big.vec, 4);
  EXPECT_EQ(big.head, 0);
  EXPECT_EQ(big.vectors, int64_t{1} << 26);
  EXPECT_EQ(jas::cuda::FlatLaunch(big, kH200), int64_t{264});
  EXPECT_EQ(jas::cuda::FlatLaunch(jas::cuda::MakeFlatSplit(4096, 4, aligned, 3), kH200), int64_t{1});
  EXPECT_EQ(jas::cuda::FlatLaunch(jas::cuda::MakeFlatSplit(1025 * 4, 4, aligned, 3), kH200), int64_t{2});
  // Shared boundaries a few elements in: the head up to them, then vectors.
  const uintptr_t shifted[3] = {0x1004, 0x2004, 0x3004};
  const jas::cuda::FlatSplit peeled = jas::cuda::MakeFlatSplit(1000, 4, shifted, 3);
  EXPECT_EQ(peeled.vec, 4);
  EXPECT_EQ(peeled.head, 3);
  EXPECT_EQ(peeled.vectors, 249);
  EXPECT_EQ(peeled.tail(), 999);
  EXPECT_EQ(jas::cuda::MakeFlatSplit(2, 4, shifted, 3).head, 2);  // all of it before the boundary
  // Boundaries that differ: element by element, one element per thread and pass.
  const uintptr_t apart[3] = {0x1000, 0x2004, 0x3000};
  const jas::cuda::FlatSplit each = jas::cuda::MakeFlatSplit(1000, 4, apart, 3);
  EXPECT_EQ(each.vec, 1);
  EXPECT_EQ(jas::cuda::FlatLaunch(each, kH200), int64_t{4});
}

// vmap over 4 cotangents with a shared x: g (4, 2^24), x (1, 2^24). The old
// walk launched one block per 256 rows (4 rows: one block); this one fills
// the device and splits the rows into 32-byte items, each written once.
TEST(cuda_plan, broadcast_of_four_long_rows_fills_the_device) {
  const int64_t n = int64_t{1} << 24;
  for (jas::DataType t : jas::test::kTypes) {
    Desc g{{4, n}}, x{{1, n}}, out{{4, n}};
    g.dtype = x.dtype = out.dtype = t;
    g.storage = x.storage = out.storage = 4 * n;
    const Plan p = CudaPlan(g, x, out);
    ASSERT_EQ(p.status, jas::kSuccess);
    ASSERT_FALSE(p.plan.contiguous);
    const int64_t width = jas::cuda::BroadcastWidth(t);
    const jas::cuda::BroadcastLayout l = jas::cuda::MakeBroadcastLayout(p.plan, width);
    EXPECT_TRUE(l.vector) << jas::DtypeName(t);
    EXPECT_EQ(l.items, 4 * n / width);
    const int64_t blocks = jas::cuda::BroadcastLaunch(l, kH200);
    EXPECT_EQ(blocks, int64_t{264});  // two items per thread and pass: 4n/width/512 blocks wanted
    if (t != jas::DataType::kFloat32) continue;  // one full walk is enough
    std::vector<uint8_t> writes(static_cast<size_t>(4 * n), 0);
    int64_t bad = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t tx = 0; tx < jas::cuda::kThreads; ++tx) {
        // BroadcastVectorKernel's walk: two whole items per thread and pass.
        auto item = [&](const int64_t* o) {
          bad += o[0] != o[2] || o[1] != o[2] % n || o[2] % width != 0;
          for (int64_t k = 0; k < width; ++k) ++writes[o[2] + k];
        };
        using Offsets = std::array<int64_t, 3>;
        jas::cuda::BroadcastVectorWalk<false>(
            jas::cuda::Thread{b, blocks, tx, jas::cuda::kThreads}, l,
            [](const int64_t* o) { return Offsets{o[0], o[1], o[2]}; },
            [&](int64_t, int64_t, const Offsets* d) {
              for (int k = 0; k < jas::cuda::kBroadcastItemsPerPass; ++k) item(d[k].data());
            },
            [&](int64_t, const Offsets& d) { item(d.data()); });
      }
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(std::count(writes.begin(), writes.end(), uint8_t{1}), 4 * n);
  }
}

TEST(cuda_plan, broadcast_items_take_vectors_only_when_every_access_is_whole_and_aligned) {
  auto vector = [](const Desc& g, const Desc& x, const Desc& out) {
    const Plan p = CudaPlan(g, x, out);
    EXPECT_EQ(p.status, jas::kSuccess);
    return jas::cuda::MakeBroadcastLayout(p.plan, 4).vector;
  };
  EXPECT_TRUE(vector(Desc{{3, 8}}, Desc{{8}}, Desc{{3, 8}}));
  EXPECT_TRUE(vector(Desc{{3, 8}}, Desc{{3, 1}}, Desc{{3, 8}}));  // x one element per item
  EXPECT_FALSE(vector(Desc{{3, 6}}, Desc{{6}}, Desc{{3, 6}}));    // rows not whole items
  Desc shifted{{8}};
  shifted.offset = 1;  // not 16-byte aligned
  EXPECT_FALSE(vector(Desc{{3, 8}}, shifted, Desc{{3, 8}}));
  EXPECT_FALSE(vector(Desc{{3, 8}}, Desc{{3, 8}, {16, 2}}, Desc{{3, 8}}));  // inner stride 2
  EXPECT_FALSE(vector(Desc{{3, 8}}, Desc{{3, 8}, {10, 1}}, Desc{{3, 8}}));  // rows 10 apart: misaligned
}

// ---- the grid loops over simulated grids ---------------------------------

namespace simulated {

using jas::test::Operand;

// Runs the kernel that CudaRun would launch for these operands, on
// the host: grid.h's walk for every thread of every block (`blocks` 0: the
// launch's own grid; more work than threads makes the grid-stride loops go
// round), each element computed by the CPU kernel's scalar code. `vector`
// stands for 16-byte-aligned pointers (the flat kernel then moves whole
// vectors). Returns how often each storage element of `out` was written.
std::vector<int> Launch(Operand& g, Operand& x, Operand& out, bool vector, int64_t blocks) {
  const jas::TensorDesc dg = g.Desc(), dx = x.Desc(), dout = out.Desc();
  uint64_t ws = 0;
  jas::CudaExecutor* e = nullptr;
  EXPECT_EQ(jas::SiluGradCudaGetWorkspaceSize(&dg, &dx, &dout, &ws, &e), jas::kSuccess);
  std::vector<int> writes(static_cast<size_t>(out.StorageSize()), 0);
  if (e == nullptr) return writes;
  const jas::GradCudaPlan plan = static_cast<const jas::GradCudaPlan&>(*e);
  jas::CudaDestroyExecutor(e);
  if (plan.numel == 0) return writes;  // nothing is launched
  const int64_t eb = jas::ElementBytes(plan.dtype);
  const jas::BlockFn element = jas::ScalarKernels()->by_type[jas::DtypeIndex(plan.dtype)].silu.full;
  const unsigned char* gp = g.bytes.data() + plan.offsets[0] * eb;
  const unsigned char* xp = x.bytes.data() + plan.offsets[1] * eb;
  unsigned char* op = out.bytes.data() + plan.offsets[2] * eb;
  auto compute = [&](int64_t og, int64_t ox, int64_t oo) {
    element(gp + og * eb, xp + ox * eb, op + oo * eb, 1);
    ++writes.at(static_cast<size_t>(plan.offsets[2] + oo));
  };
  if (plan.contiguous) {
    // The split the launch makes from the pointers (vector), or element by
    // element as for operands whose 16-byte boundaries differ.
    const uintptr_t addr[3] = {reinterpret_cast<uintptr_t>(gp), reinterpret_cast<uintptr_t>(xp),
                               reinterpret_cast<uintptr_t>(op)};
    jas::cuda::FlatSplit s;
    s.n = plan.numel;
    if (vector) s = jas::cuda::MakeFlatSplit(plan.numel, eb, addr, 3);
    const int64_t grid = blocks > 0 ? blocks : jas::cuda::FlatLaunch(s, kH200);
    auto whole = [&](int64_t i) {
      const int64_t first = s.head + i * s.vec;
      for (const uintptr_t a : addr) EXPECT_EQ((a + static_cast<uintptr_t>(first * eb)) % 16, 0u) << "unaligned";
      for (int64_t k = 0; k < s.vec; ++k) compute(first + k, first + k, first + k);
    };
    for (int64_t b = 0; b < grid; ++b) {
      for (int64_t t = 0; t < jas::cuda::kThreads; ++t) {
        // load(i) hands the vector's index to group/single, which check the
        // loads and the computations go together.
        jas::cuda::FlatWalk(
            jas::cuda::Thread{b, grid, t, jas::cuda::kThreads}, s, [](int64_t i) { return i; },
            [&](int64_t i, int64_t step, const int64_t* d) {
              for (int k = 0; k < jas::cuda::kFlatVectorsPerPass; ++k) {
                EXPECT_EQ(d[k], i + k * step);
                whole(d[k]);
              }
            },
            [&](int64_t i, int64_t d) {
              EXPECT_EQ(d, i);
              whole(i);
            },
            [&](int64_t i) { compute(i, i, i); });
      }
    }
    return writes;
  }
  const jas::cuda::BroadcastLayout l = jas::cuda::MakeBroadcastLayout(plan, jas::cuda::BroadcastWidth(plan.dtype));
  const int64_t grid = blocks > 0 ? blocks : jas::cuda::BroadcastLaunch(l, kH200);
  auto item = [&](const int64_t* o, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      compute(o[0] + k * l.inner_strides[0], o[1] + k * l.inner_strides[1], o[2] + k * l.inner_strides[2]);
    }
  };
  using Offsets = std::array<int64_t, 3>;
  for (int64_t b = 0; b < grid; ++b) {
    for (int64_t t = 0; t < jas::cuda::kThreads; ++t) {
      const jas::cuda::Thread thread{b, grid, t, jas::cuda::kThreads};
      if (!l.vector) {
        jas::cuda::BroadcastWalk<false>(thread, l, item);
        continue;
      }
      // BroadcastVectorKernel's walk: whole items, kBroadcastItemsPerPass per pass.
      jas::cuda::BroadcastVectorWalk<false>(
          thread, l, [](const int64_t* o) { return Offsets{o[0], o[1], o[2]}; },
          [&](int64_t i, int64_t step, const Offsets* d) {
            for (int k = 0; k < jas::cuda::kBroadcastItemsPerPass; ++k) {
              Offsets want;
              jas::cuda::ItemOffsets<false>(l, i + k * step, want.data());
              EXPECT_EQ(d[k], want);
              item(d[k].data(), l.width);
            }
          },
          [&](int64_t, const Offsets& d) { item(d.data(), l.width); });
    }
  }
  return writes;
}

// Every element of out's view written once, nothing else in its storage
// (canary included), and the view holding the CPU kernel's result for the
// same inputs made compact (the CPU's own broadcast plan may differ from the
// GPU's per-element evaluation in the last bit: cuda/backend.h).
void Check(Operand g, Operand x, Operand out, bool vector, int64_t blocks, const std::string& what) {
  jas::test::Rng rng(7);
  jas::test::FillRandom(g, rng, 1.0);
  jas::test::FillRandom(x, rng, 8.0);
  jas::test::FillSentinel(out);
  const std::vector<int> writes = Launch(g, x, out, vector, blocks);
  std::vector<int> want(writes.size(), 0);
  Operand cg = jas::test::Contiguous(g.dtype, out.dims), cx = jas::test::Contiguous(x.dtype, out.dims);
  int64_t n = 0;
  jas::test::ForEachIndex(out.dims, [&](const jas::test::Dims& idx) {
    ++want[static_cast<size_t>(out.Locate(idx))];
    cg.SetBits(n, g.Bits(g.Locate(idx)));
    cx.SetBits(n, x.Bits(x.Locate(idx)));
    ++n;
  });
  ASSERT_EQ(writes, want) << what << ": not every element written exactly once";
  Operand expected = jas::test::Contiguous(out.dtype, out.dims);
  ASSERT_EQ(jas::test::Compute(cg, cx, expected, {jas::Isa::kScalar}), jas::kSuccess) << what;
  EXPECT_TRUE(jas::test::SameBits(out, expected)) << what << ": differs from the CPU kernel";
}

std::string What(const Operand& g, const Operand& x, const Operand& out, bool vector, int64_t blocks) {
  return std::string(jas::DtypeName(out.dtype)) + " g" + jas::test::ToString(g.dims) + " strides " +
         jas::test::ToString(g.strides) + " x" + jas::test::ToString(x.dims) + " strides " +
         jas::test::ToString(x.strides) + " out" + jas::test::ToString(out.dims) + " strides " +
         jas::test::ToString(out.strides) + (vector ? " vector" : " scalar") + " blocks " + std::to_string(blocks);
}

}  // namespace simulated

TEST(cuda_grid, flat_loop_writes_every_element_once_vectors_and_tail) {
  // Lengths around the vector widths (4 float32, 8 half values) and the block
  // size, on the launch's own grid and on grids too small for the work.
  for (jas::DataType t : jas::test::kTypes) {
    for (int64_t n : {1, 3, 4, 7, 8, 9, 31, 255, 256, 257, 1023, 2048 + 5, 40000}) {
      for (bool vector : {true, false}) {
        for (int64_t blocks : {int64_t{0}, int64_t{1}, int64_t{3}}) {
          const jas::test::Dims dims{n};
          simulated::Operand g = jas::test::Contiguous(t, dims), x = jas::test::Contiguous(t, dims);
          simulated::Operand out = jas::test::Contiguous(t, dims);
          simulated::Check(g, x, out, vector, blocks, simulated::What(g, x, out, vector, blocks));
        }
      }
    }
  }
}

// Operands starting `shift` elements into their storage: those that share a
// 16-byte boundary take their head one element at a time, then whole
// vectors; those whose boundaries differ go element by element.
TEST(cuda_grid, flat_loop_peels_the_head_up_to_a_shared_boundary) {
  auto shifted = [](jas::DataType t, int64_t n, int64_t shift) {
    simulated::Operand o = jas::test::Contiguous(t, {n + shift});
    o.dims = {n};
    o.offset = shift;
    return o;
  };
  for (jas::DataType t : jas::test::kTypes) {
    for (int64_t n : {1, 5, 9, 37, 1000, 4099}) {
      for (const std::array<int64_t, 3>& shift : {std::array<int64_t, 3>{1, 1, 1}, {3, 3, 3}, {5, 5, 5},
                                                  {1, 2, 1}, {0, 0, 3}}) {
        for (int64_t blocks : {int64_t{0}, int64_t{1}}) {
          simulated::Operand g = shifted(t, n, shift[0]), x = shifted(t, n, shift[1]);
          simulated::Operand out = shifted(t, n, shift[2]);
          simulated::Check(g, x, out, true, blocks,
                           simulated::What(g, x, out, true, blocks) + " shift " + std::to_string(shift[0]) + "," +
                               std::to_string(shift[1]) + "," + std::to_string(shift[2]));
        }
      }
    }
  }
}

TEST(cuda_grid, strided_loop_writes_every_element_once_on_the_cpu_tests_layouts) {
  // tests/kernel/test_layout.cc's layouts: random permuted strides with gaps,
  // stride-0 and overlapping input dims, storage offsets, NumPy broadcasting,
  // every rank; on the launch's own grid and on a grid of two blocks.
  jas::test::Rng rng(2);
  int strided = 0;
  for (int round = 0; round < 60; ++round) {
    for (jas::DataType t : jas::test::kTypes) {
      const int64_t rank = static_cast<int64_t>(rng() % (jas::kMaxRank + 1));
      jas::test::Dims gd, xd;
      jas::test::RandomBroadcastPair(rng, rank, rank > 5 ? 3 : 6, &gd, &xd);
      const jas::test::Dims od = jas::test::BroadcastShape(gd, xd);
      simulated::Operand g = jas::test::RandomView(t, gd, rng, false), x = jas::test::RandomView(t, xd, rng, false);
      simulated::Operand out = jas::test::RandomView(t, od, rng, true);
      for (int64_t blocks : {int64_t{0}, int64_t{2}}) {
        simulated::Check(g, x, out, false, blocks, simulated::What(g, x, out, false, blocks));
      }
      // The same shapes compact, where they take the flat loop.
      simulated::Operand cg = jas::test::Contiguous(t, od), cx = jas::test::Contiguous(t, od);
      simulated::Operand cout = jas::test::Contiguous(t, od);
      simulated::Check(cg, cx, cout, true, 0, simulated::What(cg, cx, cout, true, 0));
      const jas::TensorDesc a = g.Desc(), b = x.Desc(), c = out.Desc();
      uint64_t ws = 0;
      jas::CudaExecutor* e = nullptr;
      ASSERT_EQ(jas::SiluGradCudaGetWorkspaceSize(&a, &b, &c, &ws, &e), jas::kSuccess);
      strided += !static_cast<const jas::GradCudaPlan*>(e)->contiguous;
      jas::CudaDestroyExecutor(e);
    }
  }
  EXPECT_GT(strided, 100);  // the random layouts exercise the strided kernel
  // The broadcast shapes of the CUDA plan tests above, and wide rows.
  for (jas::DataType t : jas::test::kTypes) {
    const std::vector<std::vector<jas::test::Dims>> shapes = {
        {{7}, {5, 7}}, {{5, 1}, {1, 7}}, {{}, {3, 4}}, {{2, 1, 4, 1, 3}, {3, 1, 5, 3}}, {{600, 300}, {600, 1}},
        {{1, 1000}, {3, 1}}};
    for (const auto& pair : shapes) {
      const jas::test::Dims od = jas::test::BroadcastShape(pair[0], pair[1]);
      simulated::Operand g = jas::test::Contiguous(t, pair[0]), x = jas::test::Contiguous(t, pair[1]);
      simulated::Operand out = jas::test::Contiguous(t, od);
      simulated::Check(g, x, out, false, 0, simulated::What(g, x, out, false, 0));
    }
  }
}
