// The emulated cuBLASLt's entry points (README.md here), with cublasLt.h's signatures and the
// statuses the cuBLAS documentation gives each. The descriptors live in their opaque types'
// storage, as cuBLASLt's own do; a matmul is checked at the call and queued on its stream with
// its arguments by value (cublaslt_problem.hpp computes it).
#include <cublasLt.h>

#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "gpu/cuda_emu/libs/cublaslt_problem.hpp"
#include "gpu/cuda_emu/libs/emu_lib.hpp"

using courier::cuda_emu::libs::host_work;
using courier::cuda_emu::libs::work_keeper;
namespace lt = courier::cuda_emu::libs::lt;

// The handle: the matmuls captured into graphs through it live as long as it does.
struct cublasLtContext {
  work_keeper captured;
};

namespace {

static_assert(sizeof(lt::layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(lt::op_desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(lt::preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

// A descriptor's contents, constructed in its opaque storage.
template <typename T, typename Opaque>
T* impl(Opaque* o) {
  return std::launder(reinterpret_cast<T*>(o));
}

template <typename T, typename Opaque>
cublasStatus_t create(Opaque** out, const T& value) {
  if (out == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  Opaque* o = new (std::nothrow) Opaque{};
  if (o == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  new (o) T(value);
  *out = o;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T, typename Opaque>
cublasStatus_t destroy(Opaque* o) {
  if (o != nullptr) {
    impl<T>(o)->~T();
    delete o;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// An attribute's storage: where it lives and its documented size.
struct field {
  void* at = nullptr;  // null: an attribute this emulator does not model
  std::size_t size = 0;
};

template <typename V>
field field_of(V& v) {
  return {&v, sizeof v};
}

// The SetAttribute rule: buf non-null and sizeInBytes the attribute's exact size, else
// CUBLAS_STATUS_INVALID_VALUE. Attributes not modelled here: CUBLAS_STATUS_NOT_SUPPORTED.
cublasStatus_t set(field f, const void* buf, std::size_t size) {
  if (f.at == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (buf == nullptr || size != f.size) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(f.at, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

field layout_field(lt::layout& l, cublasLtMatrixLayoutAttribute_t attr) {
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return field_of(l.type);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return field_of(l.order);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return field_of(l.rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return field_of(l.cols);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return field_of(l.ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return field_of(l.batch_count);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return field_of(l.batch_stride);
  }
  return {};
}

field desc_field(lt::op_desc& d, cublasLtMatmulDescAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return field_of(d.compute);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return field_of(d.scale);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      return field_of(d.pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return field_of(d.transa);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return field_of(d.transb);
    case CUBLASLT_MATMUL_DESC_TRANSC:
      return field_of(d.transc);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return field_of(d.epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return field_of(d.bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return field_of(d.bias_stride);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      return field_of(d.bias_type);
  }
  return {};
}

// The problem a call describes, checked; `p` holds it by value.
cublasStatus_t describe(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                        cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                        cublasLtMatrixLayout_t d, lt::problem& p) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (op == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  p = {*impl<lt::op_desc>(op), *impl<lt::layout>(a), *impl<lt::layout>(b), *impl<lt::layout>(c),
       *impl<lt::layout>(d)};
  return lt::check(p);
}

class matmul_work final : public host_work {
 public:
  matmul_work(const lt::problem& p, const lt::operands& o, int device, const void* workspace)
      : p_(p), o_(o), device_(device), workspace_(workspace) {}
  void run() override {
    if (operands_allocated()) lt::compute(p_, o_);
  }

 private:
  // A GPU faults on an operand that reaches past its allocation, or was freed since the call (a
  // graph replayed after it): here the device's sticky cudaErrorIllegalAddress, said on stderr,
  // and D is left as it was. Every range is checked before anything is read, C only when beta
  // makes the matmul read it.
  bool operands_allocated() const {
    const auto in_memory = [this](const void* p, std::size_t bytes, const char* what) {
      return bytes == 0 || courierEmuDeviceRange(device_, p, bytes, what) != 0;
    };
    const bool device_scalars = p_.op.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
    if (device_scalars && (!in_memory(o_.alpha_ptr, sizeof(float), "cublasLtMatmul's alpha") ||
                           !in_memory(o_.beta_ptr, sizeof(float), "cublasLtMatmul's beta"))) {
      return false;
    }
    const float beta = device_scalars ? *o_.beta_ptr : o_.beta;
    return in_memory(o_.a, lt::span_bytes(p_.a), "cublasLtMatmul's A") &&
           in_memory(o_.b, lt::span_bytes(p_.b), "cublasLtMatmul's B") &&
           (beta == 0.0f || in_memory(o_.c, lt::span_bytes(p_.c), "cublasLtMatmul's C")) &&
           in_memory(o_.d, lt::span_bytes(p_.d), "cublasLtMatmul's D") &&
           in_memory(p_.op.bias, lt::bias_span_bytes(p_), "cublasLtMatmul's bias") &&
           in_memory(workspace_, lt::workspace_need(o_.algo, p_), "cublasLtMatmul's workspace");
  }

  const lt::problem p_;
  const lt::operands o_;
  const int device_;  // the device current at the call, whose memory the operands are
  const void* const workspace_;
};

// The call's operands: alpha and beta read now in host pointer mode (the documented rule: the
// host values may change once the call returns), kept as pointers in device mode.
cublasStatus_t operands_of(const lt::problem& p, const void* alpha, const void* beta,
                           lt::operands& o) {
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (p.op.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE) {
    o.alpha_ptr = static_cast<const float*>(alpha);
    o.beta_ptr = static_cast<const float*>(beta);
  } else {
    std::memcpy(&o.alpha, alpha, sizeof o.alpha);
    std::memcpy(&o.beta, beta, sizeof o.beta);
  }
  const bool reads_c = p.op.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE || o.beta != 0.0f;
  if (o.a == nullptr || o.b == nullptr || o.d == nullptr || (reads_c && o.c == nullptr)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (p.op.epilogue == CUBLASLT_EPILOGUE_BIAS && p.op.bias == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  // In place (C == D) the two must be described alike (Cdesc == Ddesc, the documented rule).
  if (o.c == o.d && (p.c.ld != p.d.ld || p.c.batch_stride != p.d.batch_stride)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The algorithm a call runs: the one given, which must be this library's and fit the problem
// (else CUBLAS_STATUS_INVALID_VALUE), or with none the implicit heuristic's first, which needs
// no workspace; its workspace need within workspaceSizeInBytes, the workspace 256-byte aligned.
cublasStatus_t algorithm_of(const lt::problem& p, const cublasLtMatmulAlgo_t* algo,
                            const void* workspace, std::size_t workspace_bytes, int& id) {
  id = algo == nullptr ? 0 : lt::decode_algo(*algo);
  if (id < 0 || !lt::applicable(id, p)) return CUBLAS_STATUS_INVALID_VALUE;
  const std::size_t need = lt::workspace_need(id, p);
  if (need > workspace_bytes) return CUBLAS_STATUS_INVALID_VALUE;
  if (need > 0 && (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 256)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

COURIER_EMU_API cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) cublasLtContext;
  return *handle == nullptr ? CUBLAS_STATUS_ALLOC_FAILED : CUBLAS_STATUS_SUCCESS;
}

COURIER_EMU_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

COURIER_EMU_API cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                                          cudaDataType type, uint64_t rows,
                                                          uint64_t cols, int64_t ld) {
  lt::layout l;
  l.type = type;
  l.rows = rows;
  l.cols = cols;
  l.ld = ld;
  return create(layout, l);
}

COURIER_EMU_API cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return destroy<lt::layout>(layout);
}

COURIER_EMU_API cublasStatus_t cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void* buf,
    size_t size) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return set(layout_field(*impl<lt::layout>(layout), attr), buf, size);
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                                        cublasComputeType_t compute,
                                                        cudaDataType_t scale) {
  lt::op_desc d;
  d.compute = compute;
  d.scale = scale;
  return create(desc, d);
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  return destroy<lt::op_desc>(desc);
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                              cublasLtMatmulDescAttributes_t attr,
                                                              const void* buf, size_t size) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return set(desc_field(*impl<lt::op_desc>(desc), attr), buf, size);
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return create(pref, lt::preference{});
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy<lt::preference>(pref);
}

COURIER_EMU_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
    size_t size) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  lt::preference& p = *impl<lt::preference>(pref);
  return set(attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ? field_of(p.max_workspace) : field{},
             buf, size);
}

// Every applicable algorithm whose workspace fits the preference's maximum, in heuristic order,
// up to requestedAlgoCount; none: CUBLAS_STATUS_NOT_SUPPORTED, as for a configuration without
// a heuristic.
COURIER_EMU_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int* returned) {
  if (requested <= 0 || pref == nullptr || results == nullptr || returned == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *returned = 0;
  lt::problem p;
  if (const cublasStatus_t s = describe(handle, op, a, b, c, d, p); s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }
  const std::uint64_t max_workspace = impl<lt::preference>(pref)->max_workspace;
  for (int id = 0; id < lt::kAlgorithms && *returned < requested; ++id) {
    if (!lt::applicable(id, p) || lt::workspace_need(id, p) > max_workspace) continue;
    cublasLtMatmulHeuristicResult_t& r = results[(*returned)++];
    r = {};
    r.algo = lt::encode_algo(id);
    r.workspaceSize = lt::workspace_need(id, p);
    r.state = CUBLAS_STATUS_SUCCESS;
    r.wavesCount = 1.0f;
  }
  return *returned > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

// The algorithm checked against the problem; result gets its workspace need (its algo field is
// never written, as documented).
COURIER_EMU_API cublasStatus_t cublasLtMatmulAlgoCheck(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    const cublasLtMatmulAlgo_t* algo, cublasLtMatmulHeuristicResult_t* result) {
  if (algo == nullptr || result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  lt::problem p;
  if (const cublasStatus_t s = describe(handle, op, a, b, c, d, p); s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }
  const int id = lt::decode_algo(*algo);
  if (id < 0 || !lt::applicable(id, p)) return CUBLAS_STATUS_INVALID_VALUE;
  result->workspaceSize = lt::workspace_need(id, p);
  result->state = CUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
  return CUBLAS_STATUS_SUCCESS;
}

// Checked now, run in stream order (a failure to queue: CUBLAS_STATUS_EXECUTION_FAILED, "the
// function failed to launch").
COURIER_EMU_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                              const void* alpha, const void* a_ptr,
                                              cublasLtMatrixLayout_t a, const void* b_ptr,
                                              cublasLtMatrixLayout_t b, const void* beta,
                                              const void* c_ptr, cublasLtMatrixLayout_t c,
                                              void* d_ptr, cublasLtMatrixLayout_t d,
                                              const cublasLtMatmulAlgo_t* algo, void* workspace,
                                              size_t workspace_bytes, cudaStream_t stream) {
  lt::problem p;
  if (const cublasStatus_t s = describe(handle, op, a, b, c, d, p); s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }
  lt::operands o;
  o.a = a_ptr;
  o.b = b_ptr;
  o.c = c_ptr;
  o.d = d_ptr;
  if (const cublasStatus_t s = operands_of(p, alpha, beta, o); s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }
  if (const cublasStatus_t s = algorithm_of(p, algo, workspace, workspace_bytes, o.algo);
      s != CUBLAS_STATUS_SUCCESS) {
    return s;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  const cudaError_t e = courier::cuda_emu::libs::enqueue(
      stream, std::make_unique<matmul_work>(p, o, device, workspace), handle->captured);
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}
