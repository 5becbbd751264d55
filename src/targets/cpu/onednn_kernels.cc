// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include "targets/cpu/onednn_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

#include "core/check.h"
#include "ops/nn_internal.h"
#include "targets/cpu/options.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

void NegotiateOneDnnLayouts(const ir::Graph& graph,
                            std::vector<std::unique_ptr<FastKernel>>& kernels,
                            ActivationLayout layout);

namespace {

using dnnl::memory;
using Args = std::unordered_map<int, memory>;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One stream per thread: executors on different threads never share one.
dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// A dense row-major float32 descriptor: tessel's layout for every tensor.
memory::desc PlainDesc(const std::vector<int64_t>& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, strides);
}

memory::desc AnyDesc(const std::vector<int64_t>& dims) {
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::any);
}

// Channels last (nwc, nhwc, ndhwc): the layout oneDNN's convolutions pick
// on AVX-512, of the same size as the plain one. Zero desc for other ranks.
memory::desc ChannelsLastDesc(const std::vector<int64_t>& dims) {
  using tag = memory::format_tag;
  const tag t = dims.size() == 3 ? tag::acb : dims.size() == 4 ? tag::acdb
                                            : dims.size() == 5 ? tag::acdeb
                                                               : tag::undef;
  if (t == tag::undef) return memory::desc();
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, t);
}

// nChw16c: what oneDNN's Winograd convolutions take; of the plain size only
// when the channels are a multiple of 16. Zero desc otherwise.
memory::desc Blocked16Desc(const std::vector<int64_t>& dims) {
  if (dims.size() != 4 || dims[1] % 16 != 0) return memory::desc();
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::nChw16c);
}

// How a tensor of these dims flows between kernels in the graph's layout;
// zero desc when it cannot (it stays plain).
memory::desc LayoutDesc(const std::vector<int64_t>& dims, ActivationLayout layout) {
  return layout == ActivationLayout::kBlocked16 ? Blocked16Desc(dims) : ChannelsLastDesc(dims);
}

memory Unbound(const memory::desc& md) { return memory(md, Engine(), DNNL_MEMORY_NONE); }

void* Mutable(const Tensor& t) { return const_cast<void*>(t.raw_data()); }

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool IsFloat32(const ir::Value* v) { return v != nullptr && v->dtype == DType::kFloat32; }

// Kernels below this much work run on the calling thread alone: waking the
// other threads and meeting them at the barrier costs more than they save.
// Measured on the shared models at 2 threads on 2 quiet cores, with threads
// that spin briefly at barriers (tools/tessel/main.cc): 1-4 MFLOP gave the
// lowest medians (MobileNetV2 2.2 ms, 64 MFLOP 3.7 ms: most of its
// convolutions are a few MFLOP). On cores shared with other work a higher
// one is steadier. The CPU target's parallel_min_mflop overrides it.
double ParallelFlops() { return ProcessOptions().parallel_min_mflop * 1e6; }
int64_t ParallelElements() { return static_cast<int64_t>(ParallelFlops() / 256); }

// While alive, oneDNN primitives created or run on this thread use one
// thread when `single` (OpenMP's per-thread thread count; primitives size
// their work split when they are created, so creation and runs both need it).
class SingleThreadScope {
 public:
  explicit SingleThreadScope(bool single) : saved_(single ? omp_get_max_threads() : 0) {
    if (single) omp_set_num_threads(1);
  }
  ~SingleThreadScope() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

 private:
  int saved_;
};

// A primitive with its arguments bound once; Run only points the memories
// at this call's buffers. Its scratchpad, when it has one, is planned
// scratch buffer number `scratch`.
struct BoundPrimitive {
  dnnl::primitive primitive;
  Args args;
  int scratch = -1;
  memory scratchpad;

  void Execute(const ops::KernelContext& ctx) {
    if (scratch >= 0) scratchpad.set_data_handle(ctx.scratch[static_cast<size_t>(scratch)]);
    primitive.execute(Stream(), args);
  }
};

