// A stand-in for the XLA runtime's side of the XLA FFI C API (xla/ffi/api/
// c_api.h), enough to call a handler symbol the way XLA calls it: a call
// frame with buffer arguments, buffer results and attributes; an execution
// context that hands out a stream (XLA_FFI_Stream_Get), device memory
// (XLA_FFI_DeviceMemory_Allocate / Free, behind ffi::ScratchAllocator) and an
// intra-op thread pool (XLA_FFI_ThreadPool_Schedule / NumThreads, behind
// ffi::ThreadPool); errors created through XLA_FFI_Error_Create, read and
// destroyed as XLA does; and the metadata query XLA makes when a handler is
// registered. Every API function checks the struct sizes it is given, and
// device memory takes XLA's alignment limit, as XLA does. The functions a handler of this package has no
// reason to call (type and handler registration, state, futures, run id, device ordinal, user data) answer
// UNIMPLEMENTED and are recorded as surprises, so a test sees them.
//
// Written for this package's tests from the public header alone; it is not
// XLA and runs no XLA code. "Device" memory is host memory.
#ifndef JAX_ASCEND_SILU_TESTS_FFI_HARNESS_FFI_HARNESS_H_
#define JAX_ASCEND_SILU_TESTS_FFI_HARNESS_FFI_HARNESS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace ffi_harness {

// The API every call frame of this harness carries.
const XLA_FFI_Api* Api();

// API misuse seen anywhere in the process since the last ClearSurprises():
// calls of unimplemented functions, wrong struct sizes, frees of memory never
// allocated. One line each, naming the function.
std::vector<std::string> Surprises();
void ClearSurprises();

// XLA_FFI_Errors created (by the handler or by this harness) and not yet
// destroyed, process-wide.
int64_t LiveErrors();

struct MemoryCall {
  size_t size = 0;
  size_t alignment = 0;
  void* data = nullptr;  // null for a refused allocation
};

// What the handler asked of one execution context.
struct Log {
  int stream_gets = 0;
  std::vector<MemoryCall> allocations;  // every XLA_FFI_DeviceMemory_Allocate, refused ones included
  std::vector<MemoryCall> frees;        // every XLA_FFI_DeviceMemory_Free
  int64_t schedules = 0;                // XLA_FFI_ThreadPool_Schedule calls
  int num_threads_queries = 0;
};

struct Options {
  void* stream = nullptr;  // what XLA_FFI_Stream_Get returns
  bool has_stream = true;  // false: XLA_FFI_Stream_Get fails, as on a platform without streams
  // true: XLA_FFI_DeviceMemory_Allocate fails, as an exhausted device allocator does.
  bool refuse_allocations = false;
  // 0: no thread pool (Schedule and NumThreads fail, as off XLA:CPU); n > 0: a
  // pool of n threads, as XLA:CPU's intra-op pool.
  int64_t pool_threads = 0;
};

// The per-call state XLA keeps behind XLA_FFI_ExecutionContext. Destroying it
// waits for every task scheduled on its pool.
class Context {
 public:
  explicit Context(Options options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  XLA_FFI_ExecutionContext* get() const { return ctx_.get(); }
  Log log() const;                   // a copy, taken under the context's lock
  int64_t live_allocations() const;  // allocated and not yet freed
  void WaitForPool() const;          // until every scheduled task has run

 private:
  std::unique_ptr<XLA_FFI_ExecutionContext> ctx_;
};

// One call's frame: arguments and results in order, attributes sorted by name
// (as XLA passes them). Buffers are described, not copied: `data` must stay
// valid for the call.
class CallFrame {
 public:
  explicit CallFrame(const Context& context, XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE);
  CallFrame& Arg(XLA_FFI_DataType dtype, std::vector<int64_t> dims, void* data);
  CallFrame& Ret(XLA_FFI_DataType dtype, std::vector<int64_t> dims, void* data);
  CallFrame& Attr(std::string name, int64_t value);      // an S64 scalar attribute
  CallFrame& Attr(std::string name, std::string value);  // a string attribute
  // The frame's struct_size, as a runtime built against other headers would
  // set it (XLA_FFI_CallFrame_STRUCT_SIZE by default).
  CallFrame& StructSize(size_t struct_size);
  // The C frame, rebuilt from what was added so far; valid until the next change.
  XLA_FFI_CallFrame* get();

 private:
  struct Buffer {
    XLA_FFI_Buffer c;
    std::vector<int64_t> dims;
  };
  struct Attribute {
    std::string name;
    XLA_FFI_ByteSpan name_span;
    XLA_FFI_AttrType type;
    int64_t scalar_value = 0;
    XLA_FFI_Scalar scalar;
    std::string string_value;
    XLA_FFI_ByteSpan string_span;
  };
  Buffer& Add(std::deque<Buffer>& to, XLA_FFI_DataType dtype, std::vector<int64_t> dims, void* data);

  XLA_FFI_CallFrame frame_{};
  std::deque<Buffer> args_, rets_;  // deques: elements keep their addresses
  std::deque<Attribute> attrs_;
  std::vector<XLA_FFI_ArgType> arg_types_;
  std::vector<void*> arg_ptrs_;
  std::vector<XLA_FFI_RetType> ret_types_;
  std::vector<void*> ret_ptrs_;
  std::vector<XLA_FFI_AttrType> attr_types_;
  std::vector<XLA_FFI_ByteSpan*> attr_names_;
  std::vector<void*> attr_ptrs_;
};

// What a handler returned, read through the API (message) and the harness's
// own error type (code); the error is destroyed, as XLA destroys it.
struct Outcome {
  bool ok = false;
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_OK;
  std::string message;
};

Outcome Call(XLA_FFI_Handler* handler, CallFrame& frame);

// The handler's metadata, queried as XLA queries it at registration: a call
// frame whose extension chain starts with XLA_FFI_Metadata_Extension.
struct Metadata {
  Outcome outcome;
  int major_version = -1;
  int minor_version = -1;
  XLA_FFI_Handler_Traits traits = 0;
  XLA_FFI_TypeId state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
};

Metadata QueryMetadata(XLA_FFI_Handler* handler);

// "INVALID_ARGUMENT", ..., for messages.
const char* CodeName(XLA_FFI_Error_Code code);

}  // namespace ffi_harness

#endif  // JAX_ASCEND_SILU_TESTS_FFI_HARNESS_FFI_HARNESS_H_
