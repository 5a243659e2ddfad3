// `_silu_grad_cpu_testing`, a test module that the wheel does not ship:
// SiluGradGetWorkspaceSize and CpuRun on strided views of 1-D NumPy
// buffers, with the instruction set, chunk size and thread count chosen by the
// caller (no JAX involved). Statuses come back as numbers, as the C++ API
// returns them; only misuse of the binding itself raises.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpu/testing.h"
#include "silu_grad.h"
#include "thread_parallel.h"

namespace nb = nanobind;

namespace jas::ffi {
namespace {

using Storage = nb::ndarray<nb::device::cpu, nb::c_contig, nb::ndim<1>>;

// The kernel's dtype table, and float64 (aclDataType 11) besides, accepted
// here so that tests can see the kernel refuse it.
constexpr DtypeInfo kFloat64 = {static_cast<DataType>(11), 8, "float64"};

const DtypeInfo& DtypeByName(const std::string& name) {
  if (const DtypeInfo* d = FindDtype(std::string_view(name))) return *d;
  if (name == kFloat64.name) return kFloat64;
  std::string names;
  for (const DtypeInfo& d : kDtypes) names += std::string(d.name) + ", ";
  throw nb::value_error(("unknown dtype '" + name + "'; expected " + names + "or float64").c_str());
}

// The kernel dtype a buffer holds when none is named (bfloat16 must be named:
// NumPy hands ml_dtypes' bfloat16 over only as a uint16 view).
const DtypeInfo& DtypeOfStorage(const Storage& s) {
  const nb::dlpack::dtype t = s.dtype();
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.lanes == 1) {
    if (t.bits == 32) return *FindDtype(DataType::kFloat32);
    if (t.bits == 16) return *FindDtype(DataType::kFloat16);
    if (t.bits == 64) return kFloat64;
  }
  throw nb::type_error("storage must be float32, float16 or float64; pass dtype='bfloat16' with a uint16 view");
}

// A strided view (as aclCreateTensor describes one) of a 1-D buffer.
struct View {
  Storage storage;  // invalid: no data (a null pointer to the kernel)
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> strides;
  int64_t offset = 0;
  const DtypeInfo* dtype = nullptr;
  int64_t storage_numel = 0;

  TensorDesc Desc() const {
    TensorDesc d;
    d.dtype = dtype->type;
    d.rank = static_cast<int64_t>(shape.size());
    d.dims = shape.data();
    d.strides = strides ? strides->data() : nullptr;
    d.offset = offset;
    d.storage_numel = storage_numel;
    d.data = storage.is_valid() ? storage.data() : nullptr;
    return d;
  }
};

void InitView(View* v, std::optional<Storage> storage, std::vector<int64_t> shape,
              std::optional<std::vector<int64_t>> strides, int64_t offset, std::optional<std::string> dtype,
              std::optional<int64_t> storage_numel) {
  if (strides && strides->size() != shape.size()) {
    throw nb::value_error(("strides has " + std::to_string(strides->size()) + " entries for a shape of rank " +
                           std::to_string(shape.size())).c_str());
  }
  const DtypeInfo* info = nullptr;
  if (dtype) {
    info = &DtypeByName(*dtype);
  } else if (storage) {
    info = &DtypeOfStorage(*storage);
  } else {
    throw nb::value_error("a view without storage needs a dtype");
  }
  int64_t numel = 0;
  if (storage) {
    if (static_cast<int64_t>(storage->itemsize()) != info->bytes) {
      throw nb::type_error(("storage items are " + std::to_string(storage->itemsize()) + " bytes; " + info->name +
                            " needs " + std::to_string(info->bytes)).c_str());
    }
    numel = static_cast<int64_t>(storage->size());
    if (storage_numel && *storage_numel > numel) {
      throw nb::value_error("storage_numel exceeds the storage buffer");
    }
  } else if (!storage_numel) {
    throw nb::value_error("a view without storage needs storage_numel");
  }
  new (v) View{storage ? *storage : Storage(), std::move(shape), std::move(strides), offset, info,
               storage_numel.value_or(numel)};
}

Isa ParseIsa(const std::string& name) {
  if (name == IsaName(Isa::kAuto)) return Isa::kAuto;
  std::string names = IsaName(Isa::kAuto);
  for (Isa isa : kIsas) {
    if (name == IsaName(isa)) return isa;
    names += std::string(", ") + IsaName(isa);
  }
  throw nb::value_error(("unknown isa '" + name + "'; expected one of " + names).c_str());
}

// Phase 1 with null operands where the caller passed None.
Status Plan(const std::optional<View>* views, uint64_t* bytes, CpuExecutor** executor) {
  TensorDesc d[3];
  const TensorDesc* p[3];
  for (int i = 0; i < 3; ++i) {
    p[i] = nullptr;
    if (views[i]) {
      d[i] = views[i]->Desc();
      p[i] = &d[i];
    }
  }
  return SiluGradGetWorkspaceSize(p[0], p[1], p[2], bytes, executor);
}

nb::tuple PlanOnly(std::optional<View> grad_output, std::optional<View> self, std::optional<View> grad_input) {
  const std::optional<View> views[3] = {std::move(grad_output), std::move(self), std::move(grad_input)};
  uint64_t bytes = 0;
  CpuExecutor* executor = nullptr;
  const Status s = Plan(views, &bytes, &executor);
  if (s == kSuccess) CpuDestroyExecutor(executor);
  return nb::make_tuple(s, bytes);
}

Status Run(std::optional<View> grad_output, std::optional<View> self, std::optional<View> grad_input,
           const std::string& isa, int64_t chunk_elements, int64_t threads, std::optional<uint64_t> workspace_bytes) {
  const Isa chosen = ParseIsa(isa);
  if (threads < 1) throw nb::value_error("threads must be at least 1");
  const std::optional<View> views[3] = {std::move(grad_output), std::move(self), std::move(grad_input)};
  uint64_t bytes = 0;
  CpuExecutor* executor = nullptr;
  if (Status s = Plan(views, &bytes, &executor); s != kSuccess) return s;
  Status s = CpuSetIsa(executor, chosen);
  if (s == kSuccess && chunk_elements != 0) s = CpuSetChunkElements(executor, chunk_elements);
  if (s != kSuccess) {
    CpuDestroyExecutor(executor);
    return s;
  }
  const uint64_t size = workspace_bytes.value_or(bytes);
  std::vector<unsigned char> workspace(size);
  nb::gil_scoped_release release;
  ThreadParallel parallel(threads);
  return CpuRun(size > 0 ? workspace.data() : nullptr, size, executor, parallel.get());
}

}  // namespace
}  // namespace jas::ffi

