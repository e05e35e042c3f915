#pragma once
// A hybrid model's per-sequence Mamba-2 states on the device: every Mamba-2 layer's conv and SSM
// state, one row per sequence, snapshot, draft and graph-padding slot (forward_row::state_slot,
// state_restore, state_snapshot), and the host tier behind them (forward_batch::state_copies).
// Internal to llama_model, which owns one (no rows for a model without Mamba-2 layers).
//
// Row layout: [0, rows()) the sequences' and snapshots'; then draft_rows() rows, where a step's
// draft-verifying rows keep the state after each draft position; then, with graphs on, one
// padding row (pad_row()) that decode graphs' padding rows run on.
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/mamba.hpp"
#include "gpu/model/forward_batch.hpp"
#include "gpu/model/model_config.hpp"

namespace courier::model {

class mamba_states {
 public:
  // `shard`: this rank's Mamba-2 heads and groups; `layers`: the model's Mamba-2 layers.
  mamba_states(gpu::device& dev, const mamba_config& shard, std::int32_t layers);

  std::size_t bytes_per_row() const;  // every layer's conv then SSM state, f32

  // Allocates `rows`, then `draft_rows`, then a padding row when `pad_row`; returns their bytes.
  // Once reserved, a row past rows() is an error (reserved()). Throws std::invalid_argument on
  // negative counts or a second call.
  std::size_t reserve(std::int32_t rows, std::int32_t draft_rows, bool pad_row);
  // Grows to `rows` rows in all when fewer are allocated (what tests and generate_one do
  // without reserve()); growing loses what the rows held.
  void ensure(std::int32_t rows);
  bool reserved() const { return reserved_; }
  std::int32_t rows() const { return rows_ - draft_rows_ - (pad_row_ >= 0 ? 1 : 0); }
  std::int32_t draft_rows() const { return draft_rows_; }
  std::int32_t pad_row() const { return pad_row_; }  // -1: none

  // The host tier: `rows` rows of bytes_per_row() in host memory; returns their bytes.
  std::size_t reserve_host(std::int32_t rows);
  std::int32_t host_rows() const { return host_rows_; }

  // In stream order. copy: row src to row dst. copy_host: row to host row (to_host), or back;
  // std::invalid_argument when either is out of range.
  void copy(std::int32_t src, std::int32_t dst);
  void copy_host(std::int32_t row, std::int32_t host_row, bool to_host);
  // A step's copies around its body: the rows grown to the batch's (ensure), the batch's
  // host-tier copies and the rows' restores before, the rows' snapshots after. Nothing without
  // Mamba-2 layers (validate refuses such a batch's state copies and rows).
  void before(const forward_batch& batch);
  void after(const forward_batch& batch);

  float* conv(std::int32_t layer) const;  // [rows, conv_dim, K - 1]
  float* ssm(std::int32_t layer) const;   // [rows, heads, head_dim, state_size]
  gpu::state_buffer conv_buffer() const;  // every layer's, for select_draft_states
  gpu::state_buffer ssm_buffer() const;

 private:
  std::size_t conv_floats() const;  // one row of one layer
  std::size_t ssm_floats() const;

  gpu::device& dev_;
  mamba_config mc_;
  std::int32_t layers_ = 0;
  gpu::device_buffer conv_, ssm_;  // layer by layer, rows_ rows each
  std::int32_t rows_ = 0;          // every row, draft and padding rows included
  std::int32_t draft_rows_ = 0;
  std::int32_t pad_row_ = -1;
  bool reserved_ = false;
  std::shared_ptr<void> host_;  // host_rows_ rows, each every layer's conv then SSM state
  std::int32_t host_rows_ = 0;
};

}  // namespace courier::model
