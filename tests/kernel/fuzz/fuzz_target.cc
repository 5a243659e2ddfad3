// Fuzz target for the two-phase kernel API. Each input describes three tensor
// descriptors (mostly broadcast-compatible; some with negative or huge dims,
// products past int64, strides or offsets past their storage, unsupported or
// mixed dtypes, ranks out of range, null descriptors, dims or data) and how to
// run them. Phase 1 must return what phase1_oracle.h allows. When it accepts,
// phase 2 runs on heap buffers of exactly storage_numel elements (so
// AddressSanitizer sees any access past them), with a workspace of exactly
// the planned size, and every output element is checked against the float64
// reference; nothing else in the output's storage may change, nor any input.
// Any disagreement aborts with the descriptors printed.
#include "fuzz_target.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "kernel_test_util.h"
#include "phase1_oracle.h"
#include "cpu/testing.h"
#include "thread_parallel.h"

namespace jas::fuzz {
namespace {

// Buffers beyond this many elements (or workspace bytes) are not allocated:
// such descriptors go through phase 1 with data that must not be touched.
constexpr int64_t kMaxStorage = int64_t{1} << 15;
constexpr uint64_t kMaxWorkspace = uint64_t{1} << 20;

constexpr int64_t kHuge[] = {int64_t{1} << 31,     (int64_t{1} << 31) - 1, int64_t{1} << 32,
                             3037000500,            int64_t{1} << 40,       int64_t{1} << 61,
                             int64_t{1} << 62,      INT64_MAX - 1,          INT64_MAX};
constexpr int64_t kNegative[] = {-1, -2, INT32_MIN, INT64_MIN + 1, INT64_MIN};
constexpr int64_t kHostileRanks[] = {9, 10, -1, 64, int64_t{1} << 32, INT64_MAX, INT64_MIN};
constexpr int32_t kDtypeCodes[] = {0, 1, 27, 11 /*double*/, 3 /*int32*/, 2, 28, -1, INT32_MIN};
constexpr DataType kValidDtypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16};
constexpr int64_t kHostileChunks[] = {INT64_MAX, INT64_MAX / 2, int64_t{1} << 40, 0, -1, INT64_MIN};

Tallies tallies;

int64_t Hostile(FuzzInput& in) { return in.Below(2) ? in.Pick(kHuge) : in.Pick(kNegative); }

int64_t Dim(FuzzInput& in) {
  const int c = in.Below(32);
  if (c < 25) return 1 + in.Below(3);
  if (c < 29) return in.Below(40);
  if (c == 29) return 0;
  if (c == 30) return Hostile(in);
  return static_cast<int64_t>(in.U64());
}

// For non-negative a and b.
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

// One operand: the arrays its descriptor points into, and its storage.
struct Operand {
  TensorDesc desc;
  bool present = true;             // false: a null descriptor
  std::vector<int64_t> dims;       // what the shape really is (may exceed desc.rank's range)
  std::unique_ptr<int64_t[]> dims_array, strides_array;  // exactly rank entries: over-reads are caught
  std::unique_ptr<unsigned char[]> storage;              // exactly storage_numel elements, or none
  bool real = false;               // desc.data is `storage`
  int64_t elem = 4;
  std::vector<unsigned char> before;  // input contents at the start

  int64_t Bytes() const { return desc.storage_numel * elem; }
  unsigned char* Data() const { return static_cast<unsigned char*>(desc.data); }
  bool Unchanged() const { return before.empty() || std::memcmp(Data(), before.data(), before.size()) == 0; }
  uint32_t Bits(int64_t i) const {
    uint32_t b = 0;
    std::memcpy(&b, Data() + i * elem, elem);  // little-endian: the low bytes
    return b;
  }
};

std::vector<int64_t> Strides(FuzzInput& in, const std::vector<int64_t>& dims, bool* null_strides) {
  const size_t n = dims.size();
  std::vector<int64_t> s(n, 0);
  int64_t span = 1;
  for (size_t i = n; i-- > 0;) {
    s[i] = span;
    span = SaturatingMul(span, std::max<int64_t>(dims[i], 1));
  }
  *null_strides = false;
  const int mode = in.Below(16);
  if (mode < 6) return s;  // row-major
  if (mode < 8) {
    *null_strides = true;
    return s;
  }
  if (mode < 11) {  // permuted, with gaps
    span = 1;
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[in.Below(static_cast<int>(i))]);
    for (size_t i : order) {
      s[i] = SaturatingAdd(SaturatingMul(span, 1 + in.Below(2)), in.Below(3));
      span = SaturatingMul(s[i], std::max<int64_t>(dims[i], 1));
    }
    return s;
  }
  for (size_t i = 0; i < n; ++i) {
    if (mode == 11 && in.Below(2)) s[i] = 0;  // broadcast (an overlapping output)
    if (mode == 12 || mode == 13) s[i] = in.Below(9);
    if (mode == 14 && in.Rarely(3)) s[i] = Hostile(in);
    if (mode == 15) s[i] = static_cast<int64_t>(in.U64());
  }
  return s;
}

