// oneDNN matrix products (onednn_kernels.h): MatMul (batched, numpy
// broadcast), Gemm and tessel's FusedMatMul, all on one kernel, OneDnnMatMul.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ops/strided_view.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"

namespace tessel::cpu {

using dnnl::memory;

namespace {

// dst = src x weights (+ bias), batched with numpy broadcasting over the
// leading dims. Constant weights are packed once.
class OneDnnMatMul final : public FastKernel {
 public:
  struct Operand {
    std::vector<int64_t> dims;        // as oneDNN sees it
    memory::desc plain;               // how tessel (or the packed copy) lays it out
    const float* constant = nullptr;  // set when known at compile time
    int input = -1;                   // else the node input it comes from
  };
  static std::unique_ptr<FastKernel> Make(const Operand& src, const Operand& weights,
                                          const Operand* bias, const std::vector<int64_t>& dst,
                                          bool accumulate = false,
                                          const memory::desc* dst_desc = nullptr);
  static std::unique_ptr<FastKernel> MakeRowsConv(const Operand& src, const Operand& weights,
                                                  const Operand* bias,
                                                  const std::vector<int64_t>& dst,
                                                  const dnnl::primitive_attr& attr);

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kOneDnn,
            .implementation = "matmul",
            .detail = impl_,
            .slow = ReferenceGrade(impl_)};
  }
  int64_t packed_weight_bytes() const override { return weights_pack_.packed_bytes(); }
  void PackWeights() override { weights_pack_.Pack(); }
  std::vector<size_t> packed_inputs() const override {
    return packed_from_constant_ ? std::vector<size_t>{1} : std::vector<size_t>{};
  }

  Status Run(ops::KernelContext& ctx) override {
    const SingleThreadScope threads(single_thread_);
    for (auto& [input, mem] : bound_inputs_) mem.set_data_handle(Mutable(ctx.in(input)));
    float* y = static_cast<float*>(ctx.out(0).raw_data());
    dst_.set_data_handle(y);
    if (addend.input >= 0 || addend.constant) {
      // Y starts as the addend broadcast to M x N; the sum post-op adds to it.
      const float* c = addend.constant ? addend.constant
                                       : ctx.in(static_cast<size_t>(addend.input)).data<float>();
      const int64_t cm = addend.dims[0], cn = addend.dims[1];
      if (cm == rows_ && cn == cols_) {
        // A residual of the output's shape (FusedMatMul): one copy, none
        // when the plan put the output in its buffer.
        if (c != y) std::memcpy(y, c, static_cast<size_t>(rows_ * cols_) * sizeof(float));
      } else {
        for (int64_t i = 0; i < rows_; ++i) {
          for (int64_t j = 0; j < cols_; ++j)
            y[i * cols_ + j] = c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
        }
      }
    }
    matmul_.Execute(ctx);
    return Status::Ok();
  }

  // Gemm's C when it is no bias row: broadcast into the output before the
  // product, which is added to it (sum post-op).
  Operand addend;
  int64_t rows_ = 0, cols_ = 0;
  bool single_thread_ = false;

  // Storage for constants rewritten at build time (scaled by alpha/beta).
  std::vector<std::vector<float>> owned;

 private:
  ScratchList scratch_;
  std::string impl_;

  std::vector<std::pair<size_t, memory>> bound_inputs_;
  WeightPack weights_pack_;
  bool packed_from_constant_ = false;
  memory dst_;
  BoundPrimitive matmul_;
};

