#include "gpu/cuda_emu/libs/cublaslt_problem.hpp"

#include <algorithm>
#include <vector>

namespace courier::cuda_emu::libs::lt {

namespace {

constexpr std::uint64_t kAlgoMagic = 0x636f75726c74ull;  // marks this library's algorithms

element element_of(std::int32_t t) {
  return t == CUDA_R_32F ? element::f32 : t == CUDA_R_16F ? element::f16 : element::bf16;
}

bool float_type(std::int32_t t) {
  return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF;
}

// cublasLtMatmul's table of supported types for regular (column- or row-major) matrices, its
// CUBLAS_COMPUTE_32F rows: scale type f32; A and B of one type, bf16, f16 or f32; C and D of one
// type, A's or f32 (f32 inputs give f32 only). Other compute types are not emulated.
cublasStatus_t check_types(const problem& p) {
  if (p.op.compute != CUBLAS_COMPUTE_32F && p.op.compute != CUBLAS_COMPUTE_32F_PEDANTIC) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (p.op.scale != CUDA_R_32F || !float_type(p.a.type) || p.b.type != p.a.type ||
      p.c.type != p.d.type || (p.d.type != p.a.type && p.d.type != CUDA_R_32F)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The layout attributes' documented limits: the leading dimension at least the rows (column
// order) or the columns (row order), so that no two elements share memory; orders other than
// COL and ROW (the tiled IMMA ones) are not emulated.
cublasStatus_t check_layout(const layout& l) {
  if (l.order != CUBLASLT_ORDER_COL && l.order != CUBLASLT_ORDER_ROW) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const std::uint64_t least = l.order == CUBLASLT_ORDER_COL ? l.rows : l.cols;
  if (l.ld < 1 || static_cast<std::uint64_t>(l.ld) < least || l.batch_count < 1 ||
      l.batch_stride < 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// op(A) is m x k, op(B) k x n, C and D m x n; C and D share their order and batch size (the
// out-of-place rule), and every matrix has the same batch count.
cublasStatus_t check_shapes(const problem& p) {
  const bool ta = p.op.transa != CUBLAS_OP_N, tb = p.op.transb != CUBLAS_OP_N;
  const std::uint64_t a_rows = ta ? p.a.cols : p.a.rows;
  const std::uint64_t b_rows = tb ? p.b.cols : p.b.rows, b_cols = tb ? p.b.rows : p.b.cols;
  if (a_rows != p.m() || b_rows != p.k() || b_cols != p.n() || p.c.rows != p.d.rows ||
      p.c.cols != p.d.cols || p.c.order != p.d.order) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const std::int32_t batch = p.d.batch_count;
  if (p.a.batch_count != batch || p.b.batch_count != batch || p.c.batch_count != batch) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The descriptor's operation: transposes N, T or C (C is T for real types); TRANSC only N, as
// the header documents; alpha and beta by host or device pointer; the DEFAULT or BIAS epilogue,
// the bias of D's type (the type table's bias column for every row above).
cublasStatus_t check_operation(const problem& p) {
  const auto op_ok = [](std::int32_t t) {
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
  };
  if (!op_ok(p.op.transa) || !op_ok(p.op.transb)) return CUBLAS_STATUS_INVALID_VALUE;
  if (p.op.transc != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (p.op.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
      p.op.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (p.op.epilogue == CUBLASLT_EPILOGUE_DEFAULT) return CUBLAS_STATUS_SUCCESS;
  if (p.op.epilogue != CUBLASLT_EPILOGUE_BIAS) return CUBLAS_STATUS_NOT_SUPPORTED;
  const std::int32_t bias_type = p.op.bias_type == -1 ? p.d.type : p.op.bias_type;
  if (bias_type != p.d.type) return CUBLAS_STATUS_NOT_SUPPORTED;
  return p.op.bias_stride < 0 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

// gather's loop for one element type, element (r, q) at `first + r * rs + q * qs`: the type
// and the layout's order resolved once, not per element (a logits matmul gathers ~10M).
template <element E>
void gather_as(const void* base, std::int64_t first, std::int64_t rs, std::int64_t qs,
               std::uint64_t count, std::uint64_t k, float* out) {
  constexpr std::uint64_t tile = 32;
  for (std::uint64_t r0 = 0; r0 < count; r0 += tile) {
    for (std::uint64_t q0 = 0; q0 < k; q0 += tile) {
      const std::uint64_t r_end = std::min(count, r0 + tile), q_end = std::min(k, q0 + tile);
      for (std::uint64_t r = r0; r < r_end; ++r) {
        const std::int64_t row = first + static_cast<std::int64_t>(r) * rs;
        for (std::uint64_t q = q0; q < q_end; ++q) {
          out[r * k + q] = load(E, base, row + static_cast<std::int64_t>(q) * qs);
        }
      }
    }
  }
}

// Rows of f32 gathered from matrix `l` of batch `b`: row r, column q is X(q, r) when `swapped`,
// else X(r, q): op(A) or op(B) by rows or by columns, as compute_batch walks D; columns
// [from, from + width) of them. In 32 x 32 tiles, so that reads and writes both stay within a
// few cache lines whichever way the source is laid out (a weight read across its columns is a
// transpose).
void gather(const layout& l, const void* base, bool swapped, std::uint64_t count,
            std::uint64_t from, std::uint64_t width, std::int64_t b, float* out) {
  // X(i, j) is at first + i * di + j * dj.
  const std::int64_t first = l.at(0, 0, b);
  const std::int64_t di = l.at(1, 0, b) - first, dj = l.at(0, 1, b) - first;
  const std::int64_t rs = swapped ? dj : di, qs = swapped ? di : dj;
  const std::int64_t at = first + static_cast<std::int64_t>(from) * qs;
  switch (element_of(l.type)) {
    case element::f32: return gather_as<element::f32>(base, at, rs, qs, count, width, out);
    case element::f16: return gather_as<element::f16>(base, at, rs, qs, count, width, out);
    case element::bf16: return gather_as<element::bf16>(base, at, rs, qs, count, width, out);
  }
}

// acc[t] = the sum over q in [from, to) of x[q] * ys[q * width + t] for t < width, each
// product and each addition rounded to f32, over q in order (the library is compiled without
// floating-point contraction, so no FMA merges them): one dot product per output, a line of
// them side by side, which the compiler vectorises across t without reordering any one of them.
void row_sums(const float* x, const float* ys, std::uint64_t width, std::uint64_t from,
              std::uint64_t to, float* acc) {
  std::fill(acc, acc + width, 0.0f);
  for (std::uint64_t q = from; q < to; ++q) {
    const float xq = x[q];
    const float* row = ys + q * width;
    for (std::uint64_t j = 0; j < width; ++j) acc[j] = acc[j] + xq * row[j];
  }
}

// D's elements a line at a time, along its longer side (a logits matmul has 151,936 rows and
// one column): line o holds the sums of row o of xs ([lines][k]) with ys ([k][across]). ys in
// chunks of `across`, gathered as they are used and used by every line before the next: a
// logits matmul's whole ys would be tens of megabytes, a chunk stays in the cache.
void compute_batch(const problem& p, const operands& o, std::int64_t b, float alpha, float beta) {
  const std::uint64_t m = p.m(), n = p.n(), k = p.k();
  const bool by_rows = n >= m;
  const bool ta = p.op.transa != CUBLAS_OP_N, tb = p.op.transb != CUBLAS_OP_N;
  const std::uint64_t lines = by_rows ? m : n, across = by_rows ? n : m;
  // A chunk of ys about 256 KB (k x chunk floats), at most 1024 wide.
  constexpr std::uint64_t most = 1024;
  const std::uint64_t chunk =
      std::clamp<std::uint64_t>(65536 / std::max<std::uint64_t>(k, 1), 16, most);
  std::vector<float> xs(lines * k), ys(k * std::min(chunk, across));
  if (by_rows) {
    gather(p.a, o.a, ta, m, 0, k, b, xs.data());
  } else {
    gather(p.b, o.b, !tb, n, 0, k, b, xs.data());
  }
  const element cd = element_of(p.d.type);
  const bool bias = p.op.epilogue == CUBLASLT_EPILOGUE_BIAS;
  float acc[most], upper[most];
  for (std::uint64_t t0 = 0; t0 < across; t0 += chunk) {
    const std::uint64_t width = std::min(chunk, across - t0);
    if (by_rows) {
      gather(p.b, o.b, tb, k, t0, width, b, ys.data());
    } else {
      gather(p.a, o.a, !ta, k, t0, width, b, ys.data());
    }
    for (std::uint64_t line = 0; line < lines; ++line) {
      const float* x = xs.data() + line * k;
      if (o.algo == 1) {  // the two halves of k summed apart, then added
        row_sums(x, ys.data(), width, 0, k / 2, acc);
        row_sums(x, ys.data(), width, k / 2, k, upper);
        for (std::uint64_t t = 0; t < width; ++t) acc[t] = acc[t] + upper[t];
      } else {
        row_sums(x, ys.data(), width, 0, k, acc);
      }
      for (std::uint64_t t = 0; t < width; ++t) {
        const std::uint64_t i = by_rows ? line : t0 + t, j = by_rows ? t0 + t : line;
        float v = alpha * acc[t];
        // BLAS's rule: with beta zero C is not read (it may hold anything, NaN included).
        if (beta != 0.0f) v = v + beta * load(cd, o.c, p.c.at(i, j, b));
        if (bias) v = v + load(cd, p.op.bias, b * p.op.bias_stride + static_cast<std::int64_t>(i));
        store(cd, o.d, p.d.at(i, j, b), v);
      }
    }
  }
}

}  // namespace

cublasStatus_t check(const problem& p) {
  cublasStatus_t s = check_types(p);
  for (const layout* l : {&p.a, &p.b, &p.c, &p.d}) {
    if (s == CUBLAS_STATUS_SUCCESS) s = check_layout(*l);
  }
  if (s == CUBLAS_STATUS_SUCCESS) s = check_operation(p);
  if (s == CUBLAS_STATUS_SUCCESS) s = check_shapes(p);
  return s;
}

std::size_t span_bytes(const layout& l) {
  if (l.rows == 0 || l.cols == 0) return 0;
  const auto rows = static_cast<std::int64_t>(l.rows), cols = static_cast<std::int64_t>(l.cols);
  const std::int64_t last = (l.batch_count - 1) * l.batch_stride +
                            (l.order == CUBLASLT_ORDER_ROW ? (rows - 1) * l.ld + cols - 1
                                                           : (cols - 1) * l.ld + rows - 1);
  return static_cast<std::size_t>(last + 1) * element_bytes(element_of(l.type));
}

std::size_t bias_span_bytes(const problem& p) {
  if (p.op.epilogue != CUBLASLT_EPILOGUE_BIAS || p.m() == 0) return 0;
  const std::int64_t last =
      (p.d.batch_count - 1) * p.op.bias_stride + static_cast<std::int64_t>(p.m()) - 1;
  return static_cast<std::size_t>(last + 1) * element_bytes(element_of(p.d.type));
}

bool applicable(int id, const problem& p) {
  return id == 0 || (id == 1 && p.k() >= 2);
}

std::size_t workspace_need(int id, const problem& p) {
  if (id == 0) return 0;
  return static_cast<std::size_t>(p.m() * p.n()) * sizeof(float) *
         static_cast<std::size_t>(p.d.batch_count);
}

cublasLtMatmulAlgo_t encode_algo(int id) {
  cublasLtMatmulAlgo_t algo{};
  algo.data[0] = kAlgoMagic;
  algo.data[1] = static_cast<std::uint64_t>(id);
  return algo;
}

int decode_algo(const cublasLtMatmulAlgo_t& algo) {
  if (algo.data[0] != kAlgoMagic || algo.data[1] >= kAlgorithms) return -1;
  return static_cast<int>(algo.data[1]);
}

void compute(const problem& p, const operands& o) {
  const bool device = p.op.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
  const float alpha = device ? *o.alpha_ptr : o.alpha;
  const float beta = device ? *o.beta_ptr : o.beta;
  for (std::int64_t b = 0; b < p.d.batch_count; ++b) compute_batch(p, o, b, alpha, beta);
}

}  // namespace courier::cuda_emu::libs::lt