// Elements the view needs: one past the last it addresses (its offset when empty).
Wide Needed(const TensorDesc& d, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  Wide last = d.offset;
  if (WideNumel(dims.data(), static_cast<int64_t>(dims.size())) <= 0) return std::max<Wide>(last, 0);
  constexpr Wide kBound = Wide{1} << 64;  // past int64 either way; keeps the sum from overflowing
  for (size_t i = 0; i < dims.size(); ++i) {
    last = std::clamp<Wide>(last + (Wide{dims[i]} - 1) * strides[i], -kBound, kBound);
  }
  return last + 1;
}

int64_t Clamp64(Wide v) { return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : static_cast<int64_t>(v); }

void Describe(const Operand& op, const char* name, std::string* out) {
  char buf[160];
  if (!op.present) {
    *out += std::string(name) + ": null descriptor\n";
    return;
  }
  const TensorDesc& d = op.desc;
  std::snprintf(buf, sizeof buf, "%s: dtype %d rank %lld offset %lld storage_numel %lld data %s dims",
                name, static_cast<int>(d.dtype), static_cast<long long>(d.rank), static_cast<long long>(d.offset),
                static_cast<long long>(d.storage_numel), d.data == nullptr ? "null" : op.real ? "real" : "unallocated");
  *out += buf;
  if (d.dims == nullptr) *out += " null";
  for (int64_t v : op.dims) *out += " " + std::to_string(v);
  *out += d.strides == nullptr ? " strides null" : " strides";
  if (d.strides != nullptr) {
    for (size_t i = 0; i < op.dims.size(); ++i) *out += " " + std::to_string(d.strides[i]);
  }
  *out += "\n";
}

struct Case {
  Operand ops[3];  // grad_output, self, grad_input
  std::string Describe() const {
    std::string s;
    const char* names[] = {"grad_output", "self", "grad_input"};
    for (int i = 0; i < 3; ++i) fuzz::Describe(ops[i], names[i], &s);
    return s;
  }
};

const Case* current = nullptr;  // for the report when a check fails

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n%s", what.c_str(), current ? current->Describe().c_str() : "");
  std::fflush(stderr);
  std::abort();
}

// The message is built only when the check fails.
#define EXPECT(cond, what)      \
  do {                          \
    if (!(cond)) Finding(what); \
  } while (0)

// Input dims for one side of the broadcast: a suffix of `base` with some dims 1.
std::vector<int64_t> InputDims(FuzzInput& in, const std::vector<int64_t>& base) {
  const size_t keep = in.Below(4) == 1 ? in.Below(static_cast<int>(base.size()) + 1) : base.size();
  std::vector<int64_t> dims(base.end() - keep, base.end());
  for (int64_t& d : dims) {
    if (in.Below(4) == 1) d = 1;
    if (in.Rarely(24)) d = Dim(in);
  }
  return dims;
}

