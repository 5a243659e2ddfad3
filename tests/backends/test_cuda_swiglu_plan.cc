// SwiGluGrad's CUDA backend on the host: its phase 1 must accept and refuse
// exactly what the CPU's does, with the same status codes and layout; its
// kernel's walk (kernel/cuda/grid.h's SwiGluWalk), run for every thread of a
// simulated grid, must write every element of dA and dB exactly once and
// nothing else, with the CPU kernel's bits. Needs no GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cpu/isa.h"
#include "cpu/backend.h"
#include "swiglu_grad.h"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/backend.h"
#include "fake_desc.h"

namespace {

using Dims = std::vector<int64_t>;
using jas::DataType;
using jas::Status;
using jas::cuda::SwiGluIndex;

constexpr DataType kTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16};

// An H200 as the launches see it (test_cuda_plan.cc's): 132 multiprocessors,
// two blocks of the kernel on each at once.
constexpr jas::cuda::DeviceShape kH200{132, 2};

using jas::test::Desc;

// One backend's phase 1: its status, workspace size and (CUDA) layout.
struct Planned {
  Status status;
  uint64_t workspace = 99;
  jas::SwiGluLayout layout;
};

void Keep(const jas::CudaExecutor* e, Planned* p) {
  p->layout = static_cast<const jas::SwiGluGradCudaPlan*>(e)->layout;
  jas::CudaDestroyExecutor(const_cast<jas::CudaExecutor*>(e));
}
void Keep(const jas::CpuExecutor* e, Planned*) {  // opaque: released only
  jas::CpuDestroyExecutor(const_cast<jas::CpuExecutor*>(e));
}

// `get(&workspace, &executor)` is one backend's GetWorkspaceSize on the operands.
template <class Executor, class Get>
Planned Plan(Get get) {
  Planned p;
  Executor* e = nullptr;
  p.status = get(&p.workspace, &e);
  if (e != nullptr) Keep(e, &p);
  return p;
}

// Packed: [0] the CPU's, [1] the CUDA backend's.
std::vector<Planned> BothPacked(const Desc& g, const Desc& x, int64_t dim, const Desc& out) {
  const jas::TensorDesc a = g.get(), b = x.get(), c = out.get();
  return {Plan<jas::CpuExecutor>([&](uint64_t* ws, jas::CpuExecutor** e) {
            return jas::SwiGluGradGetWorkspaceSize(&a, &b, dim, &c, ws, e);
          }),
          Plan<jas::CudaExecutor>([&](uint64_t* ws, jas::CudaExecutor** e) {
            return jas::SwiGluGradCudaGetWorkspaceSize(&a, &b, dim, &c, ws, e);
          })};
}

// Pair: [0] the CPU's, [1] the CUDA backend's.
std::vector<Planned> BothPair(const std::vector<Desc>& d) {
  const jas::TensorDesc t[5] = {d[0].get(), d[1].get(), d[2].get(), d[3].get(), d[4].get()};
  return {Plan<jas::CpuExecutor>([&](uint64_t* ws, jas::CpuExecutor** e) {
            return jas::SwiGluGradPairGetWorkspaceSize(&t[0], &t[1], &t[2], &t[3], &t[4], ws, e);
          }),
          Plan<jas::CudaExecutor>([&](uint64_t* ws, jas::CudaExecutor** e) {
            return jas::SwiGluGradCudaPairGetWorkspaceSize(&t[0], &t[1], &t[2], &t[3], &t[4], ws, e);
          })};
}

}  // namespace

