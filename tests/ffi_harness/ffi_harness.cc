// The XLA FFI API stand-in: see ffi_harness.h.
#include "ffi_harness.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <mutex>
#include <new>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// The opaque types of c_api.h, as this harness implements them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code errc;
  std::string message;
};

namespace ffi_harness {
namespace {

std::mutex g_surprises_mutex;
std::vector<std::string> g_surprises;
std::atomic<int64_t> g_live_errors{0};

void Surprise(std::string what) {
  std::lock_guard<std::mutex> lock(g_surprises_mutex);
  g_surprises.push_back(std::move(what));
}

XLA_FFI_Error* MakeError(XLA_FFI_Error_Code errc, std::string message) {
  g_live_errors.fetch_add(1);
  return new XLA_FFI_Error{errc, std::move(message)};
}

// XLA checks the size of every argument struct it is handed: smaller than
// its own means the handler was built against older headers (refused), larger
// is accepted (newer headers).
template <class Args> bool SizeIs(const Args* args, size_t expected, const char* function) {
  if (args != nullptr && args->struct_size >= expected) return true;
  Surprise(std::string(function) + ": argument struct size " +
           (args ? std::to_string(args->struct_size) : std::string("(null args)")) + ", expected at least " +
           std::to_string(expected));
  return false;
}

XLA_FFI_Error* SizeError(const char* function) {
  return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                   std::string("ffi harness: ") + function + " given an argument struct of the wrong size");
}

// How every entry point that takes an execution context starts: the argument
// struct's size, then the context. Null when both are there, else the error
// to return.
template <class Args>
XLA_FFI_Error* ContextCallError(const Args* args, size_t expected, const char* function) {
  if (!SizeIs(args, expected, function)) return SizeError(function);
  if (args->ctx == nullptr) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi harness: no execution context");
  }
  return nullptr;
}

// A fixed pool of threads, as XLA:CPU's intra-op pool: tasks run in any order
// on any of them; destruction runs what is queued, then joins.
class Pool {
 public:
  explicit Pool(int64_t threads) {
    for (int64_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  int64_t size() const { return static_cast<int64_t>(threads_.size()); }
  void Schedule(XLA_FFI_Task* task, void* data) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace(task, data);
      ++pending_;
    }
    wake_.notify_one();
  }
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      auto [task, data] = queue_.front();
      queue_.pop();
      lock.unlock();
      task(data);
      lock.lock();
      if (--pending_ == 0) idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::queue<std::pair<XLA_FFI_Task*, void*>> queue_;
  int64_t pending_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace
}  // namespace ffi_harness

struct XLA_FFI_ExecutionContext {
  ffi_harness::Options options;
  mutable std::mutex mutex;
  ffi_harness::Log log;
  std::vector<ffi_harness::MemoryCall> live;  // allocated, not yet freed
  std::unique_ptr<ffi_harness::Pool> pool;
};

namespace ffi_harness {
namespace {

// --- errors -----------------------------------------------------------------------

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (!SizeIs(args, XLA_FFI_Error_Create_Args_STRUCT_SIZE, "XLA_FFI_Error_Create")) {
    return SizeError("XLA_FFI_Error_Create");
  }
  if (args->errc == XLA_FFI_Error_Code_OK) Surprise("XLA_FFI_Error_Create: an error with code OK");
  return MakeError(args->errc, args->message != nullptr ? args->message : "");
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  if (!SizeIs(args, XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, "XLA_FFI_Error_GetMessage")) return;
  args->message = args->error != nullptr ? args->error->message.c_str() : nullptr;
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (!SizeIs(args, XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, "XLA_FFI_Error_Destroy")) return;
  if (args->error == nullptr) {
    Surprise("XLA_FFI_Error_Destroy: null error");
    return;
  }
  g_live_errors.fetch_sub(1);
  delete args->error;
}

// --- the execution context's services ----------------------------------------------

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  if (XLA_FFI_Error* e = ContextCallError(args, XLA_FFI_Stream_Get_Args_STRUCT_SIZE, "XLA_FFI_Stream_Get")) {
    return e;
  }
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  std::lock_guard<std::mutex> lock(ctx->mutex);
  ++ctx->log.stream_gets;
  if (!ctx->options.has_stream) {
    return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED, "ffi harness: this execution context has no stream");
  }
  args->stream = ctx->options.stream;
  return nullptr;
}

