#include "gpu/model/mamba_states.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace courier::model {

mamba_states::mamba_states(gpu::device& dev, const mamba_config& shard, std::int32_t layers)
    : dev_(dev), mc_(shard), layers_(layers) {}

std::size_t mamba_states::conv_floats() const {
  return static_cast<std::size_t>(mc_.conv_dim()) * static_cast<std::size_t>(mc_.conv_kernel - 1);
}

std::size_t mamba_states::ssm_floats() const {
  return static_cast<std::size_t>(mc_.num_heads) * static_cast<std::size_t>(mc_.head_dim) *
         static_cast<std::size_t>(mc_.state_size);
}

std::size_t mamba_states::bytes_per_row() const {
  return static_cast<std::size_t>(layers_) * (conv_floats() + ssm_floats()) * sizeof(float);
}

void mamba_states::ensure(std::int32_t rows) {
  if (rows <= rows_) return;
  const auto layers = static_cast<std::size_t>(layers_);
  const auto n = static_cast<std::size_t>(rows);
  conv_ = dev_.allocate(layers * n * conv_floats() * sizeof(float));
  ssm_ = dev_.allocate(layers * n * ssm_floats() * sizeof(float));
  rows_ = rows;
}

std::size_t mamba_states::reserve(std::int32_t rows, std::int32_t draft_rows, bool pad_row) {
  if (rows < 0 || draft_rows < 0 || rows_ > 0) {
    throw std::invalid_argument("reserve_states: negative rows, or rows already allocated");
  }
  ensure(rows + draft_rows + (pad_row ? 1 : 0));
  draft_rows_ = draft_rows;
  pad_row_ = pad_row ? rows + draft_rows : -1;
  reserved_ = true;
  return conv_.size_bytes() + ssm_.size_bytes();
}

std::size_t mamba_states::reserve_host(std::int32_t rows) {
  if (rows <= 0) return 0;
  const std::size_t bytes = static_cast<std::size_t>(rows) * bytes_per_row();
  host_ = dev_.allocate_host(bytes);
  host_rows_ = rows;
  return bytes;
}

void mamba_states::copy(std::int32_t src, std::int32_t dst) {
  const std::size_t c = conv_floats(), s = ssm_floats();
  for (std::int32_t l = 0; l < layers_; ++l) {
    dev_.copy_device(conv(l) + static_cast<std::size_t>(dst) * c,
                     conv(l) + static_cast<std::size_t>(src) * c, c * sizeof(float));
    dev_.copy_device(ssm(l) + static_cast<std::size_t>(dst) * s,
                     ssm(l) + static_cast<std::size_t>(src) * s, s * sizeof(float));
  }
}

void mamba_states::copy_host(std::int32_t row, std::int32_t host_row, bool to_host) {
  if (host_row < 0 || host_row >= host_rows_ || row < 0 || row >= rows_) {
    throw std::invalid_argument("forward batch: a state copy between row " + std::to_string(row) +
                                " and host row " + std::to_string(host_row) + " is out of range (" +
                                std::to_string(rows_) + " rows, " + std::to_string(host_rows_) +
                                " host rows)");
  }
  const std::size_t c = conv_floats(), s = ssm_floats();
  float* host = static_cast<float*>(host_.get()) +
                static_cast<std::size_t>(host_row) * (bytes_per_row() / sizeof(float));
  for (std::int32_t l = 0; l < layers_; ++l) {
    float* cv = conv(l) + static_cast<std::size_t>(row) * c;
    float* sv = ssm(l) + static_cast<std::size_t>(row) * s;
    if (to_host) {
      dev_.copy_device(host, cv, c * sizeof(float));
      dev_.copy_device(host + c, sv, s * sizeof(float));
    } else {
      dev_.copy_device(cv, host, c * sizeof(float));
      dev_.copy_device(sv, host + c, s * sizeof(float));
    }
    host += c + s;
  }
}

void mamba_states::before(const forward_batch& batch) {
  if (layers_ == 0) return;
  std::int32_t top = 0;  // rows grow to the batch's when not reserved (validated when they are)
  for (const forward_row& row : batch.rows) {
    top = std::max({top, row.state_slot + 1, row.state_restore + 1, row.state_snapshot + 1});
  }
  ensure(top);
  for (const state_copy& c : batch.state_copies) copy_host(c.row, c.host_row, c.to_host);
  for (const forward_row& row : batch.rows) {
    if (row.state_restore >= 0) copy(row.state_restore, row.state_slot);
  }
}

void mamba_states::after(const forward_batch& batch) {
  if (layers_ == 0) return;
  for (const forward_row& row : batch.rows) {
    if (row.state_snapshot >= 0) copy(row.state_slot, row.state_snapshot);
  }
}

float* mamba_states::conv(std::int32_t layer) const {
  return static_cast<float*>(conv_.data()) +
         static_cast<std::size_t>(layer) * static_cast<std::size_t>(rows_) * conv_floats();
}

float* mamba_states::ssm(std::int32_t layer) const {
  return static_cast<float*>(ssm_.data()) +
         static_cast<std::size_t>(layer) * static_cast<std::size_t>(rows_) * ssm_floats();
}

gpu::state_buffer mamba_states::conv_buffer() const {
  const auto row = static_cast<std::int64_t>(conv_floats());
  return {conv(0), row, row * rows_, layers_};
}

gpu::state_buffer mamba_states::ssm_buffer() const {
  const auto row = static_cast<std::int64_t>(ssm_floats());
  return {ssm(0), row, row * rows_, layers_};
}

}  // namespace courier::model