TEST(cuda_swiglu_plan, packed_form_has_the_cpu_phase_ones_status_codes) {
  const Desc g{{3, 4}}, x{{3, 8}};
  Desc f16 = x;
  f16.dtype = DataType::kFloat16;
  Desc f64 = x;
  f64.dtype = static_cast<DataType>(-1);
  Desc strided{{3, 8}, {16, 1}};
  Desc short_storage = x;
  short_storage.storage = 23;
  Desc no_data = x;
  no_data.data = 0;
  struct Case {
    Desc g, x;
    int64_t dim;
    Desc out;
    Status want;
    const char* what;
  };
  const std::vector<Case> cases = {
      {g, x, -1, x, 0, "valid, last axis"},
      {Desc{{3, 8}}, Desc{{6, 8}}, 0, Desc{{6, 8}}, 0, "valid, first axis"},
      {Desc{{2, 3, 5}}, Desc{{2, 6, 5}}, 1, Desc{{2, 6, 5}}, 0, "valid, middle axis"},
      {Desc{{4}}, Desc{{8}}, 0, Desc{{8}}, 0, "valid, rank 1"},
      {g, x, 1, x, 0, "valid, dim 1 of 2"},
      {g, x, 2, x, 161002, "dim out of range"},
      {g, x, -3, x, 161002, "negative dim out of range"},
      {Desc{{3, 3}}, Desc{{3, 7}}, -1, Desc{{3, 7}}, 161002, "odd split"},
      {g, x, 0, x, 161002, "yGrad not x halved along dim"},
      {g, x, -1, Desc{{3, 4}}, 161002, "out not x's shape"},
      {g, f16, -1, x, 161002, "mixed dtypes"},
      {g, f64, -1, x, 161002, "unsupported dtype"},
      {g, strided, -1, x, 161002, "not dense row-major"},
      {g, short_storage, -1, x, 161002, "past its storage"},
      {Desc{{3, 0}}, Desc{{3, 0}}, -1, Desc{{3, 0}}, 161002, "empty"},
      {Desc{{}}, Desc{{}}, 0, Desc{{}}, 161002, "rank 0 (packed takes 1 to 8)"},
      {Desc{{1, 1, 1, 1, 1, 1, 1, 1, 1}}, Desc{{1, 1, 1, 1, 1, 1, 1, 1, 2}}, -1, Desc{{1, 1, 1, 1, 1, 1, 1, 1, 2}},
       161002, "rank 9"},
      {g, no_data, -1, x, 161001, "null data"},
  };
  for (const Case& c : cases) {
    const std::vector<Planned> p = BothPacked(c.g, c.x, c.dim, c.out);
    const Planned &cpu = p[0], &cuda = p[1];
    EXPECT_EQ(cpu.status, c.want) << c.what;
    EXPECT_EQ(cuda.status, cpu.status) << c.what;
    EXPECT_EQ(cuda.workspace, uint64_t{0}) << c.what;  // cleared on failure too
  }
  uint64_t ws = 9;
  auto* e = reinterpret_cast<jas::CudaExecutor*>(uintptr_t{0x10});
  const jas::TensorDesc d = x.get(), dg = g.get();
  EXPECT_EQ(jas::SwiGluGradCudaGetWorkspaceSize(nullptr, &d, -1, &d, &ws, &e), jas::kErrParamNullptr);
  EXPECT_TRUE(e == nullptr);
  EXPECT_EQ(ws, uint64_t{0});
  EXPECT_EQ(jas::SwiGluGradCudaGetWorkspaceSize(&dg, &d, -1, &d, nullptr, &e), jas::kErrParamNullptr);
  EXPECT_EQ(jas::SwiGluGradCudaGetWorkspaceSize(&dg, &d, -1, &d, &ws, nullptr), jas::kErrParamNullptr);
  EXPECT_EQ(jas::CudaRun(nullptr, 0, nullptr, nullptr, nullptr), jas::kErrParamNullptr);
  EXPECT_EQ(jas::CudaDestroyExecutor(nullptr), jas::kErrParamNullptr);
}

TEST(cuda_swiglu_plan, pair_form_has_the_cpu_phase_ones_status_codes) {
  const Desc f{{3, 4}};
  Desc f16 = f;
  f16.dtype = DataType::kFloat16;
  Desc strided{{3, 4}, {1, 3}};
  struct Case {
    std::vector<Desc> d;
    Status want;
    const char* what;
  };
  const std::vector<Case> cases = {
      {{f, f, f, f, f}, 0, "valid"},
      {{Desc{{}}, Desc{{}}, Desc{{}}, Desc{{}}, Desc{{}}}, 0, "valid, rank 0"},
      {{f, f, Desc{{4}}, f, f}, 161002, "b of another shape (the kernel does not broadcast)"},
      {{f, f, f, Desc{{3, 5}}, f}, 161002, "grad_a of another shape"},
      {{f, f, f, f, f16}, 161002, "mixed dtypes"},
      {{f, strided, f, f, f}, 161002, "not dense row-major"},
      {{Desc{{0}}, Desc{{0}}, Desc{{0}}, Desc{{0}}, Desc{{0}}}, 161002, "empty"},
  };
  for (const Case& c : cases) {
    const std::vector<Planned> p = BothPair(c.d);
    const Planned &cpu = p[0], &cuda = p[1];
    EXPECT_EQ(cpu.status, c.want) << c.what;
    EXPECT_EQ(cuda.status, cpu.status) << c.what;
    EXPECT_EQ(cuda.workspace, uint64_t{0}) << c.what;
  }
}

