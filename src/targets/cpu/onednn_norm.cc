// oneDNN normalizations (onednn_kernels.h): Softmax and LayerNormalization.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"

#include <memory>
#include <string>
#include <vector>

#include "targets/cpu/onednn_internal.h"

namespace tessel::cpu {

using dnnl::memory;

std::unique_ptr<FastKernel> MakeOneDnnSoftmax(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || x->shape.empty() || NumElements(x->shape) == 0)
    return nullptr;
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  std::vector<int64_t> dims = x->shape;
  if (opset < 13) {  // softmax over the flattened [axis, rank) as one row
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x->shape[static_cast<size_t>(i)];
    dims = {outer, inner};
    axis = 1;
  }
  const bool single = NumElements(x->shape) < ParallelElements();
  const SingleThreadScope threads(single);
  try {
    const memory::desc md = PlainDesc(dims);
    dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md, static_cast<int>(axis));
    dnnl::softmax_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    return OneDnnUnary::Make<dnnl::softmax_forward::primitive_desc, dnnl::softmax_forward>(
        pd, "onednn softmax", md, md, single);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

namespace {

// LayerNormalization over the flattened [axis, rank): one row per position.
class OneDnnLayerNorm final : public FastKernel {
 public:
  static std::unique_ptr<FastKernel> Make(const ir::Node& node);
  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  std::string Describe() const override { return "onednn layer norm (" + impl_ + ")"; }
  Status Run(ops::KernelContext& ctx) override {
    const SingleThreadScope threads(single_thread_);
    src_.set_data_handle(Mutable(ctx.in(0)));
    scale_.set_data_handle(Mutable(ctx.in(1)));
    if (ctx.has_in(2)) {
      shift_.set_data_handle(Mutable(ctx.in(2)));
    }
    dst_.set_data_handle(ctx.out(0).raw_data());
    primitive_.Execute(ctx);
    return Status::Ok();
  }

 private:
  ScratchList scratch_;
  std::string impl_;
  memory src_, dst_, scale_, shift_, zero_shift_;
  std::vector<float> zeros_;
  BoundPrimitive primitive_;
  bool single_thread_ = false;
};

std::unique_ptr<FastKernel> OneDnnLayerNorm::Make(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* scale = node.input(1);
  const ir::Value* bias = node.input(2);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || !IsFloat32(scale) || (bias && !IsFloat32(bias))) return nullptr;
  if (node.output(1) || node.output(2) || x->shape.empty()) return nullptr;  // Mean, InvStdDev
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = node.attrs.Int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return nullptr;
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : cols) *= x->shape[static_cast<size_t>(i)];
  // Scale and B must cover the normalized axes exactly (no broadcasting).
  if (NumElements(scale->shape) != cols || (bias && NumElements(bias->shape) != cols)) return nullptr;
  if (rows == 0 || cols == 0) return nullptr;
  auto k = std::make_unique<OneDnnLayerNorm>();
  k->single_thread_ = rows * cols < ParallelElements();
  const SingleThreadScope threads(k->single_thread_);
  try {
    const memory::desc md = PlainDesc({rows, cols}), vec = PlainDesc({cols});
    dnnl::layer_normalization_forward::desc desc(
        dnnl::prop_kind::forward_inference, md, node.attrs.Float("epsilon", 1e-5f),
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    k->impl_ = pd.impl_info_str();
    if (k->impl_.rfind("ref", 0) == 0) return nullptr;
    k->src_ = Unbound(md);
    k->dst_ = Unbound(md);
    k->scale_ = Unbound(vec);
    if (bias) {
      k->shift_ = Unbound(vec);
    } else {
      k->zeros_.assign(static_cast<size_t>(cols), 0.f);
      k->shift_ = memory(vec, Engine(), k->zeros_.data());
    }
    k->primitive_.primitive = dnnl::layer_normalization_forward(pd);
    k->primitive_.args = {{DNNL_ARG_SRC, k->src_},
                          {DNNL_ARG_DST, k->dst_},
                          {DNNL_ARG_SCALE, k->scale_},
                          {DNNL_ARG_SHIFT, k->shift_}};
    k->scratch_.AddScratchpad(k->primitive_, pd.scratchpad_desc(), "onednn scratchpad");
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return k;
}

}  // namespace

std::unique_ptr<FastKernel> MakeOneDnnLayerNorm(const ir::Node& node, int opset) {
  return OneDnnLayerNorm::Make(node);
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