bool PowerOfTwo(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The largest alignment XLA_FFI_DeviceMemory_Allocate accepts.
constexpr size_t kMaxAlignment = 16;

// Fills new memory with a pattern, so nothing can rely on it being zeroed.
constexpr unsigned char kFreshByte = 0xa5;

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  if (XLA_FFI_Error* e = ContextCallError(args, XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE,
                                          "XLA_FFI_DeviceMemory_Allocate")) {
    return e;
  }
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  std::lock_guard<std::mutex> lock(ctx->mutex);
  MemoryCall call{args->size, args->alignment, nullptr};
  // XLA's own rule (xla/ffi/ffi_api.cc): a power of two no larger than 16;
  // anything else is refused, whatever the device allocator could give.
  if (!PowerOfTwo(args->alignment) || args->alignment > kMaxAlignment) {
    ctx->log.allocations.push_back(call);
    Surprise("XLA_FFI_DeviceMemory_Allocate: alignment " + std::to_string(args->alignment) +
             ", which XLA refuses (a power of two up to " + std::to_string(kMaxAlignment) + " only)");
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "ffi harness: unsupported alignment " + std::to_string(args->alignment));
  }
  if (args->size == 0) Surprise("XLA_FFI_DeviceMemory_Allocate: 0 bytes asked for");
  if (ctx->options.refuse_allocations) {
    ctx->log.allocations.push_back(call);
    return MakeError(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     "ffi harness: out of device memory for " + std::to_string(args->size) + " bytes");
  }
  call.data = ::operator new(std::max<size_t>(args->size, 1), std::align_val_t{args->alignment});
  std::memset(call.data, kFreshByte, args->size);
  ctx->log.allocations.push_back(call);
  ctx->live.push_back(call);
  args->data = call.data;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  if (XLA_FFI_Error* e =
          ContextCallError(args, XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, "XLA_FFI_DeviceMemory_Free")) {
    return e;
  }
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  std::lock_guard<std::mutex> lock(ctx->mutex);
  ctx->log.frees.push_back(MemoryCall{args->size, 0, args->data});
  auto it = std::find_if(ctx->live.begin(), ctx->live.end(),
                         [&](const MemoryCall& m) { return m.data == args->data; });
  if (it == ctx->live.end() || it->size != args->size) {
    Surprise("XLA_FFI_DeviceMemory_Free: " + std::to_string(args->size) +
             " bytes at an address this context did not allocate with that size");
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, "ffi harness: freeing memory not allocated here");
  }
  ::operator delete(it->data, std::align_val_t{it->alignment});
  ctx->live.erase(it);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  if (XLA_FFI_Error* e = ContextCallError(args, XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE,
                                          "XLA_FFI_ThreadPool_Schedule")) {
    return e;
  }
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  Pool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(ctx->mutex);
    ++ctx->log.schedules;
    pool = ctx->pool.get();
  }
  if (pool == nullptr) {
    return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "ffi harness: no thread pool in this execution context");
  }
  pool->Schedule(args->task, args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  if (XLA_FFI_Error* e = ContextCallError(args, XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE,
                                          "XLA_FFI_ThreadPool_NumThreads")) {
    return e;
  }
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  std::lock_guard<std::mutex> lock(ctx->mutex);
  ++ctx->log.num_threads_queries;
  if (ctx->pool == nullptr) {
    return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     "ffi harness: no thread pool in this execution context");
  }
  *args->num_threads = ctx->pool->size();
  return nullptr;
}

// --- what no handler of this package calls ------------------------------------------

XLA_FFI_Error* Unimplemented(const char* function) {
  Surprise(std::string(function) + " called");
  return MakeError(
      XLA_FFI_Error_Code_UNIMPLEMENTED,
      std::string("ffi harness: ") + function + " is not implemented: not expected from this handler");
}

#define JAS_HARNESS_UNIMPLEMENTED(fn) [](fn##_Args*) -> XLA_FFI_Error* { return Unimplemented(#fn); }