// The plan is the checked layout, offsets applied, and picks the walk's index
// mode: the pair form and a split along the first axis are one dense run; a
// packed split elsewhere takes FastDivmod below 2^31 elements, 64-bit
// division from there.
TEST(cuda_swiglu_plan, layouts_and_launch_geometry) {
  Desc x{{6, 8}}, out{{6, 8}};
  x.data = 0x10000;
  out.data = 0x20000;
  const Planned last = BothPacked(Desc{{6, 4}}, x, -1, out)[1];
  ASSERT_EQ(last.status, jas::kSuccess);
  const jas::SwiGluLayout& l = last.layout;
  EXPECT_TRUE(l.packed);
  EXPECT_EQ(l.outer, 6);
  EXPECT_EQ(l.inner, 4);
  EXPECT_EQ(l.row, 8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.a), uintptr_t{0x10000});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.b), uintptr_t{0x10000 + 4 * 4});  // B starts half a row in
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.grad_b), uintptr_t{0x20000 + 4 * 4});
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(jas::cuda::MakeSwiGluRows(l)), SwiGluIndex::kFast);

  const Planned first = BothPacked(Desc{{3, 8}}, x, 0, out)[1];
  ASSERT_EQ(first.status, jas::kSuccess);
  EXPECT_EQ(first.layout.outer, 1);
  EXPECT_EQ(first.layout.inner, 24);
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(jas::cuda::MakeSwiGluRows(first.layout)), SwiGluIndex::kDense);

  const Desc f{{5, 7}};
  const Planned pair = BothPair({f, f, f, f, f})[1];
  ASSERT_EQ(pair.status, jas::kSuccess);
  EXPECT_FALSE(pair.layout.packed);
  EXPECT_EQ(pair.layout.numel(), 35);
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(jas::cuda::MakeSwiGluRows(pair.layout)), SwiGluIndex::kDense);

  // Aligned operands whose rows are whole vectors: 16-byte vectors, rows
  // found once per vector (FastDivmod by the vectors per row).
  const jas::cuda::SwiGluRows vec_rows = jas::cuda::MakeSwiGluRows(l);
  EXPECT_EQ(vec_rows.vec, 4);
  EXPECT_EQ(vec_rows.vectors, 6);
  EXPECT_EQ(vec_rows.div.d, 1u);
  // 2^31 elements and more (the layout alone; no memory): as vectors, 2^29
  // of them, still 32-bit; element by element (rows not whole vectors),
  // 64-bit division; 2^31 vectors and more, 64-bit division.
  jas::SwiGluLayout wide;
  wide.outer = int64_t{1} << 20;
  wide.inner = int64_t{1} << 11;
  wide.row = 2 * wide.inner;
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(jas::cuda::MakeSwiGluRows(wide)), SwiGluIndex::kFast);
  wide.inner += 1;
  wide.row = 2 * wide.inner;
  const jas::cuda::SwiGluRows rows = jas::cuda::MakeSwiGluRows(wide);
  EXPECT_EQ(rows.vec, 1);
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(rows), SwiGluIndex::kWide);
  wide.outer = int64_t{1} << 22;
  wide.inner = int64_t{1} << 11;
  wide.row = 2 * wide.inner;
  EXPECT_EQ(jas::cuda::SwiGluIndexOf(jas::cuda::MakeSwiGluRows(wide)), SwiGluIndex::kWide);
  // A persistent grid of the device's blocks for large calls, no more blocks
  // than the work needs for small ones: element by element one per thread
  // and pass, vectors two per thread and pass.
  EXPECT_EQ(jas::cuda::SwiGluLaunch(rows, kH200), int64_t{264});
  EXPECT_EQ(jas::cuda::SwiGluLaunch(vec_rows, kH200), int64_t{1});
  jas::SwiGluLayout mid = l;
  mid.outer = 1000;
  mid.inner = 300;  // 75000 vectors: 147 blocks of 256 threads taking two each
  EXPECT_EQ(jas::cuda::SwiGluLaunch(jas::cuda::MakeSwiGluRows(mid), kH200), int64_t{147});
  mid.inner = 301;  // 301000 elements one by one: 1176 blocks wanted, the device's 264 taken
  mid.row = 602;
  EXPECT_EQ(jas::cuda::SwiGluLaunch(jas::cuda::MakeSwiGluRows(mid), kH200), int64_t{264});
  mid.outer = 2;  // 602 elements: 3 blocks
  EXPECT_EQ(jas::cuda::SwiGluLaunch(jas::cuda::MakeSwiGluRows(mid), kH200), int64_t{3});
  // Dense runs: the head up to the operands' shared 16-byte boundary, or
  // element by element where the boundaries differ.
  jas::SwiGluLayout dense;
  dense.outer = 1;
  dense.inner = dense.row = 103;
  dense.packed = false;
  char* base = reinterpret_cast<char*>(uintptr_t{0x10000});
  dense.y_grad = base + 8;
  dense.a = base + 0x1008;
  dense.b = base + 0x2008;
  dense.grad_a = base + 0x3008;
  dense.grad_b = base + 0x4008;
  const jas::cuda::SwiGluRows peeled = jas::cuda::MakeSwiGluRows(dense);
  EXPECT_EQ(peeled.vec, 4);
  EXPECT_EQ(peeled.head, 2);
  EXPECT_EQ(peeled.vectors, 25);
  EXPECT_EQ(peeled.tail(), 102);
  dense.grad_b = base + 0x4004;
  EXPECT_EQ(jas::cuda::MakeSwiGluRows(dense).vec, 1);
}