void Build(FuzzInput& in, Operand& op, std::vector<int64_t> dims, DataType dtype, std::mt19937_64& rng,
           bool output) {
  TensorDesc& d = op.desc;
  op.present = !in.Rarely(64);
  d.dtype = in.Rarely(32) ? static_cast<DataType>(in.Pick(kDtypeCodes)) : dtype;
  if (in.Rarely(48)) dims.insert(dims.begin(), in.Below(2) ? 1 : Dim(in));  // rank 9 when it was 8
  d.rank = in.Rarely(48) ? in.Pick(kHostileRanks) : static_cast<int64_t>(dims.size());
  op.dims = dims;
  op.dims_array.reset(new int64_t[dims.size()]);
  std::copy(dims.begin(), dims.end(), op.dims_array.get());
  d.dims = in.Rarely(40) ? nullptr : op.dims_array.get();
  bool null_strides = false;
  const std::vector<int64_t> strides = Strides(in, dims, &null_strides);
  op.strides_array.reset(new int64_t[dims.size()]);
  std::copy(strides.begin(), strides.end(), op.strides_array.get());
  d.strides = null_strides ? nullptr : op.strides_array.get();
  const int offset_mode = in.Below(16);
  d.offset = offset_mode < 10 ? 0 : offset_mode < 14 ? in.Below(20) : offset_mode == 14 ? Hostile(in)
                                                                                         : static_cast<int64_t>(in.U64());
  const Wide needed = Needed(d, dims, strides);
  const int storage_mode = in.Below(16);
  if (storage_mode < 11) d.storage_numel = Clamp64(needed);
  if (storage_mode == 11) d.storage_numel = Clamp64(needed - 1);
  if (storage_mode == 12) d.storage_numel = Clamp64(needed + in.Below(8));
  if (storage_mode == 13) d.storage_numel = 0;
  if (storage_mode == 14) d.storage_numel = in.Below(2) ? INT64_MAX : in.Pick(kNegative);
  if (storage_mode == 15) d.storage_numel = static_cast<int64_t>(in.U64());
  // The storage: real when small enough, else a zero-byte block (touching it is an error).
  op.elem = d.dtype == DataType::kFloat16 || d.dtype == DataType::kBFloat16 ? 2 : 4;
  op.real = d.storage_numel >= 0 && d.storage_numel <= kMaxStorage;
  op.storage.reset(new unsigned char[op.real ? op.Bytes() : 0]);
  if (op.real) {
    const DataType t = op.elem == 4 ? DataType::kFloat32 : d.dtype;
    for (int64_t i = 0; i < d.storage_numel; ++i) {
      uint32_t bits = test::Sentinel(t);
      if (!output) {
        static constexpr float kSpecial[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 1e-40f,
                                             3.4e38f, -3.4e38f, -1.2784645f, 88.7f, -104.0f};
        bits = rng() % 8 == 0 ? test::FromFloat(t, kSpecial[rng() % std::size(kSpecial)])
                              : test::FromFloat(t, static_cast<float>(std::normal_distribution<double>(0, 6)(rng)));
      }
      std::memcpy(op.storage.get() + i * op.elem, &bits, op.elem);  // little-endian: the low bytes
    }
    op.before.assign(op.storage.get(), op.storage.get() + op.Bytes());
  }
  d.data = in.Rarely(32) ? nullptr : op.storage.get();
  if (d.data == nullptr) op.real = false;
}

// Checks a successful phase 2: every output element against the reference,
// nothing else in its storage written, the inputs unchanged.
void CheckResult(const Case& c) {
  const Operand &go = c.ops[0], &x = c.ops[1], &gi = c.ops[2];
  for (const Operand* in : {&go, &x}) {
    EXPECT(in->Unchanged(), "an input was modified");
  }
  const DataType t = gi.desc.dtype;
  const int64_t r = gi.desc.rank;
  std::vector<unsigned char> written(static_cast<size_t>(gi.desc.storage_numel), 0);
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  const Wide numel = WideNumel(gi.dims.data(), r);
  for (Wide n = 0; n < numel; ++n) {
    const int64_t o = StorageIndex(gi.desc, idx.data(), r);
    EXPECT(o >= 0 && o < gi.desc.storage_numel, "an output element lies outside its storage");
    EXPECT(written[o]++ == 0, "two output elements share storage element " + std::to_string(o));
    const double g = test::ToFloat(t, go.Bits(StorageIndex(go.desc, idx.data(), r)));
    const double xv = test::ToFloat(t, x.Bits(StorageIndex(x.desc, idx.data(), r)));
    const double got = test::ToFloat(t, gi.Bits(o));
    const double err = test::UlpError(got, g * test::SiluDerivative(xv), t);
    EXPECT(err <= test::MaxUlp(t), "element " + std::to_string(static_cast<int64_t>(n)) + ": g " +
                                       std::to_string(g) + " x " + std::to_string(xv) + " gave " +
                                       std::to_string(got) + " (" + std::to_string(err) + " ulp)");
    for (int64_t i = r - 1; i >= 0 && ++idx[i] == gi.dims[i]; --i) idx[i] = 0;
  }
  for (int64_t i = 0; i < gi.desc.storage_numel; ++i) {
    EXPECT(written[i] || gi.Bits(i) == test::Sentinel(t),
           "output storage element " + std::to_string(i) + " outside the view was written");
  }
  ++tallies.phase2_checked;
  tallies.elements_checked += static_cast<int64_t>(numel);
}

