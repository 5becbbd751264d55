// oneDNN convolutions (onednn_kernels.h): Conv and tessel's FusedConv, by
// Winograd where a blocked graph allows it; the activation layout a graph's
// convolutions choose, and the negotiation that lets them and the
// layout-indifferent kernels exchange tensors in it.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/fused_activation.h"
#include "ops/nn_internal.h"
#include "snippets/lower.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/onednn_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

using dnnl::memory;

namespace {

// A 2D convolution that oneDNN's Winograd kernels take: 3x3, stride 1,
// dilation 1, no groups, input and output channels by 16 (nChw16c).
bool WinogradShape(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  if (!x || !w || x->shape.size() != 4 || w->shape.size() != 4) return false;
  if (w->shape[2] != 3 || w->shape[3] != 3 || node.attrs.Int("group", 1) != 1) return false;
  // oneDNN's Winograd kernels take a sum and a relu as post-ops, not the
  // smooth activations (EfficientNetV2's fused Swish): such a conv runs
  // direct, and should not pull the graph into blocks.
  const StatusOr<ops::FusedActivation> activation = ops::ParseFusedActivation(node);
  if (!activation.ok() || (activation->kind != ops::ActivationKind::kNone &&
                           activation->kind != ops::ActivationKind::kRelu)) {
    return false;
  }
  for (const char* attr : {"strides", "dilations"}) {
    for (int64_t v : node.attrs.Ints(attr)) {
      if (v != 1) return false;
    }
  }
  return x->shape[1] % 16 == 0 && w->shape[0] % 16 == 0;
}

using ConvDesc = dnnl::convolution_forward::desc;
using ConvPd = dnnl::convolution_forward::primitive_desc;

// oneDNN's Winograd convolution for `desc`, or nullopt when it has none.
// Of its two on AVX-512, F(4x4, 3x3) ("wino_4x3") does 4 times fewer
// multiplications than direct, F(2x2, 3x3) 2.25 times. Alone, one thread,
// against direct (brgconv) on SqueezeNet's shapes, 4x3 takes 0.50-0.64 of
// the time and 2x3 0.58-0.89; in the whole model both save about 10%, but
// 4x3's scratchpad is 7-9 MiB (2x3: 0.2-2 MiB) and its packed weights 4
// times the originals (2x3: 1.8), which puts SqueezeNet's peak RSS 9 MiB
// higher. 2x3 it is, unless the CPU target's winograd option says 4x3.
std::optional<ConvPd> WinogradConv(const ConvDesc& desc, const dnnl::primitive_attr& attr) {
  const std::string variant = ActiveOptions().winograd == Winograd::k4x3 ? "wino_4x3" : "wino_2x3";
  try {
    ConvPd pd(desc, attr, Engine());
    do {
      if (std::string(pd.impl_info_str()).find(variant) != std::string::npos) return pd;
    } while (pd.next_impl());
    return ConvPd(desc, attr, Engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

class OneDnnConv final : public FastKernel {
 public:
  // Null when oneDNN does not take this node.
  static std::unique_ptr<FastKernel> Make(const ir::Node& node, ActivationLayout layout);

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  // "onednn conv (brgconv:avx512_core) direct x,y": the variant names the
  // tensors layout negotiation lets it exchange in its own layout, without
  // a reorder.
  ir::KernelChoice Choice() const override {
    std::string direct;
    for (const auto& [on, name] : {std::pair{src_direct_, "x"}, std::pair{dst_direct_, "y"},
                                   std::pair{residual_direct_, "residual"}}) {
      if (on) direct += (direct.empty() ? "direct " : ",") + std::string(name);
    }
    return {.family = ir::KernelFamily::kOneDnn,
            .implementation = winograd_ ? "winograd conv" : "conv",
            .variant = direct,
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
    void* out = ctx.out(0).raw_data();
    if (src_buffer_ < 0) {
      src_user_.set_data_handle(Mutable(ctx.in(0)));
    } else if (src_direct_) {
      src_kernel_.set_data_handle(Mutable(ctx.in(0)));
    } else {
      src_user_.set_data_handle(Mutable(ctx.in(0)));
      src_kernel_.set_data_handle(ctx.scratch[static_cast<size_t>(src_buffer_)]);
      src_reorder_.Execute(ctx);
    }
    void* dst = out;
    if (dst_buffer_ >= 0 && !dst_direct_) {
      dst = ctx.scratch[static_cast<size_t>(dst_buffer_)];
      dst_user_.set_data_handle(out);
    }
    dst_kernel_.set_data_handle(dst);
    if (residual_input_ >= 0) {
      // The sum post-op adds what dst holds: the residual, in dst's layout.
      const Tensor& z = ctx.in(static_cast<size_t>(residual_input_));
      if (dst_buffer_ >= 0 && !residual_direct_) {
        residual_user_.set_data_handle(Mutable(z));
        residual_reorder_.Execute(ctx);
      } else if (z.raw_data() != dst) {
        std::memcpy(dst, z.raw_data(), z.size_bytes());
      }
    }
    conv_.Execute(ctx);
    if (dst_buffer_ >= 0 && !dst_direct_) dst_reorder_.Execute(ctx);
    return Status::Ok();
  }

 private:
  ScratchList scratch_;
  std::string impl_;
  bool winograd_ = false;
  memory src_user_, src_kernel_, dst_user_, dst_kernel_, residual_user_, weights_, bias_;
  int src_buffer_ = -1, dst_buffer_ = -1, residual_input_ = -1;
  WeightPack weights_pack_;
  bool packed_from_constant_ = false;
  // Set by NegotiateOneDnnLayouts: the input, the output, the residual
  // arrive or leave in the kernel's own layout (no reorder).
  bool src_direct_ = false, dst_direct_ = false, residual_direct_ = false;
  bool single_thread_ = false;
  friend std::vector<bool> tessel::cpu::NegotiateOneDnnLayouts(
      const ir::Graph&, std::vector<std::unique_ptr<FastKernel>>&, ActivationLayout);
  BoundPrimitive conv_, src_reorder_, dst_reorder_, residual_reorder_;
};

std::unique_ptr<FastKernel> OneDnnConv::Make(const ir::Node& node, ActivationLayout layout) {
  const bool fused = node.domain == "tessel" && node.op_type == "FusedConv";
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  const ir::Value* b = node.input(2);
  const ir::Value* z = fused ? node.input(3) : nullptr;
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!IsFloat32(x) || !IsFloat32(w) || !IsFloat32(y) || !w->is_constant()) return nullptr;
  if ((b && (!IsFloat32(b) || !b->is_constant())) || (z && !IsFloat32(z))) return nullptr;
  if (x->shape.size() < 3 || x->shape.size() > 5 || node.outputs.size() != 1) return nullptr;
  if (z && z->shape != y->shape) return nullptr;

  const size_t n = x->shape.size() - 2;
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  const std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  if (!ops::ResolveWindow(node, in_spatial, kernel, false, &strides, &dilations, &pads,
                          &out_spatial)
           .ok()) {
    return nullptr;
  }
  const int64_t group = node.attrs.Int("group", 1);
  const int64_t out_channels = w->shape[0];
  std::vector<int64_t> w_dims(w->shape.begin(), w->shape.end());
  if (group > 1) {
    w_dims[0] = out_channels / group;
    w_dims.insert(w_dims.begin(), group);
  }
  memory::dims dilates(n), pad_l(n), pad_r(n);
  for (size_t i = 0; i < n; ++i) {
    dilates[i] = dilations[i] - 1;
    pad_l[i] = pads[i];
    pad_r[i] = pads[i + n];
  }

  dnnl::primitive_attr attr = UserScratchpad();
  dnnl::post_ops post_ops;
  if (z) post_ops.append_sum(1.f);
  ops::FusedActivation activation;
  if (fused) {
    StatusOr<ops::FusedActivation> parsed = ops::ParseFusedActivation(node);
    if (!parsed.ok()) return nullptr;
    activation = *parsed;
  }
  // oneDNN's eltwise alpha and beta; clip's are its bounds, as ours.
  const float alpha = activation.alpha, beta = activation.beta;
  switch (activation.kind) {
    case ops::ActivationKind::kNone:
      break;
    case ops::ActivationKind::kRelu:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      break;
    case ops::ActivationKind::kClip:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, alpha, beta);
      break;
    case ops::ActivationKind::kLeakyRelu:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, alpha, 0.f);
      break;
    case ops::ActivationKind::kSigmoid:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
      break;
    case ops::ActivationKind::kSwish:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
      break;
    case ops::ActivationKind::kHardSwish:
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 0.f, 0.f);
      break;
    case ops::ActivationKind::kHardSigmoid:
      // alpha * v + beta, clipped to [0, 1] (oneDNN 2.6 has no hardsigmoid).
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, alpha, beta);
      post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 1.f);
      break;
  }
  attr.set_post_ops(post_ops);

  auto k = std::make_unique<OneDnnConv>();
  const double flops = 2.0 * static_cast<double>(NumElements(y->shape)) *
                       static_cast<double>(NumElements(w->shape) / out_channels);
  k->single_thread_ = flops < ParallelFlops();
  const SingleThreadScope threads(k->single_thread_);
  // In a blocked graph, activations whose channels allow it are nChw16c;
  // else oneDNN picks (channels last on AVX-512).
  const bool blocked = layout == ActivationLayout::kBlocked16 && n == 2 && group == 1;
  auto activation_desc = [&](const std::vector<int64_t>& dims) {
    const memory::desc want = blocked ? Blocked16Desc(dims) : memory::desc();
    return want.is_zero() ? AnyDesc(dims) : want;
  };
  try {
    const memory::desc src_any = activation_desc(x->shape), dst_any = activation_desc(y->shape),
                       w_any = AnyDesc(w_dims);
    const memory::dims stride_dims(strides.begin(), strides.end());
    auto desc = [&](dnnl::algorithm algorithm) {
      return b ? ConvDesc(dnnl::prop_kind::forward_inference, algorithm, src_any, w_any,
                          PlainDesc({out_channels}), dst_any, stride_dims, dilates, pad_l, pad_r)
               : ConvDesc(dnnl::prop_kind::forward_inference, algorithm, src_any, w_any, dst_any,
                          stride_dims, dilates, pad_l, pad_r);
    };
    std::optional<ConvPd> winograd;
    if (blocked && WinogradShape(node)) {
      winograd = WinogradConv(desc(dnnl::algorithm::convolution_winograd), attr);
    }
    // A channels-last graph asks for nhwc by name where oneDNN has a JIT
    // kernel for it: left to pick ("any"), oneDNN 2.6 on AVX2 picks nChw8c,
    // which no neighbour exchanges, so every conv would reorder its input
    // and output.
    std::optional<ConvPd> nhwc;
    if (!winograd && layout == ActivationLayout::kChannelsLast) {
      const memory::desc src_nhwc = LayoutDesc(x->shape, layout),
                         dst_nhwc = LayoutDesc(y->shape, layout);
      try {
        ConvPd p(
            b ? ConvDesc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                         src_nhwc, w_any, PlainDesc({out_channels}), dst_nhwc, stride_dims, dilates,
                         pad_l, pad_r)
              : ConvDesc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                         src_nhwc, w_any, dst_nhwc, stride_dims, dilates, pad_l, pad_r),
            attr, Engine());
        const std::string impl = p.impl_info_str();
        // Not the reference, and not im2col + GEMM ("x64:gemm:jit", what
        // oneDNN 2.6 runs a dilated nhwc conv on AVX2 with: 15x slower than
        // its nChw8c kernel on DeepLabV3's ASPP).
        if (impl.rfind("ref", 0) != 0 && impl.find("gemm") == std::string::npos) nhwc = p;
      } catch (const dnnl::error&) {
      }
    }
    const ConvPd pd = winograd ? *winograd
                      : nhwc   ? *nhwc
                               : ConvPd(desc(dnnl::algorithm::convolution_direct), attr, Engine());
    k->impl_ = pd.impl_info_str();
    k->winograd_ = winograd.has_value();
    if (k->impl_.rfind("ref", 0) == 0) return nullptr;  // no faster than ours

    const memory::desc w_plain = PlainDesc(w_dims);
    if (pd.weights_desc() == w_plain) {
      k->weights_ = memory(w_plain, Engine(), Mutable(w->constant));
    } else {
      k->weights_pack_ = WeightPack(w->constant.raw_data(), w_plain, pd.weights_desc());
      k->weights_ = k->weights_pack_.memory();
      k->packed_from_constant_ = true;
    }
    k->src_user_ = Unbound(PlainDesc(x->shape));
    k->dst_user_ = Unbound(PlainDesc(y->shape));
    if (pd.src_desc() == k->src_user_.get_desc()) {
      k->src_kernel_ = k->src_user_;
    } else {
      k->src_kernel_ = Unbound(pd.src_desc());
      k->src_buffer_ = k->scratch_.Add("input in kernel layout", pd.src_desc().get_size());
      k->src_reorder_ = MakeReorder(k->src_user_, k->src_kernel_, k->scratch_, "input reorder");
    }
    if (pd.dst_desc() == k->dst_user_.get_desc()) {
      k->dst_kernel_ = k->dst_user_;
    } else {
      k->dst_kernel_ = Unbound(pd.dst_desc());
      k->dst_buffer_ = k->scratch_.Add("output in kernel layout", pd.dst_desc().get_size());
      k->dst_reorder_ = MakeReorder(k->dst_kernel_, k->dst_user_, k->scratch_, "output reorder");
    }
    if (z) {
      k->residual_input_ = 3;
      if (k->dst_buffer_ >= 0) {
        k->residual_user_ = Unbound(PlainDesc(z->shape));
        k->residual_reorder_ =
            MakeReorder(k->residual_user_, k->dst_kernel_, k->scratch_, "residual reorder");
      }
    }
    k->conv_.primitive = dnnl::convolution_forward(pd);
    k->conv_.args = {{DNNL_ARG_SRC, k->src_kernel_},
                     {DNNL_ARG_WEIGHTS, k->weights_},
                     {DNNL_ARG_DST, k->dst_kernel_}};
    if (b) {
      k->bias_ = memory(PlainDesc({out_channels}), Engine(), Mutable(b->constant));
      k->conv_.args[DNNL_ARG_BIAS] = k->bias_;
    }
    k->scratch_.AddScratchpad(k->conv_, pd.scratchpad_desc(), "onednn scratchpad");
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return k;
}

}  // namespace