// ---- the walk over simulated grids --------------------------------------

namespace {

// Bytes of `n` elements of type t: half of them drawn from the ranges the
// formula's paths split on (a across the exp's range and the root of s',
// g and b of moderate size), half raw bit patterns (NaN, infinities,
// subnormals, huge and tiny values: the general path).
std::vector<unsigned char> RandomBytes(DataType t, int64_t n, std::mt19937_64& rng, double scale) {
  const int64_t eb = jas::ElementBytes(t);
  std::vector<unsigned char> out(static_cast<size_t>(n * eb));
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (rng() % 2 == 0) {
      const float v = normal(rng);
      std::memcpy(&bits, &v, 4);
      if (eb == 2) bits >>= 16;  // truncated to bfloat16's bits; float16's are then simply other values
    }
    std::memcpy(out.data() + i * eb, &bits, static_cast<size_t>(eb));  // little-endian: the low bytes
  }
  return out;
}

struct Buffers {
  std::vector<unsigned char> g, x_or_a, b, out_or_da, db;
};

// Runs CudaRun's walk on the host for every thread of `blocks`
// blocks (0: the launch's own grid), each element computed by the CPU's
// scalar kernel, and checks every result element is written once; returns the
// results.
void SimulatedLaunch(const jas::SwiGluLayout& l, SwiGluIndex index, int64_t blocks,
                     std::vector<int>* writes_da, std::vector<int>* writes_db) {
  const int64_t eb = jas::ElementBytes(l.dtype);
  const jas::SwiGluBlockFn element = jas::ScalarKernels()->by_type[jas::DtypeIndex(l.dtype)].swiglu;
  const auto* g = static_cast<const unsigned char*>(l.y_grad);
  const auto* a = static_cast<const unsigned char*>(l.a);
  const auto* b = static_cast<const unsigned char*>(l.b);
  auto* da = static_cast<unsigned char*>(l.grad_a);
  auto* db = static_cast<unsigned char*>(l.grad_b);
  const jas::cuda::SwiGluRows rows = jas::cuda::MakeSwiGluRows(l);
  const int64_t grid = blocks > 0 ? blocks : jas::cuda::SwiGluLaunch(rows, kH200);
  auto visit = [&](int64_t i, int64_t at) {
    element(g + i * eb, a + at * eb, b + at * eb, da + at * eb, db + at * eb, 1);
    ++writes_da->at(static_cast<size_t>(at));
    ++writes_db->at(static_cast<size_t>(at));
  };
  const uintptr_t addr[5] = {reinterpret_cast<uintptr_t>(g), reinterpret_cast<uintptr_t>(a),
                             reinterpret_cast<uintptr_t>(b), reinterpret_cast<uintptr_t>(da),
                             reinterpret_cast<uintptr_t>(db)};
  auto vector = [&](const jas::cuda::SwiGluSpot& s) {
    for (int op = 0; op < 5; ++op) {
      const int64_t first = op == 0 ? s.i : s.at;
      EXPECT_EQ((addr[op] + static_cast<uintptr_t>(first * eb)) % 16, 0u) << "a vector unaligned";
    }
    for (int64_t k = 0; k < rows.vec; ++k) visit(s.i + k, s.at + k);
  };
  auto walk = [&]<SwiGluIndex kIndex>(const jas::cuda::Thread& thread) {
    jas::cuda::SwiGluWalk<kIndex>(
        thread, rows, [](jas::cuda::SwiGluSpot s) { return s; },
        [&](int64_t v, int64_t step, const jas::cuda::SwiGluSpot* d) {
          for (int k = 0; k < jas::cuda::kSwiGluVectorsPerPass; ++k) {
            EXPECT_EQ(d[k].i, rows.head + (v + k * step) * rows.vec);  // loads and results go together
            vector(d[k]);
          }
        },
        [&](int64_t v, const jas::cuda::SwiGluSpot& d) {
          EXPECT_EQ(d.i, rows.head + v * rows.vec);
          vector(d);
        },
        [&](jas::cuda::SwiGluSpot s) { visit(s.i, s.at); });
  };
  for (int64_t blk = 0; blk < grid; ++blk) {
    for (int64_t t = 0; t < jas::cuda::kThreads; ++t) {
      const jas::cuda::Thread thread{blk, grid, t, jas::cuda::kThreads};
      switch (index) {
        case SwiGluIndex::kDense: walk.template operator()<SwiGluIndex::kDense>(thread); break;
        case SwiGluIndex::kFast: walk.template operator()<SwiGluIndex::kFast>(thread); break;
        case SwiGluIndex::kWide: walk.template operator()<SwiGluIndex::kWide>(thread); break;
      }
    }
  }
}

