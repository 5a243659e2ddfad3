// SwiGluGrad's operands as XLA hands them to every platform's handler, and
// the backend's phase 1 on them: packed, (grad_output, x) -> out with the
// split axis; pair, (grad_output, a, b) -> (grad_a, grad_b). One custom-call
// target takes both, told apart by the operand count.
#ifndef JAX_ASCEND_SILU_FFI_SWIGLU_OPERANDS_H_
#define JAX_ASCEND_SILU_FFI_SWIGLU_OPERANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "swiglu_grad.h"
#include "tensor_desc.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {

struct SwiGluBuffers {
  bool packed = true;
  int64_t axis = 0;
  // packed: [0] grad_output, [1] x, [3] out; pair: [0] grad_output, [1] a, [2] b, [3] grad_a, [4] grad_b.
  std::optional<xffi::AnyBuffer> buffers[5];
  TensorDesc desc(int i) const { return TensorDescOf(*buffers[i]); }
  std::string Shapes() const {
    static constexpr const char* kPacked[] = {"grad_output", "x", "", "out"};
    static constexpr const char* kPair[] = {"grad_output", "a", "b", "grad_a", "grad_b"};
    std::string s;
    for (int i = 0; i < 5; ++i) {
      if (packed && (i == 2 || i == 4)) continue;
      s += (s.empty() ? "" : ", ") + std::string(packed ? kPacked[i] : kPair[i]) + " " + ShapeString(*buffers[i]);
    }
    return s;
  }
};

inline xffi::Error SwiGluError(Status status, const char* phase, const std::string& context) {
  return StatusError(status, phase, context, "SwiGluGrad");
}

// The buffers of one call: one or two inputs after grad_output, as many results.
inline xffi::Error DecodeSwiGlu(xffi::AnyBuffer grad_output, const xffi::RemainingArgs& args,
                                const xffi::RemainingRets& rets, int64_t axis, SwiGluBuffers* out) {
  const size_t n = args.size();
  if ((n != 1 && n != 2) || rets.size() != n) {
    return xffi::Error::InvalidArgument(
        "jax_ascend_silu: SwiGluGrad takes (grad_output, x) -> out or (grad_output, a, b) -> (grad_a, grad_b); got " +
        std::to_string(n + 1) + " operands and " + std::to_string(rets.size()) + " results");
  }
  out->packed = n == 1;
  out->axis = axis;
  out->buffers[0].emplace(grad_output);
  for (size_t i = 0; i < n; ++i) {
    auto arg = args.get<xffi::AnyBuffer>(i);
    auto ret = rets.get<xffi::AnyBuffer>(i);
    if (arg.has_error()) return arg.error();
    if (ret.has_error()) return ret.error();
    out->buffers[1 + i].emplace(*arg);
    out->buffers[3 + i].emplace(**ret);
  }
  return xffi::Error::Success();
}

// A backend's phase 1 (the packed or the pair entry) on the decoded buffers;
// a refusal comes back as an ffi::Error saying what and what to do.
template <class Executor, class Packed, class Pair>
xffi::Error SwiGluPhase1(Packed packed, Pair pair, const SwiGluBuffers& b, uint64_t* workspace_bytes,
                         Executor** executor) {
  TensorDesc d[5];
  for (int i = 0; i < 5; ++i) {
    if (!b.packed || (i != 2 && i != 4)) d[i] = b.desc(i);
  }
  const Status s = b.packed ? packed(&d[0], &d[1], b.axis, &d[3], workspace_bytes, executor)
                            : pair(&d[0], &d[1], &d[2], &d[3], &d[4], workspace_bytes, executor);
  if (s == kSuccess) return xffi::Error::Success();
  std::string why;
  SwiGluLayout layout;
  if (b.packed) {
    CheckSwiGluPacked(&d[0], &d[1], b.axis, &d[3], &layout, &why);
  } else {
    CheckSwiGluPair(&d[0], &d[1], &d[2], &d[3], &d[4], &layout, &why);
  }
  return SwiGluError(s, "phase 1 (GetWorkspaceSize)", (why.empty() ? "" : why + "; ") + "got " + b.Shapes());
}

// Every platform's handler binds its own context (stream, pool, allocator)
// and then these: grad_output, then x (packed) or a and b (pair), as many
// results, and the split axis.
template <class Binding>
auto BindSwiGluGrad(Binding&& binding) {
  return std::forward<Binding>(binding)
      .template Arg<xffi::AnyBuffer>()  // grad_output (CANN's yGrad)
      .RemainingArgs()                  // x (packed), or a and b (pair)
      .RemainingRets()                  // out (packed), or grad_a and grad_b (pair)
      .template Attr<int64_t>("axis");  // the split axis of x (packed; pair: ignored)
}

}  // namespace jas::ffi

#endif  // JAX_ASCEND_SILU_FFI_SWIGLU_OPERANDS_H_