std::vector<bool> NegotiateOneDnnLayouts(const ir::Graph& graph,
                                         std::vector<std::unique_ptr<FastKernel>>& kernels,
                                         ActivationLayout layout) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const ir::Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].get()] = i;
  const std::vector<std::vector<ir::Node*>> consumers = graph.Consumers();
  std::vector<bool> is_output(graph.values().size(), false);
  for (const ir::Value* v : graph.outputs()) is_output[static_cast<size_t>(v->id)] = true;
  auto conv_at = [&](size_t i) { return dynamic_cast<OneDnnConv*>(kernels[i].get()); };
  auto flex_at = [&](size_t i) { return dynamic_cast<LayoutFlexibleKernel*>(kernels[i].get()); };
  auto relayout_at = [&](size_t i) { return dynamic_cast<RelayoutKernel*>(kernels[i].get()); };
  auto id_of = [](const ir::Value* v) { return static_cast<size_t>(v->id); };

  // Candidates: outputs that a convolution computes in the graph's layout,
  // that a layout-indifferent kernel could (all its outputs or none), or
  // that a relayout allowed to (`writes`) holds so. Then drop, until nothing
  // changes, every candidate with a reader that cannot take it so, and every
  // flexible kernel's outputs when one of its inputs is not in that layout
  // or one of its outputs was dropped (such a kernel runs all in the graph's
  // layout or all plain). A relayout reads a tensor in the layout only when
  // its own output is plain (it is then that tensor's bytes).
  // A tensor of one pixel per channel (of channels by 16 when blocked) has
  // the same bytes in the graph's layout as plain: any reader takes it
  // either way (a conv that wants another layout reorders it as if it were
  // plain). Tensors of one channel are never held in the graph's layout.
  auto same_bytes = [&](const ir::Value* v) {
    return v->shape.size() >= 3 && !LayoutDesc(v->shape, layout).is_zero() &&
           snippets::SameAsPlain(v->shape, v->shape.size(),
                                 layout == ActivationLayout::kBlocked16
                                     ? snippets::ArgLayout::kBlocked16
                                     : snippets::ArgLayout::kChannelsLast);
  };
  auto solve = [&](const std::vector<bool>& writes) {
    std::vector<bool> direct(graph.values().size(), false);
    auto outputs_direct = [&](const ir::Node& node, bool value) {
      for (const ir::Value* y : node.outputs) direct[id_of(y)] = value;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      const ir::Node& node = *nodes[i];
      bool candidate = !node.outputs.empty();
      for (const ir::Value* y : node.outputs) {
        // A graph output stays plain, unless that is the same bytes.
        candidate = candidate && y && !LayoutDesc(y->shape, layout).is_zero() &&
                    (!is_output[id_of(y)] || same_bytes(y));
      }
      if (!candidate) continue;
      if (OneDnnConv* c = conv_at(i)) {
        const ir::Value* y = node.outputs[0];
        direct[id_of(y)] =
            c->dst_buffer_ >= 0 && c->dst_kernel_.get_desc() == LayoutDesc(y->shape, layout);
      } else if (LayoutFlexibleKernel* f = flex_at(i)) {
        outputs_direct(node, f->CanRunIn(layout));
      } else if (relayout_at(i)) {
        outputs_direct(node, writes[i]);
      }
    }
    // Whether every reader of `y` takes it in the graph's layout.
    auto readers_take = [&](const ir::Value* y) {
      if (same_bytes(y)) return true;
      const memory::desc want = LayoutDesc(y->shape, layout);
      for (const ir::Node* r : consumers[id_of(y)]) {
        const size_t j = index.at(r);
        OneDnnConv* c = conv_at(j);
        LayoutFlexibleKernel* f = flex_at(j);
        RelayoutKernel* t = relayout_at(j);
        for (size_t k = 0; k < r->inputs.size(); ++k) {
          if (r->inputs[k] != y) continue;
          bool ok;
          if (c && k == 0) {
            ok = c->src_buffer_ >= 0 && c->src_kernel_.get_desc() == want;
          } else if (c && static_cast<int>(k) == c->residual_input_) {
            ok = c->dst_buffer_ >= 0 && c->dst_kernel_.get_desc() == want;
          } else if (t) {
            ok = k == 0 && !writes[j] && t->CanReadIn(layout);
          } else {
            ok = f != nullptr && (direct[id_of(r->output(0))] || f->TakesEitherLayout(k, layout));
          }
          if (!ok) return false;
        }
      }
      return true;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < nodes.size(); ++i) {
        const ir::Node& node = *nodes[i];
        if (node.outputs.empty() || !node.output(0) || !direct[id_of(node.output(0))]) continue;
        bool ok = true;
        if (LayoutFlexibleKernel* f = flex_at(i)) {
          for (size_t k = 0; k < node.inputs.size(); ++k) {
            const ir::Value* in = node.inputs[k];
            if (!in) continue;  // an omitted input (Resize's roi): nothing to exchange
            ok = ok && (direct[id_of(in)] || same_bytes(in) || f->TakesEitherLayout(k, layout));
          }
        }
        for (const ir::Value* y : node.outputs) ok = ok && readers_take(y);
        if (!ok) {
          outputs_direct(node, false);
          changed = true;
        }
      }
    }
    return direct;
  };
  // First without relayouts writing in the layout, so that one that can
  // read its input so does; then each relayout whose input stayed plain may
  // write its output in the layout, and the kernels after it follow.
  std::vector<bool> writes(nodes.size(), false);
  std::vector<bool> direct = solve(writes);
  bool any = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const RelayoutKernel* t = relayout_at(i);
    writes[i] = t && t->CanWriteIn(layout) && !direct[id_of(nodes[i]->inputs[0])];
    any = any || writes[i];
  }
  if (any) direct = solve(writes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = *nodes[i];
    if (OneDnnConv* c = conv_at(i)) {
      // Direct where the tensor is held in the layout the kernel runs in (a
      // tensor of the same bytes either way may be held in the graph's
      // layout and read by a kernel in another: that one reorders).
      auto held_as = [&](const ir::Value* v, const memory::desc& kernel) {
        return direct[id_of(v)] && kernel == LayoutDesc(v->shape, layout);
      };
      c->src_direct_ = c->src_buffer_ >= 0 && held_as(n.inputs[0], c->src_kernel_.get_desc());
      c->dst_direct_ = direct[id_of(n.outputs[0])];
      c->residual_direct_ =
          c->residual_input_ >= 0 && c->dst_buffer_ >= 0 &&
          held_as(n.inputs[static_cast<size_t>(c->residual_input_)], c->dst_kernel_.get_desc());
      // What a direct exchange no longer reorders through is planned at
      // zero bytes (the needs keep their indices).
      if (c->src_direct_) {
        c->scratch_.Shrink(c->src_buffer_, 0);
        c->scratch_.Shrink(c->src_reorder_.scratch, 0);
      }
      if (c->dst_direct_) {
        c->scratch_.Shrink(c->dst_buffer_, 0);
        c->scratch_.Shrink(c->dst_reorder_.scratch, 0);
      }
      if (c->residual_direct_) c->scratch_.Shrink(c->residual_reorder_.scratch, 0);
    } else if (LayoutFlexibleKernel* f = flex_at(i); f && direct[id_of(n.outputs[0])]) {
      f->RunIn(layout);
    } else if (RelayoutKernel* t = relayout_at(i)) {
      // A tensor of the same bytes either way is read as held.
      t->Relayout(direct[id_of(n.outputs[0])] ? RelayoutKernel::Mode::kWriteIn
                  : direct[id_of(n.inputs[0])] && !same_bytes(n.inputs[0])
                      ? RelayoutKernel::Mode::kReadIn
                      : RelayoutKernel::Mode::kPlain);
    }
  }
  return direct;
}