NB_MODULE(_silu_grad_cpu_testing, m) {
  using namespace jas;
  using namespace jas::ffi;
  m.doc() = "The raw two-phase SiluGrad kernel API on strided views of 1-D NumPy buffers.";
  m.attr("SUCCESS") = kSuccess;
  m.attr("ERR_PARAM_NULLPTR") = kErrParamNullptr;
  m.attr("ERR_PARAM_INVALID") = kErrParamInvalid;
  m.attr("ERR_INNER_CREATE_EXECUTOR") = kErrInnerCreateExecutor;
  m.attr("ERR_INNER_NULLPTR") = kErrInnerNullptr;
  m.def("status_name", &StatusName, nb::arg("status"), "The aclnn name of a status code.");

  nb::class_<View>(m, "View", "A strided view (shape, element strides, storage offset) of a 1-D buffer.")
      .def("__init__", &InitView, nb::arg("storage").none(), nb::arg("shape"), nb::arg("strides") = nb::none(),
           nb::arg("offset") = 0, nb::arg("dtype") = nb::none(), nb::arg("storage_numel") = nb::none(),
           "storage: a C-contiguous 1-D float32/float16/float64 array, a uint16 view of bfloat16 data with\n"
           "dtype='bfloat16', or None for no data (then dtype and storage_numel are required).\n"
           "strides: element strides, None for row-major. storage_numel: elements the kernel may address\n"
           "(default: all of storage).")
      .def_ro("shape", &View::shape)
      .def_ro("strides", &View::strides)
      .def_ro("offset", &View::offset)
      .def_ro("storage_numel", &View::storage_numel)
      .def_prop_ro("dtype", [](const View& v) { return std::string(v.dtype->name); });

  m.def("plan", &PlanOnly, nb::arg("grad_output").none(), nb::arg("self").none(), nb::arg("grad_input").none(),
        "Phase 1 alone: (status, workspace bytes). None passes a null tensor pointer.");
  m.def("run", &Run, nb::arg("grad_output").none(), nb::arg("self").none(), nb::arg("grad_input").none(),
        nb::kw_only(), nb::arg("isa") = "auto", nb::arg("chunk_elements") = 0, nb::arg("threads") = 1,
        nb::arg("workspace_bytes") = nb::none(),
        "Both phases; writes grad_input's view in place and returns the status.\n"
        "isa: auto, scalar, avx2, avx512 or neon. chunk_elements: 0 for the kernel's default.\n"
        "threads: counting the caller, extra ones are std::threads. workspace_bytes: the size\n"
        "handed to phase 2 (default: exactly what phase 1 planned).");
}
