// oneDNN Concat (onednn_kernels.h), on OneDnnFlexible, so that it runs in
// any activation layout; plain copies where they beat the primitive.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "targets/cpu/native_kernels.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

using dnnl::memory;

namespace {

// Concatenation as rows: output row r is each input's row r, one after
// another (`row_bytes` each). Copied by chunks of about 64 KiB of output
// over the thread pool when `parallel`.
OneDnnFlexible::Copy RowCopy(int64_t rows, std::vector<int64_t> row_bytes, const char* name,
                             bool parallel) {
  int64_t out_row = 0;
  for (int64_t b : row_bytes) out_row += b;
  const int64_t rows_per_chunk =
      std::max<int64_t>(1, (int64_t{64} << 10) / std::max<int64_t>(out_row, 1));
  auto copy = [rows, row_bytes, out_row, rows_per_chunk, parallel](ops::KernelContext& ctx) {
    auto chunk = [&](int64_t c) {
      const int64_t first = c * rows_per_chunk, end = std::min(rows, first + rows_per_chunk);
      char* out = static_cast<char*>(ctx.out(0).raw_data()) + first * out_row;
      for (size_t i = 0; i < row_bytes.size(); ++i) {
        const int64_t b = row_bytes[i];
        CopyRows(out, out_row, static_cast<const char*>(ctx.in(i).raw_data()) + first * b, b, b,
                 end - first);
        out += b;
      }
    };
    const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    if (parallel && chunks > 1) {
      ThreadPool::Current().ParallelFor(chunks, chunk);
    } else {
      for (int64_t c = 0; c < chunks; ++c) chunk(c);
    }
  };
  return {copy, name};
}

}  // namespace

std::unique_ptr<FastKernel> MakeOneDnnConcat(const ir::Node& node, int opset) {
  const ir::Value* y = node.output(0);
  if (!IsFloat32(y) || y->shape.size() < 3 || y->shape.size() > 5 || node.inputs.empty())
    return nullptr;
  const auto rank = static_cast<int64_t>(y->shape.size());
  int64_t axis = node.attrs.Int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Value* in : node.inputs) {
    // Constants never arrive channels last; empty inputs are the reference's.
    if (!IsFloat32(in) || in->is_constant() || NumElements(in->shape) == 0) return nullptr;
    shapes.push_back(in->shape);
  }
  std::vector<int> args;
  for (size_t i = 0; i < shapes.size(); ++i)
    args.push_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i));
  auto build = [axis](const std::vector<memory::desc>& srcs, const memory::desc& dst,
                      memory::desc* scratchpad, std::string* impl) {
    dnnl::concat::primitive_desc pd(dst, static_cast<int>(axis), srcs, Engine(), UserScratchpad());
    *scratchpad = pd.scratchpad_desc();
    *impl = pd.impl_info_str();
    return dnnl::primitive(dnnl::concat(pd));
  };
  auto k = std::make_unique<OneDnnFlexible>("concat", build, args, shapes, y->shape,
                                            NumElements(y->shape) < ParallelElements());
  if (!k->Init()) return nullptr;
  // In the plain layout a concat is one contiguous block per input and
  // outer index: plain copies beat oneDNN's generic concat there.
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= y->shape[static_cast<size_t>(i)];
  // The blocks, cut into pieces of at most 64 KiB that the thread pool
  // copies when the concat is large (SqueezeNet's, nChw16c: two blocks of
  // 0.2-0.8 MiB each).
  struct Piece {
    size_t input;
    int64_t from, to, bytes;  // offsets in the input and the output
  };
  constexpr int64_t kPieceBytes = int64_t{64} << 10;
  std::vector<Piece> pieces;
  for (int64_t o = 0, to = 0; o < outer; ++o) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t block = NumElements(shapes[i]) / outer * 4;
      for (int64_t at = 0; at < block; at += kPieceBytes) {
        const int64_t bytes = std::min(kPieceBytes, block - at);
        pieces.push_back({i, o * block + at, to, bytes});
        to += bytes;
      }
    }
  }
  const bool parallel = NumElements(y->shape) >= ParallelElements();
  auto block_copy = [pieces, parallel](ops::KernelContext& ctx) {
    char* out = static_cast<char*>(ctx.out(0).raw_data());
    auto copy = [&](int64_t p) {
      const Piece& piece = pieces[static_cast<size_t>(p)];
      const char* in = static_cast<const char*>(ctx.in(piece.input).raw_data());
      std::memcpy(out + piece.to, in + piece.from, static_cast<size_t>(piece.bytes));
    };
    const auto n = static_cast<int64_t>(pieces.size());
    if (parallel) {
      ThreadPool::Current().ParallelFor(n, copy);
    } else {
      for (int64_t p = 0; p < n; ++p) copy(p);
    }
  };
  k->plain_run = {block_copy, "block copy"};
  // Small blocks (RoPE's interleaving concat along an axis of 1, 4 bytes a
  // block): a task per block costs far more than its copy; rows instead.
  int64_t smallest = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> block_bytes;
  for (const auto& sh : shapes) {
    block_bytes.push_back(NumElements(sh) / outer * 4);
    smallest = std::min(smallest, block_bytes.back());
  }
  if (smallest < kPieceBytes / 16) k->plain_run = RowCopy(outer, block_bytes, "row copy", parallel);
  if (axis == 1) {
    // nChw16c, along the channels (all by 16): each input is one block per
    // image, as in the plain layout.
    k->blocked16_run = {block_copy, "block copy, nChw16c"};
    // Channels last, along the channels: every pixel's output row is the
    // inputs' rows one after another (measured on SqueezeNet's fire modules
    // at 2 threads: about twice as fast as oneDNN's simple concat there).
    std::vector<int64_t> row_bytes;
    for (const auto& sh : shapes) row_bytes.push_back(sh[1] * 4);
    k->channels_last_run = RowCopy(NumElements(y->shape) / y->shape[1], std::move(row_bytes),
                                   "row copy, channels last", parallel);
  }
  return k;
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
