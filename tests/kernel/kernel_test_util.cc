#include "kernel_test_util.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

#include "common/half.h"
#include "thread_parallel.h"

namespace jas::test {

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> isas;
  for (Isa isa : kIsas) {
    if (IsaSupported(isa)) isas.push_back(isa);
  }
  return isas;
}

float ToFloat(DataType t, uint32_t bits) {
  switch (t) {
    case DataType::kFloat16: return half::F16ToFloat(static_cast<uint16_t>(bits));
    case DataType::kBFloat16: return half::BF16ToFloat(static_cast<uint16_t>(bits));
    default: return half::FromBits(bits);
  }
}

uint32_t FromFloat(DataType t, float v) {
  switch (t) {
    case DataType::kFloat16: return half::FloatToF16(v);
    case DataType::kBFloat16: return half::FloatToBF16(v);
    default: return half::Bits(v);
  }
}

int64_t Numel(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Dims BroadcastShape(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t j = 0; j < r; ++j) {
    const int64_t da = j + a.size() >= r ? a[j + a.size() - r] : 1;
    const int64_t db = j + b.size() >= r ? b[j + b.size() - r] : 1;
    out[j] = da == 1 ? db : da;
  }
  return out;
}

std::string ToString(const Dims& dims) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "," : "") << dims[i];
  os << "]";
  return os.str();
}

void RandomBroadcastPair(Rng& rng, int64_t rank, int64_t max_dim, Dims* g, Dims* x) {
  Dims base(static_cast<size_t>(rank));
  for (int64_t& d : base) d = 1 + static_cast<int64_t>(rng() % max_dim);
  for (Dims* out : {g, x}) {
    const size_t keep = (out == g || rank == 0) ? base.size() : rng() % (base.size() + 1);
    out->assign(base.end() - keep, base.end());
    for (int64_t& d : *out) {
      if (rng() % 4 == 0) d = 1;
    }
  }
  if (rng() % 2) std::swap(*g, *x);
}

TensorDesc Operand::Desc() {
  TensorDesc d;
  d.dtype = dtype;
  d.rank = static_cast<int64_t>(dims.size());
  d.dims = dims.data();
  d.strides = null_strides ? nullptr : strides.data();
  d.offset = offset;
  d.storage_numel = storage_numel;
  d.data = bytes.data();
  return d;
}

uint32_t Operand::Bits(int64_t i) const {
  if (ElementBytes(dtype) == 4) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  uint16_t v;
  std::memcpy(&v, bytes.data() + 2 * i, 2);
  return v;
}

void Operand::SetBits(int64_t i, uint32_t bits) {
  if (ElementBytes(dtype) == 4) {
    std::memcpy(bytes.data() + 4 * i, &bits, 4);
  } else {
    const uint16_t v = static_cast<uint16_t>(bits);
    std::memcpy(bytes.data() + 2 * i, &v, 2);
  }
}

int64_t Operand::Locate(const Dims& idx) const {
  const size_t lead = idx.size() - dims.size();
  int64_t at = offset;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] != 1) at += idx[lead + k] * strides[k];
  }
  return at;
}

namespace {

// Sizes the storage to the view: the last element addressed, plus one.
void SizeStorage(Operand& op) {
  int64_t last = op.offset;
  for (size_t i = 0; i < op.dims.size(); ++i) last += (op.dims[i] - 1) * op.strides[i];
  op.storage_numel = Numel(op.dims) == 0 ? op.offset : last + 1;
  op.bytes.assign(static_cast<size_t>(op.StorageSize() * ElementBytes(op.dtype)), 0);
  FillSentinel(op);  // outputs start out recognisable; inputs get filled
}

}  // namespace

Operand Contiguous(DataType t, const Dims& dims) {
  Operand op;
  op.dtype = t;
  op.dims = dims;
  op.strides.assign(dims.size(), 0);
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    op.strides[i] = s;
    s *= std::max<int64_t>(dims[i], 1);
  }
  SizeStorage(op);
  return op;
}

