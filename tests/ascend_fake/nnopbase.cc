// THIS IS A FAKE, NOT CANN (see fake_cann.h): libnnopbase.so, the aclnn
// tensor API.
#include <type_traits>

#include "fake_cann.h"

namespace cann = jas::cann;

extern "C" {

cann::aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, cann::aclDataType dataType,
                                 const int64_t* stride, int64_t offset, cann::aclFormat format,
                                 const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
  return fake_cann::impl::CreateTensor(viewDims, viewDimsNum, dataType, stride, offset, format, storageDims,
                                       storageDimsNum, tensorData);
}

cann::aclnnStatus aclDestroyTensor(const cann::aclTensor* tensor) { return fake_cann::impl::DestroyTensor(tensor); }

#ifndef FAKE_CANN_NO_DESTROY_EXECUTOR  // absent before CANN 8.0, which documents it
cann::aclnnStatus aclDestroyAclOpExecutor(cann::aclOpExecutor* executor) {
  return fake_cann::impl::DestroyExecutor(executor);
}
#endif

}  // extern "C"

// The exports have the declared types (cann.h), which CI checks against CANN's headers.
static_assert(std::is_same_v<decltype(aclCreateTensor), cann::aclCreateTensorFn>);
static_assert(std::is_same_v<decltype(aclDestroyTensor), cann::aclDestroyTensorFn>);
#ifndef FAKE_CANN_NO_DESTROY_EXECUTOR
static_assert(std::is_same_v<decltype(aclDestroyAclOpExecutor), cann::aclDestroyAclOpExecutorFn>);
#endif