// rows x K by constant K x N as a 1x1 convolution over `rows` pixels held
// channels last: the rows' bytes as they are, the weights read transposed
// and packed once; null when oneDNN has no JIT convolution for it.
std::unique_ptr<FastKernel> OneDnnMatMul::MakeRowsConv(const Operand& src, const Operand& weights,
                                                       const Operand* bias,
                                                       const std::vector<int64_t>& dst,
                                                       const dnnl::primitive_attr& attr) {
  const int64_t rows = src.dims[0], k = src.dims[1], n = dst[1];
  using tag = memory::format_tag;
  const memory::desc x({1, k, rows, 1}, memory::data_type::f32, tag::nhwc);
  const memory::desc y({1, n, rows, 1}, memory::data_type::f32, tag::nhwc);
  // W [K, N] (row-major, or transposed: Gemm's transB) is the weights
  // [N, K, 1, 1] at its strides swapped.
  const auto& w_strides = weights.plain.data.format_desc.blocking.strides;
  const memory::desc w_plain({n, k, 1, 1}, memory::data_type::f32,
                             memory::dims{w_strides[1], w_strides[0], 1, 1});
  const memory::desc b_desc = PlainDesc({n});
  using Desc = dnnl::convolution_forward::desc;
  const Desc desc =
      bias ? Desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                  AnyDesc({n, k, 1, 1}), b_desc, y, {1, 1}, {0, 0}, {0, 0})
           : Desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                  AnyDesc({n, k, 1, 1}), y, {1, 1}, {0, 0}, {0, 0});
  dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
  const std::string impl = pd.impl_info_str();
  if (impl.rfind("ref", 0) == 0 || impl.find("gemm") != std::string::npos ||
      !(pd.src_desc() == x) || !(pd.dst_desc() == y)) {
    return nullptr;
  }
  auto kernel = std::make_unique<OneDnnMatMul>();
  kernel->impl_ = impl;
  kernel->single_thread_ = 2.0 * static_cast<double>(rows * n * k) < ParallelFlops();
  kernel->matmul_.primitive = dnnl::convolution_forward(pd);
  memory in = Unbound(x);
  kernel->bound_inputs_.emplace_back(static_cast<size_t>(src.input), in);
  kernel->matmul_.args[DNNL_ARG_SRC] = in;
  kernel->weights_pack_ = WeightPack(weights.constant, w_plain, pd.weights_desc());
  kernel->matmul_.args[DNNL_ARG_WEIGHTS] = kernel->weights_pack_.memory();
  kernel->packed_from_constant_ = true;
  if (bias) {
    if (bias->constant) {
      kernel->matmul_.args[DNNL_ARG_BIAS] =
          memory(b_desc, Engine(), const_cast<float*>(bias->constant));
    } else {
      memory b = Unbound(b_desc);
      kernel->bound_inputs_.emplace_back(static_cast<size_t>(bias->input), b);
      kernel->matmul_.args[DNNL_ARG_BIAS] = b;
    }
  }
  kernel->dst_ = Unbound(y);
  kernel->matmul_.args[DNNL_ARG_DST] = kernel->dst_;
  kernel->scratch_.AddScratchpad(kernel->matmul_, pd.scratchpad_desc(), "onednn scratchpad");
  return kernel;
}

std::unique_ptr<FastKernel> OneDnnMatMul::Make(const Operand& src, const Operand& weights,
                                               const Operand* bias, const std::vector<int64_t>& dst,
                                               bool accumulate, const memory::desc* dst_desc) {
  auto k = std::make_unique<OneDnnMatMul>();
  const double flops =
      2.0 * static_cast<double>(NumElements(dst)) * static_cast<double>(src.dims.back());
  k->single_thread_ = flops < ParallelFlops();
  const SingleThreadScope threads(k->single_thread_);
  try {
    const memory::desc dst_md = dst_desc ? *dst_desc : PlainDesc(dst);
    const memory::desc w_md = weights.constant ? AnyDesc(weights.dims) : weights.plain;
    using Desc = dnnl::matmul::desc;
    const Desc desc =
        bias ? Desc(src.plain, w_md, bias->plain, dst_md) : Desc(src.plain, w_md, dst_md);
    dnnl::primitive_attr attr = UserScratchpad();
    if (accumulate) {
      dnnl::post_ops post_ops;
      post_ops.append_sum(1.f);
      attr.set_post_ops(post_ops);
    }
    dnnl::matmul::primitive_desc pd(desc, attr, Engine());
    k->impl_ = pd.impl_info_str();
    if (k->impl_.rfind("ref", 0) == 0) return nullptr;
    // Where oneDNN 2.6 has no brgemm matmul (AVX2), its jit gemm repacks the
    // weights at every call: a product of rows by constant weights runs as a
    // 1x1 convolution over the rows instead, whose weights are packed once
    // (T5's 64x256 by 256x1024: 635 us -> 192 us at 2 threads).
    if (k->impl_.rfind("gemm", 0) == 0 && weights.constant && !dst_desc && src.dims.size() == 2 &&
        src.plain == PlainDesc(src.dims) && weights.plain.data.format_kind == dnnl_blocked &&
        (!bias || bias->dims[0] == 1)) {
      if (std::unique_ptr<FastKernel> conv = MakeRowsConv(src, weights, bias, dst, attr)) {
        return conv;
      }
    }
    k->matmul_.primitive = dnnl::matmul(pd);
    auto bind = [&](int arg, const Operand& op, const memory::desc& md) {
      if (op.constant) {
        k->matmul_.args[arg] = memory(md, Engine(), const_cast<float*>(op.constant));
      } else {
        memory m = Unbound(md);
        k->bound_inputs_.emplace_back(static_cast<size_t>(op.input), m);
        k->matmul_.args[arg] = m;
      }
    };
    bind(DNNL_ARG_SRC, src, src.plain);
    if (weights.constant && !(pd.weights_desc() == weights.plain)) {
      k->weights_pack_ = WeightPack(weights.constant, weights.plain, pd.weights_desc());
      k->matmul_.args[DNNL_ARG_WEIGHTS] = k->weights_pack_.memory();
      k->packed_from_constant_ = true;
    } else {
      bind(DNNL_ARG_WEIGHTS, weights, weights.plain);
    }
    if (bias) bind(DNNL_ARG_BIAS, *bias, bias->plain);
    k->dst_ = Unbound(dst_md);
    k->matmul_.args[DNNL_ARG_DST] = k->dst_;
    k->scratch_.AddScratchpad(k->matmul_, pd.scratchpad_desc(), "onednn scratchpad");
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return k;
}

const float* ConstantData(const ir::Value* v) {
  return v->is_constant() ? v->constant.data<float>() : nullptr;
}

// `v` (node input `input`) seen as a dense rows x cols matrix.
OneDnnMatMul::Operand MatrixOperand(const ir::Value* v, int input, int64_t rows, int64_t cols) {
  OneDnnMatMul::Operand op{.dims = {rows, cols}, .input = input};
  op.plain = PlainDesc(op.dims);
  op.constant = ConstantData(v);
  return op;
}

}  // namespace