// The scratch a kernel declares, built along with its primitives.
class ScratchList {
 public:
  // The index of a new need, or -1 for an empty one.
  int Add(const std::string& name, size_t size_bytes) {
    if (size_bytes == 0) return -1;
    needs_.push_back({.name = name, .size_bytes = static_cast<int64_t>(size_bytes), .alignment = 64});
    return static_cast<int>(needs_.size() - 1);
  }
  // Binds `p`'s scratchpad (from its primitive descriptor's `md`).
  void AddScratchpad(BoundPrimitive& p, const memory::desc& md, const std::string& name) {
    p.scratch = Add(name, md.get_size());
    if (p.scratch >= 0) {
      p.scratchpad = Unbound(md);
      p.args[DNNL_ARG_SCRATCHPAD] = p.scratchpad;
    }
  }
  // Need `index` (from Add; -1 is ignored) now takes only `size_bytes`, no
  // more than it declared (0: it is not used). It stays in the list, so the
  // indices after it keep their meaning.
  void Shrink(int index, size_t size_bytes) {
    if (index < 0) return;
    ops::ScratchNeed& need = needs_[static_cast<size_t>(index)];
    need.size_bytes = std::min(need.size_bytes, static_cast<int64_t>(size_bytes));
  }
  const std::vector<ops::ScratchNeed>& needs() const { return needs_; }

 private:
  std::vector<ops::ScratchNeed> needs_;
};