void ExpectUntouched(const Operand& gi) {
  for (int64_t i = 0; i < gi.desc.storage_numel; ++i) {
    EXPECT(gi.Bits(i) == test::Sentinel(gi.desc.dtype), "a failed phase 2 wrote its output");
  }
}

// Phase 2 on the calling thread, or now and then with helper threads.
Status Run(FuzzInput& in, CpuExecutor* e, void* workspace, uint64_t size) {
  ++tallies.phase2_calls;
  if (in.Rarely(6)) {
    ThreadParallel parallel(2 + in.Below(3));
    return CpuRun(workspace, size, e, parallel.get());
  }
  return CpuRun(workspace, size, e, nullptr);
}

// Phase 2 for an accepted plan, with options and misuse chosen by the input.
void Phase2(FuzzInput& in, Case& c, CpuExecutor* e, uint64_t ws, const Verdict& v) {
  Operand& gi = c.ops[2];
  const bool real = c.ops[0].real && c.ops[1].real && gi.real;
  // Exactly the planned size, so an overrun is caught; none when too large to allocate.
  std::unique_ptr<unsigned char[]> workspace(ws <= kMaxWorkspace ? new unsigned char[ws] : nullptr);
  if (!real) {
    // Data that is missing or was never allocated: phase 2 must refuse it untouched.
    SiluGradSetData(e, c.ops[0].real ? c.ops[0].desc.data : nullptr, c.ops[1].real ? c.ops[1].desc.data : nullptr,
                    gi.real ? gi.desc.data : nullptr);
    const Status s = Run(in, e, workspace.get(), ws);
    const Status want = (ws > 0 && workspace == nullptr) || v.out_numel > 0 ? kErrParamNullptr : kSuccess;
    EXPECT(s == want, "phase 2 without data returned " + std::to_string(s));
    if (gi.real) ExpectUntouched(gi);
    return;
  }
  const Isa isa = in.Rarely(3) ? static_cast<Isa>(in.Below(5)) : Isa::kAuto;
  const Status isa_status = CpuSetIsa(e, isa);
  EXPECT(isa_status == (IsaSupported(isa) ? kSuccess : kErrParamInvalid), "SetIsa returned " + std::to_string(isa_status));
  const int chunk_mode = in.Below(8);
  if (chunk_mode >= 5) {
    const int64_t chunk = chunk_mode == 5 ? 1 + in.Below(100) : chunk_mode == 6 ? 1 + in.Below(250) * 20
                                                                                : in.Pick(kHostileChunks);
    const Status s = CpuSetChunkElements(e, chunk);
    EXPECT(s == (chunk >= 1 ? kSuccess : kErrParamInvalid), "SetChunkElements returned " + std::to_string(s));
  }
  const bool repeatable = in.Rarely(5);
  if (repeatable) EXPECT(CpuSetRepeatable(e) == kSuccess, "SetRepeatable failed");
  const int ws_mode = workspace == nullptr ? 15 : in.Below(16);
  Status s;
  if (ws_mode == 14 && ws > 0) {
    s = Run(in, e, workspace.get(), ws - 1);
    EXPECT(s == kErrParamInvalid, "phase 2 with a short workspace returned " + std::to_string(s));
    ExpectUntouched(gi);
  } else if (ws_mode == 15 && ws > 0) {
    s = Run(in, e, nullptr, ws);
    EXPECT(s == kErrParamNullptr, "phase 2 with a null workspace returned " + std::to_string(s));
    ExpectUntouched(gi);
  } else {
    s = Run(in, e, workspace.get(), ws);
    EXPECT(s == kSuccess, "phase 2 returned " + std::to_string(s));
    CheckResult(c);
  }
  if (!repeatable) return;
  // Again, into a fresh output block at a new address.
  std::unique_ptr<unsigned char[]> fresh(new unsigned char[gi.Bytes()]);
  for (int64_t i = 0; i < gi.desc.storage_numel; ++i) {
    const uint32_t bits = test::Sentinel(gi.desc.dtype);
    std::memcpy(fresh.get() + i * gi.elem, &bits, gi.elem);
  }
  gi.storage.swap(fresh);
  gi.desc.data = gi.storage.get();
  EXPECT(SiluGradSetData(e, c.ops[0].desc.data, c.ops[1].desc.data, gi.desc.data) == kSuccess, "SetData failed");
  ++tallies.repeat_runs;
  s = Run(in, e, workspace.get(), ws);
  EXPECT(s == kSuccess, "a repeatable executor's rerun returned " + std::to_string(s));
  CheckResult(c);
  EXPECT(CpuDestroyExecutor(e) == kSuccess, "destroy failed");
}