std::unique_ptr<FastKernel> MakeOneDnnMatMul(const ir::Node& node, int opset,
                                             const TransposedOperands& transposed) {
  const ir::Value* a = node.input(0);
  const ir::Value* b = node.input(1);
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!IsFloat32(a) || !IsFloat32(b) || !IsFloat32(y)) return nullptr;
  // Vectors (rank 1) keep the reference kernel; oneDNN needs matrices.
  if (a->shape.size() < 2 || b->shape.size() < 2 || y->shape.size() > 12) return nullptr;
  if (NumElements(y->shape) == 0) return nullptr;
  const bool strided =
      !transposed.inputs[0].empty() || !transposed.inputs[1].empty() || !transposed.output.empty();
  // Weights shared by every batch (no batch dims of their own): the batch
  // folds into the rows, one large product instead of many thin ones.
  const bool b_shared =
      std::all_of(b->shape.begin(), b->shape.end() - 2, [](int64_t d) { return d == 1; });
  if (b_shared && a->shape.size() > 2 && !strided) {
    const int64_t k = a->shape.back(), n = b->shape.back();
    const int64_t rows = NumElements(a->shape) / k;
    return OneDnnMatMul::Make(MatrixOperand(a, 0, rows, k), MatrixOperand(b, 1, k, n), nullptr,
                              {rows, n});
  }
  const size_t rank = y->shape.size();
  auto operand = [&](const ir::Value* v, int input) {
    OneDnnMatMul::Operand op;
    op.dims.assign(rank - v->shape.size(), 1);
    op.dims.insert(op.dims.end(), v->shape.begin(), v->shape.end());
    op.plain = PlainDesc(op.dims);
    const std::vector<int64_t>& perm = transposed.inputs[static_cast<size_t>(input)];
    if (!perm.empty()) {
      memory::dims strides(rank - v->shape.size(), NumElements(v->shape));
      const memory::dims held = ops::TransposedStrides(v->shape, perm, true);
      strides.insert(strides.end(), held.begin(), held.end());
      op.plain = memory::desc(memory::dims(op.dims.begin(), op.dims.end()), memory::data_type::f32,
                              strides);
    }
    op.constant = ConstantData(v);
    op.input = input;
    return op;
  };
  if (transposed.output.empty()) {
    return OneDnnMatMul::Make(operand(a, 0), operand(b, 1), nullptr, y->shape);
  }
  const memory::desc dst(memory::dims(y->shape.begin(), y->shape.end()), memory::data_type::f32,
                         ops::TransposedStrides(y->shape, transposed.output, false));
  return OneDnnMatMul::Make(operand(a, 0), operand(b, 1), nullptr, y->shape, false, &dst);
}