BoundPrimitive MakeReorder(const memory& from, const memory& to, ScratchList& scratch,
                           const std::string& name) {
  dnnl::reorder::primitive_desc pd(Engine(), from.get_desc(), Engine(), to.get_desc(),
                                   UserScratchpad());
  BoundPrimitive p{.primitive = dnnl::reorder(pd),
                   .args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  scratch.AddScratchpad(p, pd.scratchpad_desc(), name + " scratchpad");
  return p;
}

// Copies `data` (plain, `from`) into a new memory of layout `to`, once.
// Constant weights packed into a layout, shared by every kernel that packs
// the same bytes into the same layout (models reuse weights across layers).
// Held weakly: a packed copy lives as long as a kernel holds it. Entries are
// keyed by a 64-bit fingerprint of the bytes with both layouts.
class PackCache {
 public:
  // The packed copy of `data` (plain, `from`) in layout `to`; `*created`
  // says whether this call made it.
  std::shared_ptr<memory> Get(const void* data, const memory::desc& from, const memory::desc& to,
                              bool* created) {
    // By content, not address: a constant released after packing may leave
    // its address to another one.
    const uint64_t hash = Fingerprint(data, from.get_size());
    const std::string key =
        std::string(reinterpret_cast<const char*>(&hash), sizeof hash) + Bytes(from) + Bytes(to);
    std::lock_guard<std::mutex> lock(mu_);
    if (std::shared_ptr<memory> packed = packed_[key].lock()) {
      *created = false;
      return packed;
    }
    memory src(from, Engine(), const_cast<void*>(data));
    auto dst = std::make_shared<memory>(to, Engine());
    dnnl::reorder(src, *dst).execute(Stream(), src, *dst);
    Stream().wait();
    packed_[key] = dst;
    *created = true;
    return dst;
  }

  static PackCache& Global() {
    static PackCache* cache = new PackCache();
    return *cache;
  }

 private:
  // FNV-1a over 8-byte words, then the tail bytes.
  static uint64_t Fingerprint(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = 0xcbf29ce484222325ull ^ size;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      h = (h ^ word) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    for (; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
  }
  static std::string Bytes(const memory::desc& md) {
    return std::string(reinterpret_cast<const char*>(&md.data), sizeof md.data);
  }
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<memory>> packed_;
};

// Packs constant weights once (shared through PackCache); `*packed_bytes`
// counts them when this kernel made the copy. Without `pack` (the kernel is
// built only to learn its scratch), nothing is allocated or copied.
memory PackOnce(const void* data, const memory::desc& from, const memory::desc& to, bool pack,
                std::shared_ptr<memory>* keep, int64_t* packed_bytes) {
  if (!pack) return Unbound(to);
  bool created = false;
  *keep = PackCache::Global().Get(data, from, to, &created);
  if (created) *packed_bytes = static_cast<int64_t>(to.get_size());
  return **keep;
}

// ---------------------------------------------------------------- Conv

// A 2D convolution that oneDNN's Winograd kernels take: 3x3, stride 1,
// dilation 1, no groups, input and output channels by 16 (nChw16c).
bool WinogradShape(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* w = node.input(1);
  if (!x || !w || x->shape.size() != 4 || w->shape.size() != 4) return false;
  if (w->shape[2] != 3 || w->shape[3] != 3 || node.attrs.Int("group", 1) != 1) return false;
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
  const std::string variant =
      ProcessOptions().winograd == Winograd::k4x3 ? "wino_4x3" : "wino_2x3";
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
  static std::unique_ptr<FastKernel> Make(const ir::Node& node, ActivationLayout layout, bool pack);

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  std::string Describe() const override { return "onednn conv (" + impl_ + ")"; }
  int64_t packed_weight_bytes() const override { return packed_bytes_; }
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
  int64_t packed_bytes_ = 0;
  memory src_user_, src_kernel_, dst_user_, dst_kernel_, residual_user_, weights_, bias_;
  int src_buffer_ = -1, dst_buffer_ = -1, residual_input_ = -1;
  std::shared_ptr<memory> packed_;  // the packed weights (shared, PackCache)
  bool packed_from_constant_ = false;
  // Set by NegotiateOneDnnLayouts: the input, the output, the residual
  // arrive or leave in the kernel's own layout (no reorder).
  bool src_direct_ = false, dst_direct_ = false, residual_direct_ = false;
  bool single_thread_ = false;
  friend void tessel::cpu::NegotiateOneDnnLayouts(const ir::Graph&,
                                                   std::vector<std::unique_ptr<FastKernel>>&,
                                                   ActivationLayout);
  BoundPrimitive conv_, src_reorder_, dst_reorder_, residual_reorder_;
};

std::unique_ptr<FastKernel> OneDnnConv::Make(const ir::Node& node, ActivationLayout layout,
                                             bool pack) {
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
  if (!ops::ResolveWindow(node, in_spatial, kernel, false, &strides, &dilations, &pads, &out_spatial)
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
  const std::string activation = fused ? node.attrs.String("activation", "") : "";
  if (activation == "Relu") {
    post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  } else if (activation == "Clip") {
    post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip,
                            node.attrs.Float("activation_min", 0.f),
                            node.attrs.Float("activation_max", 0.f));
  } else if (!activation.empty()) {
    return nullptr;
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
    const ConvPd pd = winograd ? *winograd
                               : ConvPd(desc(dnnl::algorithm::convolution_direct), attr, Engine());
    k->impl_ = pd.impl_info_str();
    if (k->impl_.rfind("ref", 0) == 0) return nullptr;  // no faster than ours

    const memory::desc w_plain = PlainDesc(w_dims);
    if (pd.weights_desc() == w_plain) {
      k->weights_ = memory(w_plain, Engine(), Mutable(w->constant));
    } else {
      k->weights_ = PackOnce(w->constant.raw_data(), w_plain, pd.weights_desc(), pack,
                             &k->packed_, &k->packed_bytes_);
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

// ---------------------------------------------------------------- MatMul, Gemm

// dst = src x weights (+ bias), batched with numpy broadcasting over the
// leading dims. Constant weights are packed once.
class OneDnnMatMul final : public FastKernel {
 public:
  struct Operand {
    std::vector<int64_t> dims;   // as oneDNN sees it
    memory::desc plain;          // how tessel (or the packed copy) lays it out
    const float* constant = nullptr;  // set when known at compile time
    int input = -1;              // else the node input it comes from
  };
  static std::unique_ptr<FastKernel> Make(const Operand& src, const Operand& weights,
                                          const Operand* bias, const std::vector<int64_t>& dst,
                                          bool pack, bool accumulate = false);

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  std::string Describe() const override { return "onednn matmul (" + impl_ + ")"; }
  int64_t packed_weight_bytes() const override { return packed_bytes_; }
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
      const float* c = addend.constant ? addend.constant : ctx.in(static_cast<size_t>(addend.input)).data<float>();
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
  int64_t packed_bytes_ = 0;
  std::vector<std::pair<size_t, memory>> bound_inputs_;
  std::shared_ptr<memory> packed_;  // the packed weights (shared, PackCache)
  bool packed_from_constant_ = false;
  memory dst_;
  BoundPrimitive matmul_;
};

std::unique_ptr<FastKernel> OneDnnMatMul::Make(const Operand& src, const Operand& weights,
                                               const Operand* bias,
                                               const std::vector<int64_t>& dst, bool pack,
                                               bool accumulate) {
  auto k = std::make_unique<OneDnnMatMul>();
  const double flops = 2.0 * static_cast<double>(NumElements(dst)) *
                       static_cast<double>(src.dims.back());
  k->single_thread_ = flops < ParallelFlops();
  const SingleThreadScope threads(k->single_thread_);
  try {
    const memory::desc dst_md = PlainDesc(dst);
    const memory::desc w_md = weights.constant ? AnyDesc(weights.dims) : weights.plain;
    using Desc = dnnl::matmul::desc;
    const Desc desc = bias ? Desc(src.plain, w_md, bias->plain, dst_md) : Desc(src.plain, w_md, dst_md);
    dnnl::primitive_attr attr = UserScratchpad();
    if (accumulate) {
      dnnl::post_ops post_ops;
      post_ops.append_sum(1.f);
      attr.set_post_ops(post_ops);
    }
    dnnl::matmul::primitive_desc pd(desc, attr, Engine());
    k->impl_ = pd.impl_info_str();
    if (k->impl_.rfind("ref", 0) == 0) return nullptr;
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
      k->matmul_.args[DNNL_ARG_WEIGHTS] = PackOnce(weights.constant, weights.plain,
                                                   pd.weights_desc(), pack, &k->packed_,
                                                   &k->packed_bytes_);
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

// ---------------------------------------------------------------- one primitive, x -> y

// A primitive reading input 0 and writing output 0 in the plain layout.
class OneDnnUnary final : public FastKernel {
 public:
  template <typename PrimitiveDesc, typename Primitive>
  // `single`: pd was created, and the primitive runs, on one thread.
  static std::unique_ptr<FastKernel> Make(const PrimitiveDesc& pd, const std::string& what,
                                          const memory::desc& src, const memory::desc& dst,
                                          bool single) {
    auto k = std::make_unique<OneDnnUnary>();
    k->single_thread_ = single;
    k->name_ = what + " (" + pd.impl_info_str() + ")";
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
    k->src_ = Unbound(src);
    k->dst_ = Unbound(dst);
    k->primitive_.primitive = Primitive(pd);
    k->primitive_.args = {{DNNL_ARG_SRC, k->src_}, {DNNL_ARG_DST, k->dst_}};
    k->scratch_.AddScratchpad(k->primitive_, pd.scratchpad_desc(), "onednn scratchpad");
    return k;
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  std::string Describe() const override { return name_; }
  Status Run(ops::KernelContext& ctx) override {
    const SingleThreadScope threads(single_thread_);
    src_.set_data_handle(Mutable(ctx.in(0)));
    dst_.set_data_handle(ctx.out(0).raw_data());
    primitive_.Execute(ctx);
    return Status::Ok();
  }

 private:
  ScratchList scratch_;
  std::string name_;
  memory src_, dst_;
  BoundPrimitive primitive_;

 public:
  bool single_thread_ = false;
};

// ---------------------------------------------------------------- layout-indifferent

// Pooling and Concat: primitives that run in whatever layout their tensors
// have. Built in the plain layout; NegotiateOneDnnLayouts may switch one to
// the graph's layout for all its inputs and its output, when its neighbours
// exchange those tensors so (no reorder on either side).
class OneDnnFlexible final : public LayoutFlexibleKernel {
 public:
  // Makes the primitive for these tensor descriptors; sets its scratchpad.
  using Builder = std::function<dnnl::primitive(const std::vector<memory::desc>& srcs,
                                                const memory::desc& dst,
                                                memory::desc* scratchpad, std::string* impl)>;

  OneDnnFlexible(std::string what, Builder build, std::vector<int> src_args,
                 std::vector<std::vector<int64_t>> src_shapes, std::vector<int64_t> dst_shape,
                 bool single)
      : name_(std::move(what)),
        build_(std::move(build)),
        src_args_(std::move(src_args)),
        src_shapes_(std::move(src_shapes)),
        dst_shape_(std::move(dst_shape)),
        single_thread_(single) {}

  // In the plain layout; false when oneDNN has only its reference for it.
  bool Init() {
    memory::desc scratchpad;
    if (!Bind(std::nullopt, &scratchpad)) return false;
    primitive_.scratch = -1;
    scratch_.AddScratchpad(primitive_, scratchpad, "onednn scratchpad");
    planned_scratchpad_ = scratchpad.get_size();
    return true;
  }

  // Whether the kernel can run in `layout` within its planned scratch.
  bool CanRunIn(ActivationLayout layout) override {
    const SingleThreadScope threads(single_thread_);
    try {
      std::vector<memory::desc> srcs;
      for (const auto& s : src_shapes_) {
        srcs.push_back(LayoutDesc(s, layout));
        if (srcs.back().is_zero()) return false;
      }
      const memory::desc dst = LayoutDesc(dst_shape_, layout);
      if (srcs.empty() || dst.is_zero()) return false;
      memory::desc scratchpad;
      std::string impl;
      build_(srcs, dst, &scratchpad, &impl);
      return impl.rfind("ref", 0) != 0 && scratchpad.get_size() <= planned_scratchpad_;
    } catch (const dnnl::error&) {
      return false;
    }
  }
  // Switches to `layout`; CanRunIn(layout) must hold.
  void RunIn(ActivationLayout layout) override {
    memory::desc scratchpad;
    const bool ok = Bind(layout, &scratchpad);
    TESSEL_CHECK(ok && scratchpad.get_size() <= planned_scratchpad_);
    if (primitive_.scratch >= 0 || scratchpad.get_size() > 0) {
      primitive_.scratchpad = Unbound(scratchpad);
      primitive_.args[DNNL_ARG_SCRATCHPAD] = primitive_.scratchpad;
    }
    // Planned at what this layout needs: often nothing, the plain layout's
    // scratchpad held the tensors transposed.
    scratch_.Shrink(primitive_.scratch, scratchpad.get_size());
    layout_ = layout;
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  std::string Describe() const override {
    if (const Copy* copy = copy_run(); copy && copy->first) {
      return name_ + " (" + copy->second + ")";
    }
    return name_ + " (" + impl_ + ")";
  }
  // Run instead of the primitive in the plain layout, channels last, or
  // nChw16c, when set; each with a few words for reports.
  using Copy = std::pair<std::function<void(ops::KernelContext&)>, std::string>;
  Copy plain_run, channels_last_run, blocked16_run;

  Status Run(ops::KernelContext& ctx) override {
    if (const Copy* copy = copy_run(); copy && copy->first) {
      copy->first(ctx);
      return Status::Ok();
    }
    const SingleThreadScope threads(single_thread_);
    for (size_t i = 0; i < srcs_.size(); ++i) srcs_[i].set_data_handle(Mutable(ctx.in(i)));
    dst_.set_data_handle(ctx.out(0).raw_data());
    primitive_.Execute(ctx);
    return Status::Ok();
  }

 private:
  const Copy* copy_run() const {
    if (!layout_) return &plain_run;
    return *layout_ == ActivationLayout::kBlocked16 ? &blocked16_run : &channels_last_run;
  }

  // Binds the primitive for `layout` (nullopt: plain).
  bool Bind(std::optional<ActivationLayout> layout, memory::desc* scratchpad) {
    const SingleThreadScope threads(single_thread_);
    auto desc = [&](const std::vector<int64_t>& dims) {
      return layout ? LayoutDesc(dims, *layout) : PlainDesc(dims);
    };
    try {
      std::vector<memory::desc> srcs;
      for (const auto& s : src_shapes_) srcs.push_back(desc(s));
      const memory::desc dst = desc(dst_shape_);
      dnnl::primitive p = build_(srcs, dst, scratchpad, &impl_);
      if (impl_.rfind("ref", 0) == 0) return false;
      srcs_.clear();
      primitive_.args.clear();
      for (size_t i = 0; i < srcs.size(); ++i) {
        srcs_.push_back(Unbound(srcs[i]));
        primitive_.args[src_args_[i]] = srcs_.back();
      }
      dst_ = Unbound(dst);
      primitive_.args[DNNL_ARG_DST] = dst_;
      if (primitive_.scratch >= 0) primitive_.args[DNNL_ARG_SCRATCHPAD] = primitive_.scratchpad;
      primitive_.primitive = p;
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  std::string name_, impl_;
  Builder build_;
  std::vector<int> src_args_;
  std::vector<std::vector<int64_t>> src_shapes_;
  std::vector<int64_t> dst_shape_;
  bool single_thread_ = false;
  std::optional<ActivationLayout> layout_;  // nullopt: plain
  ScratchList scratch_;
  size_t planned_scratchpad_ = 0;
  std::vector<memory> srcs_;
  memory dst_;
  BoundPrimitive primitive_;
};

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

void NegotiateOneDnnLayouts(const ir::Graph& graph,
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
  auto id_of = [](const ir::Value* v) { return static_cast<size_t>(v->id); };

  // Candidates: outputs that a convolution computes in the graph's layout,
  // or that a layout-indifferent kernel could (all its outputs or none).
  // Then drop, until nothing changes, every candidate with a reader that
  // cannot take it so, and every flexible kernel's outputs when one of its
  // inputs is not in that layout or one of its outputs was dropped (such a
  // kernel runs all in the graph's layout or all plain).
  std::vector<bool> direct(graph.values().size(), false);
  auto outputs_direct = [&](const ir::Node& node, bool value) {
    for (const ir::Value* y : node.outputs) direct[id_of(y)] = value;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    bool candidate = !node.outputs.empty();
    for (const ir::Value* y : node.outputs) {
      candidate =
          candidate && y && !is_output[id_of(y)] && !LayoutDesc(y->shape, layout).is_zero();
    }
    if (!candidate) continue;
    if (OneDnnConv* c = conv_at(i)) {
      const ir::Value* y = node.outputs[0];
      direct[id_of(y)] =
          c->dst_buffer_ >= 0 && c->dst_kernel_.get_desc() == LayoutDesc(y->shape, layout);
    } else if (LayoutFlexibleKernel* f = flex_at(i)) {
      outputs_direct(node, f->CanRunIn(layout));
    }
  }
  // Whether every reader of `y` takes it in the graph's layout.
  auto readers_take = [&](const ir::Value* y) {
    const memory::desc want = LayoutDesc(y->shape, layout);
    for (const ir::Node* r : consumers[id_of(y)]) {
      const size_t j = index.at(r);
      OneDnnConv* c = conv_at(j);
      for (size_t k = 0; k < r->inputs.size(); ++k) {
        if (r->inputs[k] != y) continue;
        bool ok;
        if (c && k == 0) {
          ok = c->src_buffer_ >= 0 && c->src_kernel_.get_desc() == want;
        } else if (c && static_cast<int>(k) == c->residual_input_) {
          ok = c->dst_buffer_ >= 0 && c->dst_kernel_.get_desc() == want;
        } else {
          ok = flex_at(j) != nullptr && direct[id_of(r->output(0))];
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
      if (flex_at(i)) {
        for (const ir::Value* in : node.inputs) ok = ok && in && direct[id_of(in)];
      }
      for (const ir::Value* y : node.outputs) ok = ok && readers_take(y);
      if (!ok) {
        outputs_direct(node, false);
        changed = true;
      }
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = *nodes[i];
    if (OneDnnConv* c = conv_at(i)) {
      c->src_direct_ = c->src_buffer_ >= 0 && direct[id_of(n.inputs[0])];
      c->dst_direct_ = direct[id_of(n.outputs[0])];
      c->residual_direct_ = c->residual_input_ >= 0 && c->dst_buffer_ >= 0 &&
                            direct[id_of(n.inputs[static_cast<size_t>(c->residual_input_)])];
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
    }
  }
}

std::unique_ptr<FastKernel> MakeOneDnnConv(const ir::Node& node, int opset,
                                           ActivationLayout layout, bool pack) {
  return OneDnnConv::Make(node, layout, pack);
}

ActivationLayout ChooseOneDnnActivationLayout(const ir::Graph& graph) {
  if (ProcessOptions().winograd == Winograd::kOff) return ActivationLayout::kChannelsLast;
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

std::unique_ptr<FastKernel> MakeOneDnnMatMul(const ir::Node& node, int opset, bool pack) {
  const ir::Value* a = node.input(0);
  const ir::Value* b = node.input(1);
  const ir::Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!IsFloat32(a) || !IsFloat32(b) || !IsFloat32(y)) return nullptr;
  // Vectors (rank 1) keep the reference kernel; oneDNN needs matrices.
  if (a->shape.size() < 2 || b->shape.size() < 2 || y->shape.size() > 12) return nullptr;
  if (NumElements(y->shape) == 0) return nullptr;
  // Weights shared by every batch (no batch dims of their own): the batch
  // folds into the rows, one large product instead of many thin ones.
  const bool b_shared = std::all_of(b->shape.begin(), b->shape.end() - 2,
                                    [](int64_t d) { return d == 1; });
  if (b_shared && a->shape.size() > 2) {
    const int64_t k = a->shape.back(), n = b->shape.back();
    const int64_t rows = NumElements(a->shape) / k;
    return OneDnnMatMul::Make(MatrixOperand(a, 0, rows, k), MatrixOperand(b, 1, k, n), nullptr,
                              {rows, n}, pack);
  }
  const size_t rank = y->shape.size();
  auto operand = [&](const ir::Value* v, int input) {
    OneDnnMatMul::Operand op;
    op.dims.assign(rank - v->shape.size(), 1);
    op.dims.insert(op.dims.end(), v->shape.begin(), v->shape.end());
    op.plain = PlainDesc(op.dims);
    op.constant = ConstantData(v);
    op.input = input;
    return op;
  };
  return OneDnnMatMul::Make(operand(a, 0), operand(b, 1), nullptr, y->shape, pack);
}

std::unique_ptr<FastKernel> MakeOneDnnFusedMatMul(const ir::Node& node, bool pack) {
  const ir::Value* a = node.input(0);
  const ir::Value* w = node.input(1);
  const ir::Value* bias = node.input(2);
  const ir::Value* z = node.input(3);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(a) || !IsFloat32(w) || !IsFloat32(bias) || !IsFloat32(y)) return nullptr;
  if (!w->is_constant() || !bias->is_constant() || w->shape.size() != 2 || a->shape.size() < 2)
    return nullptr;
  if ((z && !IsFloat32(z)) || NumElements(y->shape) == 0) return nullptr;
  // One set of weights for every row: A's leading dims fold into the rows.
  const int64_t k = w->shape[0], n = w->shape[1], rows = NumElements(a->shape) / k;
  const OneDnnMatMul::Operand row = MatrixOperand(bias, 2, 1, n);
  // The residual goes through the output: copied in, then the sum post-op.
  auto kernel = OneDnnMatMul::Make(MatrixOperand(a, 0, rows, k), MatrixOperand(w, 1, k, n), &row,
                                   {rows, n}, pack, z != nullptr);
  if (kernel && z) {
    auto& mm = static_cast<OneDnnMatMul&>(*kernel);
    mm.addend = {.dims = {rows, n}, .plain = PlainDesc({rows, n}), .input = 3};
    mm.rows_ = rows;
    mm.cols_ = n;
  }
  return kernel;
}

std::unique_ptr<FastKernel> MakeOneDnnGemm(const ir::Node& node, int opset, bool pack) {
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
  if ((alpha != 1.f && !b->is_constant()) || (c && beta != 1.f && !c->is_constant())) return nullptr;
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
  auto kernel =
      OneDnnMatMul::Make(src, weights, row ? &bias : nullptr, {m, n}, pack, has_c && !row);
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

std::unique_ptr<FastKernel> MakeOneDnnPool(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  const bool max = node.op_type == "MaxPool";
  if (!IsFloat32(x) || !IsFloat32(y) || node.output(1) != nullptr) return nullptr;
  if (x->shape.size() < 3 || x->shape.size() > 5 || NumElements(y->shape) == 0) return nullptr;
  const size_t n = x->shape.size() - 2;
  const bool ceil_mode = node.attrs.Int("ceil_mode", 0) != 0;
  if (!max && ceil_mode) return nullptr;  // oneDNN would average over the extra padding
  const std::vector<int64_t> kernel = node.attrs.Ints("kernel_shape");
  if (kernel.size() != n) return nullptr;
  const Shape in_spatial(x->shape.begin() + 2, x->shape.end());
  std::vector<int64_t> strides, dilations, pads;
  Shape out_spatial;
  if (!ops::ResolveWindow(node, in_spatial, kernel, ceil_mode, &strides, &dilations, &pads,
                          &out_spatial)
           .ok()) {
    return nullptr;
  }
  if (!std::equal(out_spatial.begin(), out_spatial.end(), y->shape.begin() + 2)) return nullptr;
  memory::dims pad_l(n), pad_r(n);
  for (size_t i = 0; i < n; ++i) {
    if (dilations[i] != 1) return nullptr;
    pad_l[i] = pads[i];
    // What oneDNN needs to get the same output size: ceil mode extends the
    // end padding (max pooling never reads it).
    pad_r[i] = std::max(pads[i + n], (out_spatial[i] - 1) * strides[i] + kernel[i] -
                                         in_spatial[i] - pads[i]);
  }
  const auto alg = max ? dnnl::algorithm::pooling_max
                       : node.attrs.Int("count_include_pad", 0) != 0
                             ? dnnl::algorithm::pooling_avg_include_padding
                             : dnnl::algorithm::pooling_avg_exclude_padding;
  const bool single = NumElements(x->shape) < ParallelElements();
  const memory::dims stride_dims(strides.begin(), strides.end()),
      kernel_dims(kernel.begin(), kernel.end());
  auto build = [=](const std::vector<memory::desc>& srcs, const memory::desc& dst,
                   memory::desc* scratchpad, std::string* impl) {
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, srcs[0], dst,
                                     stride_dims, kernel_dims, pad_l, pad_r);
    dnnl::pooling_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    *scratchpad = pd.scratchpad_desc();
    *impl = pd.impl_info_str();
    return dnnl::primitive(dnnl::pooling_forward(pd));
  };
  auto k = std::make_unique<OneDnnFlexible>(max ? "onednn max pool" : "onednn average pool",
                                            build, std::vector<int>{DNNL_ARG_SRC},
                                            std::vector<std::vector<int64_t>>{x->shape}, y->shape,
                                            single);
  if (!k->Init()) return nullptr;
  return k;
}

std::unique_ptr<FastKernel> MakeOneDnnReduce(const ir::Node& node, int opset) {
  const ir::Value* x = node.input(0);
  const ir::Value* y = node.output(0);
  if (!IsFloat32(x) || !IsFloat32(y) || x->shape.empty() || NumElements(y->shape) == 0) return nullptr;
  // oneDNN's max reduction drops NaN and, in some of its implementations,
  // turns a row of -inf (a fully masked attention row) into the lowest
  // finite float; ReduceMax and GlobalMaxPool keep the reference kernel.
  if (node.op_type == "ReduceMax" || node.op_type == "GlobalMaxPool") return nullptr;
  const bool sum = node.op_type == "ReduceSum";
  const auto alg = sum ? dnnl::algorithm::reduction_sum : dnnl::algorithm::reduction_mean;
  std::vector<int64_t> axes;
  if (node.op_type == "GlobalAveragePool" || node.op_type == "GlobalMaxPool") {
    if (x->shape.size() < 3) return nullptr;
    for (int64_t a = 2; a < static_cast<int64_t>(x->shape.size()); ++a) axes.push_back(a);
  } else if (sum ? opset >= 13 : opset >= 18) {
    const ir::Value* a = node.input(1);
    if (a && !a->is_constant()) return nullptr;
    if (a) axes = a->constant.ToInt64Vector();
    if (axes.empty() && node.attrs.Int("noop_with_empty_axes", 0) != 0) return nullptr;
  } else {
    axes = node.attrs.Ints("axes");
  }
  const auto rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> dims = x->shape;
  if (axes.empty()) dims.assign(x->shape.size(), 1);
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return nullptr;
    dims[static_cast<size_t>(a)] = 1;
  }
  // keepdims=0 drops the 1s, which leaves the bytes where they are.
  if (NumElements(dims) != NumElements(y->shape)) return nullptr;
  const bool single = NumElements(x->shape) < ParallelElements();
  const SingleThreadScope threads(single);
  try {
    const memory::desc src = PlainDesc(x->shape), dst = PlainDesc(dims);
    dnnl::reduction::desc desc(alg, src, dst, 0.f, 0.f);
    dnnl::reduction::primitive_desc pd(desc, UserScratchpad(), Engine());
    return OneDnnUnary::Make<dnnl::reduction::primitive_desc, dnnl::reduction>(
        pd, "onednn reduction", src, dst, single);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

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
  for (size_t i = 0; i < shapes.size(); ++i) args.push_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i));
  auto build = [axis](const std::vector<memory::desc>& srcs, const memory::desc& dst,
                      memory::desc* scratchpad, std::string* impl) {
    dnnl::concat::primitive_desc pd(dst, static_cast<int>(axis), srcs, Engine(), UserScratchpad());
    *scratchpad = pd.scratchpad_desc();
    *impl = pd.impl_info_str();
    return dnnl::primitive(dnnl::concat(pd));
  };
  auto k = std::make_unique<OneDnnFlexible>("onednn concat", build, args, shapes, y->shape,
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
      ThreadPool::Default().ParallelFor(n, copy);
    } else {
      for (int64_t p = 0; p < n; ++p) copy(p);
    }
  };
  k->plain_run = {block_copy, "block copy"};
  if (axis == 1) {
    // nChw16c, along the channels (all by 16): each input is one block per
    // image, as in the plain layout.
    k->blocked16_run = {block_copy, "block copy, nChw16c"};
    // Channels last, along the channels: every pixel's output row is the
    // inputs' rows one after another. Copied by chunks of pixels over the
    // thread pool (measured on SqueezeNet's fire modules at 2 threads: about
    // twice as fast as oneDNN's simple concat there).
    const int64_t rows = NumElements(y->shape) / y->shape[1];
    std::vector<int64_t> row_bytes;
    for (const auto& sh : shapes) row_bytes.push_back(sh[1] * 4);
    const int64_t out_row = y->shape[1] * 4;
    const bool parallel = NumElements(y->shape) >= ParallelElements();
    auto row_copy = [rows, row_bytes, out_row, parallel](ops::KernelContext& ctx) {
      constexpr int64_t kRowsPerChunk = 64;
      auto chunk = [&](int64_t c) {
        const int64_t end = std::min(rows, (c + 1) * kRowsPerChunk);
        char* out = static_cast<char*>(ctx.out(0).raw_data());
        for (int64_t r = c * kRowsPerChunk; r < end; ++r) {
          char* o = out + r * out_row;
          for (size_t i = 0; i < row_bytes.size(); ++i) {
            const char* in = static_cast<const char*>(ctx.in(i).raw_data()) + r * row_bytes[i];
            std::memcpy(o, in, static_cast<size_t>(row_bytes[i]));
            o += row_bytes[i];
          }
        }
      };
      const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
      if (parallel) {
        ThreadPool::Default().ParallelFor(chunks, chunk);
      } else {
        for (int64_t c = 0; c < chunks; ++c) chunk(c);
      }
    };
    k->channels_last_run = {row_copy, "row copy, channels last"};
  }
  return k;
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