// Packed: x of `dims` split along `dim`; the CUDA plan's walk (with `index`,
// or its own choice when `index` is null) against the CPU backend's run, bit
// for bit, every element of out written once.
void CheckPacked(DataType t, const Dims& x_dims, int64_t dim, const SwiGluIndex* index, int64_t blocks) {
  std::mt19937_64 rng(static_cast<uint64_t>(x_dims.size() * 131 + dim * 7 + blocks));
  int64_t n = 1;
  for (int64_t v : x_dims) n *= v;
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(x_dims.size()) : dim;
  Dims g_dims = x_dims;
  g_dims[d] /= 2;
  const int64_t eb = jas::ElementBytes(t);
  std::vector<unsigned char> g = RandomBytes(t, n / 2, rng, 2.0), x = RandomBytes(t, n, rng, 8.0);
  std::vector<unsigned char> gpu(static_cast<size_t>(n * eb), 0xAB), cpu(static_cast<size_t>(n * eb), 0xCD);
  auto desc = [&](const Dims& dims, void* data) {
    jas::TensorDesc r;
    r.dtype = t;
    r.rank = static_cast<int64_t>(dims.size());
    r.dims = dims.data();
    int64_t m = 1;
    for (int64_t v : dims) m *= v;
    r.storage_numel = m;
    r.data = data;
    return r;
  };
  const jas::TensorDesc dg = desc(g_dims, g.data()), dx = desc(x_dims, x.data());
  const jas::TensorDesc d_gpu = desc(x_dims, gpu.data()), d_cpu = desc(x_dims, cpu.data());
  const std::string what = std::string(jas::DtypeName(t)) + " x" + ::testing::PrintToString(x_dims) + " dim " +
                           std::to_string(dim) + " blocks " + std::to_string(blocks);

  uint64_t ws = 0;
  jas::CpuExecutor* ce = nullptr;
  ASSERT_EQ(jas::SwiGluGradGetWorkspaceSize(&dg, &dx, dim, &d_cpu, &ws, &ce), jas::kSuccess) << what;
  ASSERT_EQ(jas::CpuRun(nullptr, 0, ce, nullptr), jas::kSuccess) << what;

  jas::CudaExecutor* e = nullptr;
  ASSERT_EQ(jas::SwiGluGradCudaGetWorkspaceSize(&dg, &dx, dim, &d_gpu, &ws, &e), jas::kSuccess) << what;
  const jas::SwiGluLayout l = static_cast<const jas::SwiGluGradCudaPlan*>(e)->layout;
  jas::CudaDestroyExecutor(e);
  // Writes counted per element of out, from its start: dA's element `at` is
  // out's at, dB's is at + inner.
  std::vector<int> writes(static_cast<size_t>(n), 0), writes_b(static_cast<size_t>(n), 0);
  const jas::cuda::SwiGluRows rows = jas::cuda::MakeSwiGluRows(l);
  const SwiGluIndex own = jas::cuda::SwiGluIndexOf(rows);
  // 16-byte vectors exactly where every operand allows them: a dense run
  // whose operands share their 16-byte boundary, or rows of whole vectors
  // with every operand aligned.
  bool aligned = true, shared = true;
  for (const void* p : {l.y_grad, l.a, l.b, static_cast<const void*>(l.grad_a), static_cast<const void*>(l.grad_b)}) {
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;
    shared = shared && reinterpret_cast<uintptr_t>(p) % 16 == reinterpret_cast<uintptr_t>(l.y_grad) % 16;
  }
  const bool dense = l.row == l.inner || l.numel() == l.inner;
  EXPECT_EQ(rows.vec > 1, dense ? shared : aligned && l.inner % (16 / eb) == 0) << what;
  SimulatedLaunch(l, index != nullptr ? *index : own, blocks, &writes, &writes_b);
  for (int64_t i = 0; i + l.inner < n; ++i) writes[static_cast<size_t>(i + l.inner)] += writes_b[i];
  EXPECT_EQ(writes, std::vector<int>(static_cast<size_t>(n), 1)) << what << ": not every element written once";
  EXPECT_TRUE(gpu == cpu) << what << ": differs from the CPU backend";
}

}  // namespace