void ReadTransposesStrided(const ir::Graph& graph,
                           std::vector<std::unique_ptr<FastKernel>>& kernels,
                           std::vector<ir::Layout>& layouts) {
  const auto& nodes = graph.nodes();
  const AdjacentTransposes adjacent(graph, kernels, layouts);
  for (size_t j = 0; j < nodes.size(); ++j) {
    const ir::Node& mm = *nodes[j];
    // MatMul, or FusedMatMul (whose weights are constants).
    const bool fused = mm.op_type == "FusedMatMul" && mm.domain == "tessel";
    const bool plain = mm.op_type == "MatMul" && mm.domain.empty() && mm.inputs.size() == 2;
    if (!kernels[j] || !(plain || fused) || mm.inputs[0] == mm.inputs[1] || !mm.output(0)) {
      continue;
    }
    // The Transposes around it: each operand's producer, the result's reader.
    std::array<RelayoutKernel*, 3> around{};
    for (size_t k = 0; k < (fused ? 1u : 2u); ++k) around[k] = adjacent.Producing(mm.inputs[k]);
    const ir::Value* y = mm.output(0);
    around[2] = adjacent.Reading(y);
    auto operands = [&](unsigned mask) {
      TransposedOperands t;
      for (size_t k = 0; k < 2; ++k) {
        if (around[k] && (mask >> k & 1)) t.inputs[k] = around[k]->perm();
      }
      if (around[2] && (mask >> 2 & 1)) t.output = around[2]->perm();
      return t;
    };
    // As many as oneDNN reads and writes so with the implementation it
    // runs the plain product on (another, such as its older jit gemm, is
    // slower and packs into memory of its own): all, else fewer.
    unsigned available = 0;
    for (unsigned k = 0; k < 3; ++k) available |= around[k] ? 1u << k : 0u;
    const std::string plain_impl = kernels[j]->Choice().detail;
    std::unique_ptr<FastKernel> strided;
    unsigned taken = 0;
    for (unsigned mask = available; mask != 0 && !strided; mask = (mask - 1) & available) {
      strided = fused ? MakeOneDnnFusedMatMul(mm, operands(mask))
                      : MakeOneDnnMatMul(mm, graph.opset_version(), operands(mask));
      if (strided && strided->Choice().detail != plain_impl) strided.reset();
      taken = mask;
    }
    if (!strided) continue;
    kernels[j] = std::move(strided);
    for (unsigned k = 0; k < 3; ++k) {
      if (!(taken >> k & 1)) continue;
      const ir::Value* between = k < 2 ? mm.inputs[k] : y;
      around[k]->Relayout(k < 2 ? RelayoutKernel::Mode::kUnpermuted
                                : RelayoutKernel::Mode::kPermuted);
      layouts[static_cast<size_t>(between->id)] =
          k < 2 ? ir::Layout::kUnpermuted : ir::Layout::kPermuted;
    }
  }
}

std::unique_ptr<FastKernel> MakeOneDnnFusedMatMul(const ir::Node& node,
                                                  const TransposedOperands& transposed) {
  const ir::Value* a = node.input(0);
  const ir::Value* w = node.input(1);
  const ir::Value* bias = node.input(2);
  const ir::Value* z = node.input(3);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(a) || !IsFloat32(w) || !IsFloat32(bias) || !IsFloat32(y)) return nullptr;
  if (!w->is_constant() || !bias->is_constant() || w->shape.size() != 2 || a->shape.size() < 2)
    return nullptr;
  if ((z && !IsFloat32(z)) || NumElements(y->shape) == 0) return nullptr;
  const int64_t k = w->shape[0], n = w->shape[1], rows = NumElements(a->shape) / k;
  std::unique_ptr<FastKernel> kernel;
  if (!transposed.inputs[0].empty() || !transposed.output.empty()) {
    // A or Y through permuted strides: batched over A's leading dims, the
    // weights and bias broadcast (a residual goes through a plain output).
    if (z && !transposed.output.empty()) return nullptr;
    const size_t r = a->shape.size();
    OneDnnMatMul::Operand src{.dims = a->shape, .input = 0};
    src.plain =
        transposed.inputs[0].empty()
            ? PlainDesc(a->shape)
            : memory::desc(memory::dims(a->shape.begin(), a->shape.end()), memory::data_type::f32,
                           ops::TransposedStrides(a->shape, transposed.inputs[0], true));
    std::vector<int64_t> w_dims(r - 2, 1), b_dims(r - 1, 1);
    w_dims.insert(w_dims.end(), {k, n});
    b_dims.push_back(n);
    const OneDnnMatMul::Operand weights{
        .dims = w_dims, .plain = PlainDesc(w_dims), .constant = ConstantData(w), .input = 1};
    const OneDnnMatMul::Operand row{
        .dims = b_dims, .plain = PlainDesc(b_dims), .constant = ConstantData(bias), .input = 2};
    const memory::desc dst =
        transposed.output.empty()
            ? PlainDesc(y->shape)
            : memory::desc(memory::dims(y->shape.begin(), y->shape.end()), memory::data_type::f32,
                           ops::TransposedStrides(y->shape, transposed.output, false));
    kernel = OneDnnMatMul::Make(src, weights, &row, y->shape, z != nullptr, &dst);
  } else {
    // One set of weights for every row: A's leading dims fold into the rows.
    const OneDnnMatMul::Operand row = MatrixOperand(bias, 2, 1, n);
    // The residual goes through the output: copied in, then the sum post-op.
    kernel = OneDnnMatMul::Make(MatrixOperand(a, 0, rows, k), MatrixOperand(w, 1, k, n), &row,
                                {rows, n}, z != nullptr);
  }
  if (kernel && z) {
    auto& mm = static_cast<OneDnnMatMul&>(*kernel);
    mm.addend = {.dims = {rows, n}, .plain = PlainDesc({rows, n}), .input = 3};
    mm.rows_ = rows;
    mm.cols_ = n;
  }
  return kernel;
}