const XLA_FFI_Api kApi = [] {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.extension_start = nullptr;
  api.api_version =
      XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  api.internal_api = nullptr;  // XLA's own handlers only
  api.XLA_FFI_Error_Create = &ErrorCreate;
  api.XLA_FFI_Error_GetMessage = &ErrorGetMessage;
  api.XLA_FFI_Error_Destroy = &ErrorDestroy;
  api.XLA_FFI_Handler_Register = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_Handler_Register);
  api.XLA_FFI_Stream_Get = &StreamGet;
  api.XLA_FFI_Type_Register = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_Type_Register);
  api.XLA_FFI_ExecutionContext_Get = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_ExecutionContext_Get);
  api.XLA_FFI_State_Set = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_State_Set);
  api.XLA_FFI_State_Get = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_State_Get);
  api.XLA_FFI_DeviceMemory_Allocate = &DeviceMemoryAllocate;
  api.XLA_FFI_DeviceMemory_Free = &DeviceMemoryFree;
  api.XLA_FFI_ThreadPool_Schedule = &ThreadPoolSchedule;
  api.XLA_FFI_ThreadPool_NumThreads = &ThreadPoolNumThreads;
  api.XLA_FFI_Future_Create = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_Future_Create);
  api.XLA_FFI_Future_SetAvailable = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_Future_SetAvailable);
  api.XLA_FFI_Future_SetError = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_Future_SetError);
  api.XLA_FFI_RunId_Get = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_RunId_Get);
  api.XLA_FFI_DeviceOrdinal_Get = JAS_HARNESS_UNIMPLEMENTED(XLA_FFI_DeviceOrdinal_Get);
  return api;
}();

#undef JAS_HARNESS_UNIMPLEMENTED

}  // namespace

const XLA_FFI_Api* Api() { return &kApi; }

std::vector<std::string> Surprises() {
  std::lock_guard<std::mutex> lock(g_surprises_mutex);
  return g_surprises;
}

void ClearSurprises() {
  std::lock_guard<std::mutex> lock(g_surprises_mutex);
  g_surprises.clear();
}

int64_t LiveErrors() { return g_live_errors.load(); }

const char* CodeName(XLA_FFI_Error_Code code) {
  static constexpr const char* kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const auto i = static_cast<size_t>(code);
  return i < std::size(kNames) ? kNames[i] : "(not an XLA_FFI_Error_Code)";
}

// --- Context ------------------------------------------------------------------------

Context::Context(Options options) : ctx_(std::make_unique<XLA_FFI_ExecutionContext>()) {
  ctx_->options = options;
  if (options.pool_threads > 0) ctx_->pool = std::make_unique<Pool>(options.pool_threads);
}

Context::~Context() {
  ctx_->pool.reset();  // runs what is queued, then joins
  // What the handler left allocated: XLA would release it too (a test has
  // failed on it already).
  for (const MemoryCall& m : ctx_->live) {
    ::operator delete(m.data, std::align_val_t{m.alignment});
  }
}

Log Context::log() const {
  std::lock_guard<std::mutex> lock(ctx_->mutex);
  return ctx_->log;
}

int64_t Context::live_allocations() const {
  std::lock_guard<std::mutex> lock(ctx_->mutex);
  return static_cast<int64_t>(ctx_->live.size());
}

void Context::WaitForPool() const {
  if (ctx_->pool != nullptr) ctx_->pool->WaitIdle();
}

// --- CallFrame ----------------------------------------------------------------------

CallFrame::CallFrame(const Context& context, XLA_FFI_ExecutionStage stage) {
  frame_.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame_.extension_start = nullptr;
  frame_.api = Api();
  frame_.ctx = context.get();
  frame_.stage = stage;
  frame_.future = nullptr;
}

CallFrame::Buffer& CallFrame::Add(std::deque<Buffer>& to, XLA_FFI_DataType dtype, std::vector<int64_t> dims,
                                  void* data) {
  Buffer& b = to.emplace_back();
  b.dims = std::move(dims);
  b.c.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  b.c.extension_start = nullptr;
  b.c.dtype = dtype;
  b.c.data = data;
  b.c.rank = static_cast<int64_t>(b.dims.size());
  b.c.dims = b.dims.data();
  return b;
}

CallFrame& CallFrame::Arg(XLA_FFI_DataType dtype, std::vector<int64_t> dims, void* data) {
  Add(args_, dtype, std::move(dims), data);
  return *this;
}

CallFrame& CallFrame::Ret(XLA_FFI_DataType dtype, std::vector<int64_t> dims, void* data) {
  Add(rets_, dtype, std::move(dims), data);
  return *this;
}