std::unique_ptr<FastKernel> MakeOneDnnConv(const ir::Node& node, int opset,
                                           ActivationLayout layout) {
  return OneDnnConv::Make(node, layout);
}

ActivationLayout ChooseOneDnnActivationLayout(const ir::Graph& graph) {
  if (ActiveOptions().winograd == Winograd::kOff) return ActivationLayout::kChannelsLast;
  double all = 0, winograd = 0;
  for (const auto& node : graph.nodes()) {
    const bool conv = (node->domain.empty() && node->op_type == "Conv") ||
                      (node->domain == "tessel" && node->op_type == "FusedConv");
    const ir::Value* w = node->input(1);
    const ir::Value* y = node->output(0);
    if (!conv || !IsFloat32(w) || !IsFloat32(y) || w->shape.empty()) continue;
    const double flops = 2.0 * static_cast<double>(NumElements(y->shape)) *
                         static_cast<double>(NumElements(w->shape) / w->shape[0]);
    all += flops;
    if (WinogradShape(*node)) winograd += flops;
  }
  if (winograd == 0 || 3 * winograd < all) return ActivationLayout::kChannelsLast;
  // This CPU has the Winograd kernels when oneDNN makes one for a small case.
  static const bool available = [] {
    const memory::desc x = Blocked16Desc({1, 16, 8, 8});
    const ConvDesc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                        x, AnyDesc({16, 16, 3, 3}), x, {1, 1}, {1, 1}, {1, 1});
    return WinogradConv(desc, dnnl::primitive_attr()).has_value();
  }();
  return available ? ActivationLayout::kBlocked16 : ActivationLayout::kChannelsLast;
}

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