TEST(cuda_swiglu_grid, packed_walk_writes_every_element_once_with_the_cpu_bits) {
  const SwiGluIndex wide = SwiGluIndex::kWide;
  for (DataType t : kTypes) {
    for (int64_t blocks : {int64_t{0}, int64_t{1}, int64_t{3}}) {
      CheckPacked(t, {6, 8}, -1, nullptr, blocks);
      CheckPacked(t, {37, 2 * 129}, -1, nullptr, blocks);   // rows not a multiple of the warp
      CheckPacked(t, {40, 10}, 0, nullptr, blocks);         // first axis: one dense run
      CheckPacked(t, {3, 10, 2, 5}, 1, nullptr, blocks);    // middle axis
      CheckPacked(t, {2, 1, 2 * 300}, -1, nullptr, blocks);
      CheckPacked(t, {1000, 2}, 1, nullptr, blocks);        // rows of one element
      CheckPacked(t, {5, 2 * 64}, -1, nullptr, blocks);     // rows of whole vectors, every dtype
      CheckPacked(t, {37, 2 * 136}, -1, nullptr, blocks);
      CheckPacked(t, {3, 2, 2 * 24}, 2, nullptr, blocks);
      CheckPacked(t, {5, 2 * 64}, -1, &wide, blocks);       // the 64-bit walk on vectors
      CheckPacked(t, {37, 2 * 129}, -1, &wide, blocks);     // the 64-bit walk on the same rows
      CheckPacked(t, {3, 10, 2, 5}, 1, &wide, blocks);
    }
  }
}