CallFrame& CallFrame::Attr(std::string name, int64_t value) {
  Attribute& a = attrs_.emplace_back();
  a.name = std::move(name);
  a.type = XLA_FFI_AttrType_SCALAR;
  a.scalar_value = value;
  return *this;
}

CallFrame& CallFrame::Attr(std::string name, std::string value) {
  Attribute& a = attrs_.emplace_back();
  a.name = std::move(name);
  a.type = XLA_FFI_AttrType_STRING;
  a.string_value = std::move(value);
  return *this;
}

CallFrame& CallFrame::StructSize(size_t struct_size) {
  frame_.struct_size = struct_size;
  return *this;
}

XLA_FFI_CallFrame* CallFrame::get() {
  arg_types_.assign(args_.size(), XLA_FFI_ArgType_BUFFER);
  arg_ptrs_.clear();
  for (Buffer& b : args_) arg_ptrs_.push_back(&b.c);
  ret_types_.assign(rets_.size(), XLA_FFI_RetType_BUFFER);
  ret_ptrs_.clear();
  for (Buffer& b : rets_) ret_ptrs_.push_back(&b.c);

  // XLA hands attributes over sorted by name: handlers look them up by binary search.
  std::vector<Attribute*> sorted;
  for (Attribute& a : attrs_) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(),
            [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  attr_types_.clear();
  attr_names_.clear();
  attr_ptrs_.clear();
  for (Attribute* a : sorted) {
    a->name_span = XLA_FFI_ByteSpan{a->name.data(), a->name.size()};
    attr_types_.push_back(a->type);
    attr_names_.push_back(&a->name_span);
    if (a->type == XLA_FFI_AttrType_SCALAR) {
      a->scalar = XLA_FFI_Scalar{XLA_FFI_DataType_S64, &a->scalar_value};
      attr_ptrs_.push_back(&a->scalar);
    } else {
      a->string_span = XLA_FFI_ByteSpan{a->string_value.data(), a->string_value.size()};
      attr_ptrs_.push_back(&a->string_span);
    }
  }

  frame_.args = XLA_FFI_Args{XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(arg_ptrs_.size()),
                             arg_types_.data(), arg_ptrs_.data()};
  frame_.rets = XLA_FFI_Rets{XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(ret_ptrs_.size()),
                             ret_types_.data(), ret_ptrs_.data()};
  frame_.attrs = XLA_FFI_Attrs{XLA_FFI_Attrs_STRUCT_SIZE,
                               nullptr,
                               static_cast<int64_t>(attr_ptrs_.size()),
                               attr_types_.data(),
                               attr_names_.data(),
                               attr_ptrs_.data()};
  return &frame_;
}

// --- calls --------------------------------------------------------------------------

namespace {

Outcome Consume(XLA_FFI_Error* error) {
  Outcome o;
  if (error == nullptr) {
    o.ok = true;
    return o;
  }
  o.code = error->errc;
  XLA_FFI_Error_GetMessage_Args get{XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, nullptr, error, nullptr};
  kApi.XLA_FFI_Error_GetMessage(&get);
  o.message = get.message != nullptr ? get.message : "";
  XLA_FFI_Error_Destroy_Args destroy{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  kApi.XLA_FFI_Error_Destroy(&destroy);
  return o;
}

}  // namespace

Outcome Call(XLA_FFI_Handler* handler, CallFrame& frame) {
  XLA_FFI_CallFrame* c = frame.get();
  Outcome o = Consume(handler(c));
  if (c->future != nullptr)
    Surprise("the handler returned a future; this package's handlers are synchronous");
  return o;
}

Metadata QueryMetadata(XLA_FFI_Handler* handler) {
  Metadata m;
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  // Unset until the handler answers.
  metadata.api_version.major_version = metadata.api_version.minor_version = -1;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.extension_base.next = nullptr;
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &extension.extension_base;
  frame.api = Api();
  frame.ctx = nullptr;  // XLA has no execution context at registration
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  m.outcome = Consume(handler(&frame));
  m.major_version = metadata.api_version.major_version;
  m.minor_version = metadata.api_version.minor_version;
  m.traits = metadata.traits;
  m.state_type_id = metadata.state_type_id;
  return m;
}

}  // namespace ffi_harness