Operand RandomView(DataType t, const Dims& dims, Rng& rng, bool output) {
  Operand op;
  op.dtype = t;
  op.dims = dims;
  op.strides.assign(dims.size(), 0);
  std::vector<size_t> order(dims.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  int64_t span = 1;  // elements spanned by the dims placed so far
  for (size_t i : order) {  // fastest-varying first
    if (dims[i] <= 1) {
      op.strides[i] = static_cast<int64_t>(rng() % 50);  // never stepped: any value is valid
      continue;
    }
    const uint64_t kind = rng() % 8;
    if (!output && kind == 0) {
      op.strides[i] = 0;  // a broadcast view
    } else if (!output && kind == 1) {
      op.strides[i] = std::max<int64_t>(1, span / 2);  // overlapping reads
    } else {
      op.strides[i] = span * static_cast<int64_t>(1 + rng() % 2) + static_cast<int64_t>(rng() % 3);
    }
    span = std::max(span, op.strides[i] * dims[i]);
  }
  op.offset = static_cast<int64_t>(rng() % 17);
  SizeStorage(op);
  return op;
}

Operand CompactCopy(const Operand& v) {
  Operand c = Contiguous(v.dtype, v.dims);
  ForEachIndex(v.dims, [&](const Dims& idx) { c.SetBits(c.Locate(idx), v.Bits(v.Locate(idx))); });
  return c;
}

void FillRandom(Operand& op, Rng& rng, double scale) {
  std::normal_distribution<double> normal(0.0, scale);
  for (int64_t i = 0; i < op.StorageSize(); ++i) {
    op.SetBits(i, FromFloat(op.dtype, static_cast<float>(normal(rng))));
  }
}

uint32_t Sentinel(DataType t) { return t == DataType::kFloat32 ? kSentinelF32 : kSentinelHalf; }

void FillSentinel(Operand& op) {
  for (int64_t i = 0; i < op.StorageSize(); ++i) op.SetBits(i, Sentinel(op.dtype));
}

void ForEachIndex(const Dims& dims, const std::function<void(const Dims&)>& fn) {
  if (Numel(dims) == 0) return;
  Dims idx(dims.size(), 0);
  while (true) {
    fn(idx);
    size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

double SiluDerivative(double x) {
  // The root of s'(x): x0 = hi + lo, and c = e^x0 = -1 - x0.
  constexpr double kX0Hi = -1.2784645427610738, kX0Lo = 1.1257466309409694e-16, kC = 0.2784645427610738;
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
  const double e = std::exp(-std::fabs(x));
  const double d = (x - kX0Hi) - kX0Lo;
  const double g = std::fabs(d) < 0.5 ? d + kC * std::expm1(d) : 1.0 + x + e;  // 1 + x + e^x
  const double num = x > 0 ? 1.0 + e * (1.0 + x) : e * g;
  const double ds = num / ((1.0 + e) * (1.0 + e));
  // s'(x) < 0 for every finite x below the root, even where float64
  // underflows (x < -745): an infinite grad_output then gives -inf, not NaN.
  return ds == 0.0 ? -DBL_MIN : ds;
}

namespace {

struct Format {
  int bits;  // significand bits, the implicit one included
  int emin;  // exponent of the smallest normal
  double max_finite;
};

Format FormatOf(DataType t) {
  switch (t) {
    case DataType::kFloat16: return {11, -14, 65504.0};
    case DataType::kBFloat16: return {8, -126, 0x1.fep+127};
    default: return {24, -126, std::numeric_limits<float>::max()};
  }
}

double UlpOf(double exact, const Format& f) {
  int exp = f.emin;
  if (exact != 0.0 && std::isfinite(exact)) exp = std::max(std::ilogb(exact), f.emin);
  return std::ldexp(1.0, exp - (f.bits - 1));
}

}  // namespace

double UlpError(double result, double exact, DataType t) {
  const Format f = FormatOf(t);
  // An exact value past the largest finite one by half an ulp rounds to inf.
  const bool expect_inf = std::fabs(exact) >= f.max_finite + UlpOf(f.max_finite, f) / 2;
  const double expect = expect_inf ? std::copysign(INFINITY, exact) : exact;
  if (std::isnan(result) && std::isnan(expect)) return 0.0;
  if (std::isinf(result) && result == expect) return 0.0;
  const double diff = std::fabs(result - expect);
  if (std::isnan(diff) || std::isinf(diff)) return INFINITY;
  if (t == DataType::kFloat32 && diff < 0x1p-100) return 0.0;
  return diff / UlpOf(expect_inf ? f.max_finite : exact, f);
}

double MaxUlp(DataType t) { return t == DataType::kFloat32 ? 4.0 : 1.0; }

Status Compute(Operand& grad_output, Operand& self, Operand& grad_input, const RunOptions& options,
               uint64_t* workspace_bytes) {
  const TensorDesc go = grad_output.Desc(), x = self.Desc(), gi = grad_input.Desc();
  uint64_t bytes = 0;
  CpuExecutor* executor = nullptr;
  if (Status s = SiluGradGetWorkspaceSize(&go, &x, &gi, &bytes, &executor); s != kSuccess) return s;
  if (workspace_bytes != nullptr) *workspace_bytes = bytes;
  Status s = CpuSetIsa(executor, options.isa);
  if (s == kSuccess && options.chunk_elements > 0) {
    s = CpuSetChunkElements(executor, options.chunk_elements);
  }
  if (s != kSuccess) {
    CpuDestroyExecutor(executor);
    return s;
  }
  std::vector<unsigned char> workspace(bytes);
  ThreadParallel threads(options.parallel ? 1 : options.threads);
  return CpuRun(bytes > 0 ? workspace.data() : nullptr, bytes, executor,
                     options.parallel ? options.parallel : threads.get());
}

bool SameBits(const Operand& a, const Operand& b) {
  bool same = a.dims == b.dims;
  if (same) ForEachIndex(a.dims, [&](const Dims& idx) { same = same && a.Bits(a.Locate(idx)) == b.Bits(b.Locate(idx)); });
  return same;
}

float HashedGrad(uint64_t i) {
  uint64_t h = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  const uint32_t sign = static_cast<uint32_t>(h >> 63) << 31;
  const uint32_t exponent = 127 - 4 + static_cast<uint32_t>((h >> 40) & 7);
  return half::FromBits(sign | (exponent << 23) | static_cast<uint32_t>(h & 0x7fffff));
}

}  // namespace jas::test