std::unique_ptr<FastKernel> MakeOneDnnGemm(const ir::Node& node, int opset) {
  const ir::Value* a = node.input(0);
  const ir::Value* b = node.input(1);
  const ir::Value* c = node.input(2);
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!IsFloat32(a) || !IsFloat32(b) || !IsFloat32(y) || (c && !IsFloat32(c))) return nullptr;
  if (a->shape.size() != 2 || b->shape.size() != 2 || y->shape.size() != 2) return nullptr;
  if (NumElements(y->shape) == 0) return nullptr;
  const float alpha = node.attrs.Float("alpha", 1.f);
  const float beta = node.attrs.Float("beta", 1.f);
  const bool trans_a = node.attrs.Int("transA", 0) != 0;
  const bool trans_b = node.attrs.Int("transB", 0) != 0;
  const int64_t m = y->shape[0], n = y->shape[1];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  // alpha and beta are folded into constant B and C; otherwise they must be 1.
  if ((alpha != 1.f && !b->is_constant()) || (c && beta != 1.f && !c->is_constant()))
    return nullptr;
  if (a->is_constant() && !b->is_constant()) return nullptr;  // keep it simple: A streams

  std::vector<std::vector<float>> owned;
  OneDnnMatMul::Operand src{.dims = {m, k}, .input = 0};
  src.plain = trans_a ? memory::desc({m, k}, memory::data_type::f32, memory::dims{1, m})
                      : PlainDesc({m, k});
  src.constant = ConstantData(a);
  OneDnnMatMul::Operand weights{.dims = {k, n}, .input = 1};
  weights.plain = trans_b ? memory::desc({k, n}, memory::data_type::f32, memory::dims{1, k})
                          : PlainDesc({k, n});
  weights.constant = ConstantData(b);
  if (weights.constant && alpha != 1.f) {
    owned.emplace_back(weights.constant, weights.constant + NumElements(b->shape));
    for (float& v : owned.back()) v *= alpha;
    weights.constant = owned.back().data();
  }
  OneDnnMatMul::Operand bias;
  if (c && beta != 0.f) {
    bias.dims = {1, 1};
    if (c->shape.size() == 1) bias.dims = {1, c->shape[0]};
    if (c->shape.size() == 2) bias.dims = {c->shape[0], c->shape[1]};
    if (c->shape.size() > 2) return nullptr;
    bias.plain = PlainDesc(bias.dims);
    bias.constant = ConstantData(c);
    bias.input = 2;
    if (bias.constant && beta != 1.f) {
      owned.emplace_back(bias.constant, bias.constant + NumElements(c->shape));
      for (float& v : owned.back()) v *= beta;
      bias.constant = owned.back().data();
    }
  }
  // A bias row goes to the primitive; any other C shape is added through
  // the output (oneDNN's matmul takes no other bias broadcast here).
  const bool has_c = c && beta != 0.f;
  const bool row = has_c && bias.dims[0] == 1 && bias.dims[1] == n;
  auto kernel = OneDnnMatMul::Make(src, weights, row ? &bias : nullptr, {m, n}, has_c && !row);
  if (!kernel) return nullptr;
  auto& mm = static_cast<OneDnnMatMul&>(*kernel);
  mm.owned = std::move(owned);
  if (has_c && !row) {
    mm.addend = bias;
    mm.rows_ = m;
    mm.cols_ = n;
  }
  return kernel;
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
