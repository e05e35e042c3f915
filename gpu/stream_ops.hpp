#pragma once
// The one list of the device's stream ops: the ops of a forward pass that are enqueued in stream
// order, may be recorded into a graph (device::capture) and are timed one by one by
// bench-forward's profiler. Every wrapper device is generated from it (forwarding_device forwards
// each, recording_device records each, op_profiler times each), so an op added to `device`
// cannot be forgotten by one of them:
// - an op in `device` but not here leaves forwarding_device abstract, which the static_assert
//   after it reports;
// - an op here whose signature differs from `device`'s fails the static_asserts below.
// The other members of `device` (memory, upload/download, sampling, timestamps, capture) are
// not stream ops: each wrapper says by hand what it does with them.
//
// COURIER_STREAM_OPS(X) calls X(name, (parameters), (arguments)) once per op.
#include <cstdint>
#include <type_traits>

#include "gpu/device.hpp"

#define COURIER_STREAM_OPS(X)                                                                   \
  X(embedding, (const std::int32_t* ids, ::courier::gpu::tensor_view table,                     \
                std::int64_t first_id, ::courier::gpu::tensor_view out),                        \
    (ids, table, first_id, out))                                                                \
  X(all_reduce_sum, (::courier::gpu::tensor_view x), (x))                                       \
  X(all_gather_cols, (::courier::gpu::tensor_view in, ::courier::gpu::tensor_view out),         \
    (in, out))                                                                                  \
  X(rms_norm, (::courier::gpu::tensor_view x, ::courier::gpu::tensor_view w, float eps,         \
               ::courier::gpu::tensor_view out),                                                \
    (x, w, eps, out))                                                                           \
  X(add_rms_norm, (::courier::gpu::tensor_view residual, ::courier::gpu::tensor_view x,         \
                   ::courier::gpu::tensor_view w, float eps, ::courier::gpu::tensor_view out),  \
    (residual, x, w, eps, out))                                                                 \
  X(linear, (::courier::gpu::tensor_view x, ::courier::gpu::tensor_view w,                      \
             ::courier::gpu::tensor_view bias, ::courier::gpu::tensor_view out),                \
    (x, w, bias, out))                                                                          \
  X(qkv_rope_kv_write,                                                                          \
    (::courier::gpu::tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,      \
     std::int32_t head_dim, ::courier::gpu::tensor_view q_norm,                                 \
     ::courier::gpu::tensor_view k_norm, float eps, const std::int32_t* positions,              \
     const float* inv_freq, const std::int32_t* slot_mapping,                                   \
     ::courier::gpu::kv_cache_view cache, ::courier::gpu::tensor_view q_out),                   \
    (qkv, num_q_heads, num_kv_heads, head_dim, q_norm, k_norm, eps, positions, inv_freq,        \
     slot_mapping, cache, q_out))                                                               \
  X(plan_attention, (const ::courier::gpu::attention_batch& batch, std::int32_t num_q_heads,    \
                     std::int32_t num_kv_heads, std::int32_t head_dim),                         \
    (batch, num_q_heads, num_kv_heads, head_dim))                                               \
  X(attention, (::courier::gpu::tensor_view q, ::courier::gpu::kv_cache_view cache,             \
                const ::courier::gpu::attention_batch& batch, float scale,                      \
                ::courier::gpu::tensor_view out),                                               \
    (q, cache, batch, scale, out))                                                              \
  X(silu_mul, (::courier::gpu::tensor_view gate_up, ::courier::gpu::tensor_view out),           \
    (gate_up, out))                                                                             \
  X(gather_rows, (::courier::gpu::tensor_view x, const std::int32_t* rows,                      \
                  ::courier::gpu::tensor_view out),                                             \
    (x, rows, out))                                                                             \
  X(copy_tokens, (const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,    \
                  const std::int32_t* dst_index, std::int32_t n),                               \
    (src, src_index, dst, dst_index, n))                                                        \
  X(mamba_conv1d,                                                                               \
    (::courier::gpu::tensor_view in, std::int64_t col_begin, ::courier::gpu::tensor_view w,     \
     ::courier::gpu::tensor_view bias, float* states, const ::courier::gpu::mamba_batch& batch, \
     ::courier::gpu::tensor_view out),                                                          \
    (in, col_begin, w, bias, states, batch, out))                                               \
  X(mamba_scan,                                                                                 \
    (::courier::gpu::tensor_view xbc, ::courier::gpu::tensor_view proj, std::int64_t dt_col,    \
     ::courier::gpu::tensor_view A_log, ::courier::gpu::tensor_view dt_bias,                    \
     ::courier::gpu::tensor_view D, const ::courier::gpu::mamba_shape& shape, float* states,    \
     const ::courier::gpu::mamba_batch& batch, ::courier::gpu::tensor_view y),                  \
    (xbc, proj, dt_col, A_log, dt_bias, D, shape, states, batch, y))                            \
  X(gated_rms_norm,                                                                             \
    (::courier::gpu::tensor_view y, ::courier::gpu::tensor_view gate,                           \
     ::courier::gpu::tensor_view w, std::int64_t group, float eps,                              \
     ::courier::gpu::tensor_view out),                                                          \
    (y, gate, w, group, eps, out))                                                              \
  X(gated_square_sums,                                                                          \
    (::courier::gpu::tensor_view y, ::courier::gpu::tensor_view gate, std::int64_t col,         \
     ::courier::gpu::tensor_view sums),                                                         \
    (y, gate, col, sums))                                                                       \
  X(gated_rms_norm_summed,                                                                      \
    (::courier::gpu::tensor_view y, ::courier::gpu::tensor_view gate,                           \
     ::courier::gpu::tensor_view w, ::courier::gpu::tensor_view sums, std::int64_t col,         \
     std::int64_t count, float eps, ::courier::gpu::tensor_view out),                           \
    (y, gate, w, sums, col, count, eps, out))                                                   \
  X(relu2, (::courier::gpu::tensor_view x, ::courier::gpu::tensor_view out), (x, out))          \
  X(lora_apply,                                                                                 \
    (::courier::gpu::tensor_view x, const ::courier::gpu::lora_weights& w,                     \
     const std::int32_t* slots, ::courier::gpu::tensor_view tmp,                                \
     ::courier::gpu::tensor_view out),                                                          \
    (x, w, slots, tmp, out))                                                                    \
  X(select_draft_states,                                                                        \
    (const std::int32_t* sampled, const std::int32_t* ids,                                      \
     const ::courier::gpu::draft_states* rows, std::int32_t n,                                  \
     ::courier::gpu::state_buffer conv, ::courier::gpu::state_buffer ssm),                      \
    (sampled, ids, rows, n, conv, ssm))                                                         \
  X(copy_device, (void* dst, const void* src, std::size_t n), (dst, src, n))                     \
  X(count_penalty_tokens,                                                                       \
    (const std::int32_t* tokens, const std::int32_t* src_index,                                 \
     ::courier::gpu::penalty_token* lists, std::int32_t* lens, const std::int32_t* list_index,  \
     std::int32_t stride, std::int32_t n),                                                      \
    (tokens, src_index, lists, lens, list_index, stride, n))

namespace courier::gpu::detail {

// Each listed op is a member of `device` with exactly the listed parameters.
#define COURIER_CHECK_STREAM_OP(name, params, args)                                       \
  static_assert(std::is_same_v<decltype(&device::name), void(device::*) params>,         \
                "COURIER_STREAM_OPS: " #name " differs from its declaration in device");
COURIER_STREAM_OPS(COURIER_CHECK_STREAM_OP)
#undef COURIER_CHECK_STREAM_OP

}  // namespace courier::gpu::detail