// The pair form: one dense run of every operand, whatever the shape; with
// operands `shift` elements off a 16-byte boundary, the head up to their
// shared boundary one element at a time (element by element where the
// boundaries differ).
TEST(cuda_swiglu_grid, pair_walk_writes_every_element_once_with_the_cpu_bits) {
  using Shift = std::array<int64_t, 5>;  // yGrad, A, B, dA, dB
  for (DataType t : kTypes) {
    for (const Dims& dims : {Dims{}, Dims{1}, Dims{255}, Dims{257}, Dims{3, 700}, Dims{2, 3, 4, 5}}) {
      for (const Shift& shift : {Shift{0, 0, 0, 0, 0}, Shift{1, 1, 1, 1, 1}, Shift{3, 3, 3, 3, 3},
                                 Shift{1, 0, 1, 1, 1}}) {
        for (int64_t blocks : {int64_t{0}, int64_t{2}}) {
          std::mt19937_64 rng(dims.size() + 3 * blocks + 7 * shift[0]);
          int64_t n = 1;
          for (int64_t v : dims) n *= v;
          const int64_t eb = jas::ElementBytes(t);
          // 16-byte-aligned storage (operator new's), each operand `shift` elements in.
          std::vector<unsigned char> in[3] = {RandomBytes(t, n + 8, rng, 2.0), RandomBytes(t, n + 8, rng, 8.0),
                                              RandomBytes(t, n + 8, rng, 2.0)};
          std::vector<unsigned char> bufs[4];
          // The same canary for the two backends' dA (and dB): nothing outside the views may change.
          for (int k = 0; k < 4; ++k) bufs[k].assign(static_cast<size_t>((n + 8) * eb), k % 2 ? 0x5A : 0xA5);
          auto desc = [&](unsigned char* data, int64_t s) {
            jas::TensorDesc r;
            r.dtype = t;
            r.rank = static_cast<int64_t>(dims.size());
            r.dims = dims.data();
            r.storage_numel = n;
            r.data = data + s * eb;
            return r;
          };
          const jas::TensorDesc dg = desc(in[0].data(), shift[0]), da = desc(in[1].data(), shift[1]),
                                db = desc(in[2].data(), shift[2]);
          // [0], [1]: the CPU's dA and dB; [2], [3]: the walk's.
          const jas::TensorDesc o[4] = {desc(bufs[0].data(), shift[3]), desc(bufs[1].data(), shift[4]),
                                        desc(bufs[2].data(), shift[3]), desc(bufs[3].data(), shift[4])};
          const std::string what = std::string(jas::DtypeName(t)) + " " + ::testing::PrintToString(dims) +
                                   " shift " + ::testing::PrintToString(shift) + " blocks " + std::to_string(blocks);
          uint64_t ws = 0;
          jas::CpuExecutor* ce = nullptr;
          ASSERT_EQ(jas::SwiGluGradPairGetWorkspaceSize(&dg, &da, &db, &o[0], &o[1], &ws, &ce), jas::kSuccess);
          ASSERT_EQ(jas::CpuRun(nullptr, 0, ce, nullptr), jas::kSuccess);
          jas::CudaExecutor* e = nullptr;
          ASSERT_EQ(jas::SwiGluGradCudaPairGetWorkspaceSize(&dg, &da, &db, &o[2], &o[3], &ws, &e), jas::kSuccess);
          const jas::SwiGluLayout l = static_cast<const jas::SwiGluGradCudaPlan*>(e)->layout;
          jas::CudaDestroyExecutor(e);
          const jas::cuda::SwiGluRows rows = jas::cuda::MakeSwiGluRows(l);
          ASSERT_EQ(jas::cuda::SwiGluIndexOf(rows), SwiGluIndex::kDense) << what;
          const bool shared = shift == Shift{shift[0], shift[0], shift[0], shift[0], shift[0]};
          EXPECT_EQ(rows.vec, shared && n > 0 ? 16 / eb : 1) << what;
          std::vector<int> wa(static_cast<size_t>(n), 0), wb(static_cast<size_t>(n), 0);
          SimulatedLaunch(l, SwiGluIndex::kDense, blocks, &wa, &wb);
          EXPECT_EQ(wa, std::vector<int>(static_cast<size_t>(n), 1)) << what;
          EXPECT_EQ(wb, std::vector<int>(static_cast<size_t>(n), 1)) << what;
          EXPECT_TRUE(bufs[2] == bufs[0]) << what << ": dA differs from the CPU backend";
          EXPECT_TRUE(bufs[3] == bufs[1]) << what << ": dB differs from the CPU backend";
        }
      }
    }
  }
}