void OneCase(FuzzInput& in, std::mt19937_64& rng) {
  Case c;
  current = &c;
  const DataType dtype = in.Pick(kValidDtypes);
  std::vector<int64_t> base(static_cast<size_t>(in.Below(9)));
  for (int64_t& d : base) d = Dim(in);
  std::vector<int64_t> gd = InputDims(in, base), xd = InputDims(in, base);
  if (in.Below(2)) std::swap(gd, xd);
  std::vector<int64_t> od = in.Rarely(16) ? InputDims(in, base) : test::BroadcastShape(gd, xd);
  Build(in, c.ops[0], gd, dtype, rng, false);
  Build(in, c.ops[1], xd, dtype, rng, false);
  Build(in, c.ops[2], od, dtype, rng, true);
  Operand &go = c.ops[0], &x = c.ops[1];
  if (in.Rarely(8) && go.real && x.real && go.elem == x.elem && x.desc.storage_numel <= go.desc.storage_numel) {
    x.desc.data = go.desc.data;  // both inputs read one block
    x.before.assign(go.before.begin(), go.before.begin() + x.Bytes());
  }
  const bool ws_ptr = !in.Rarely(128), exec_ptr = !in.Rarely(128);
  const TensorDesc* d[3];
  for (int i = 0; i < 3; ++i) d[i] = c.ops[i].present ? &c.ops[i].desc : nullptr;
  const Verdict v = JudgePhase1(d[0], d[1], d[2], ws_ptr && exec_ptr);

  uint64_t ws = 12345;
  auto* const poison = reinterpret_cast<CpuExecutor*>(uintptr_t{0x10});
  CpuExecutor* e = poison;
  const Status s = SiluGradGetWorkspaceSize(d[0], d[1], d[2], ws_ptr ? &ws : nullptr, exec_ptr ? &e : nullptr);
  ++tallies.cases;
  tallies.phase1_success += s == kSuccess;
  tallies.phase1_null += s == kErrParamNullptr;
  tallies.phase1_invalid += s == kErrParamInvalid;
  EXPECT(v.Allows(s), "phase 1 returned " + std::to_string(s) + "; allowed: success " + std::to_string(v.success) +
                          ", 161001 " + std::to_string(v.null_pointer) + ", 161002 " + std::to_string(v.invalid));
  for (const Operand& op : c.ops) {
    if (op.real) EXPECT(op.Unchanged(), "phase 1 wrote to data");
  }
  if (s != kSuccess) {
    if (ws_ptr && exec_ptr) EXPECT(e == nullptr, "a failed phase 1 left an executor");
    return;
  }
  EXPECT(e != nullptr && e != poison, "phase 1 succeeded without an executor");
  EXPECT(v.out_numel > 0 || ws == 0, "an empty output needs workspace");
  EXPECT(ws == 0 || (Wide{ws} == 8 * v.self_numel && Wide{ws} <= 8 * v.out_numel),
         "workspace of " + std::to_string(ws) + " bytes is not one double per element of self");
  if (in.Rarely(16)) {  // planned and dropped
    EXPECT(CpuDestroyExecutor(e) == kSuccess, "destroy failed");
    return;
  }
  Phase2(in, c, e, ws, v);
}

}  // namespace

const Tallies& GetTallies() { return tallies; }

}  // namespace jas::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Values come from a generator seeded by the input, so a case replays exactly.
  uint64_t seed = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 1099511628211ull;
  std::mt19937_64 rng(seed);
  jas::fuzz::FuzzInput in(data, size);
  jas::fuzz::OneCase(in, rng);
  return 0;
}
