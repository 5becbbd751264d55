// Internal to the oneDNN kernel files (onednn_conv.cc, onednn_matmul.cc,
// onednn_norm.cc, onednn_pool.cc, onednn_reduce.cc, onednn_concat.cc); the
// rest of tessel goes through onednn_kernels.h. What they share: the engine
// and streams, memory descriptors, primitives with their arguments bound
// once, the scratch a kernel declares, reorders and packed weights, the
// thresholds below which a kernel runs on one thread, and the two kernels
// more than one family builds on (OneDnnUnary, OneDnnFlexible). Defined in
// onednn_common.cc where not here. Only in builds with oneDNN
// (TESSEL_WITH_ONEDNN).
#pragma once

#include <omp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "targets/cpu/fast_kernel.h"

namespace tessel::cpu {

dnnl::engine& Engine();

// One stream per thread: executors on different threads never share one.
dnnl::stream& Stream();

// A dense row-major float32 descriptor: tessel's layout for every tensor.
dnnl::memory::desc PlainDesc(const std::vector<int64_t>& dims);

dnnl::memory::desc AnyDesc(const std::vector<int64_t>& dims);

// nChw16c: what oneDNN's Winograd convolutions take; of the plain size only
// when the channels are a multiple of 16. Zero desc otherwise.
dnnl::memory::desc Blocked16Desc(const std::vector<int64_t>& dims);

// How a tensor of these dims flows between kernels in the graph's layout;
// zero desc when it cannot (it stays plain).
dnnl::memory::desc LayoutDesc(const std::vector<int64_t>& dims, ActivationLayout layout);

dnnl::memory Unbound(const dnnl::memory::desc& md);

void* Mutable(const Tensor& t);

dnnl::primitive_attr UserScratchpad();

bool IsFloat32(const ir::Value* v);

// Kernels below this much work run on the calling thread alone: waking the
// other threads and meeting them at the barrier costs more than they save.
// Measured on the shared models at 2 threads on 2 quiet cores, with threads
// that spin briefly at barriers (tools/tessel/main.cc): 1-4 MFLOP gave the
// lowest medians (MobileNetV2 2.2 ms, 64 MFLOP 3.7 ms: most of its
// convolutions are a few MFLOP). On cores shared with other work a higher
// one is steadier. The CPU target's parallel_min_mflop overrides it.
double ParallelFlops();
// Whether a oneDNN implementation name is one of its reference-grade ones
// (ref:*, simple_*): a slow path (ir::KernelChoice::slow).
bool ReferenceGrade(const std::string& impl);
int64_t ParallelElements();

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
  std::unordered_map<int, dnnl::memory> args;
  int scratch = -1;
  dnnl::memory scratchpad;

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
    needs_.push_back(
        {.name = name, .size_bytes = static_cast<int64_t>(size_bytes), .alignment = 64});
    return static_cast<int>(needs_.size() - 1);
  }
  // Binds `p`'s scratchpad (from its primitive descriptor's `md`).
  void AddScratchpad(BoundPrimitive& p, const dnnl::memory::desc& md, const std::string& name) {
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

BoundPrimitive MakeReorder(const dnnl::memory& from, const dnnl::memory& to, ScratchList& scratch,
                           const std::string& name);

// Constant weights a kernel holds in its primitive's own layout. Made
// unbound, so that selecting kernels copies no weights; Pack, before the
// first Run, reorders them once (shared through PackCache by every kernel
// of the same weights) and binds the primitive's argument to the copy.
class WeightPack {
 public:
  WeightPack() = default;
  // `data` (constant, laid out as `from`) packs into `to`; it must stay
  // valid until Pack.
  WeightPack(const void* data, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  // The primitive's argument: unbound until Pack.
  const dnnl::memory& memory() const { return memory_; }
  void Pack();
  // Bytes of the copy, when this kernel made it (another kernel of the
  // same weights may have).
  int64_t packed_bytes() const { return packed_bytes_; }

 private:
  const void* data_ = nullptr;
  dnnl::memory::desc from_;
  dnnl::memory memory_;
  std::shared_ptr<dnnl::memory> keep_;
  int64_t packed_bytes_ = 0;
};

// ---------------------------------------------------------------- one primitive, x -> y

// A primitive reading input 0 and writing output 0 in the plain layout.
class OneDnnUnary final : public FastKernel {
 public:
  template <typename PrimitiveDesc, typename Primitive>
  // `single`: pd was created, and the primitive runs, on one thread.
  static std::unique_ptr<FastKernel> Make(const PrimitiveDesc& pd, const std::string& what,
                                          const dnnl::memory::desc& src,
                                          const dnnl::memory::desc& dst, bool single) {
    auto k = std::make_unique<OneDnnUnary>();
    k->single_thread_ = single;
    k->name_ = what;
    k->impl_ = pd.impl_info_str();
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
    k->src_ = Unbound(src);
    k->dst_ = Unbound(dst);
    k->primitive_.primitive = Primitive(pd);
    k->primitive_.args = {{DNNL_ARG_SRC, k->src_}, {DNNL_ARG_DST, k->dst_}};
    k->scratch_.AddScratchpad(k->primitive_, pd.scratchpad_desc(), "onednn scratchpad");
    return k;
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  ir::KernelChoice Choice() const override {
    return {.family = ir::KernelFamily::kOneDnn,
            .implementation = name_,
            .detail = impl_,
            .slow = ReferenceGrade(impl_)};
  }
  Status Run(ops::KernelContext& ctx) override {
    const SingleThreadScope threads(single_thread_);
    src_.set_data_handle(Mutable(ctx.in(0)));
    dst_.set_data_handle(ctx.out(0).raw_data());
    primitive_.Execute(ctx);
    return Status::Ok();
  }

 private:
  ScratchList scratch_;
  std::string name_, impl_;
  dnnl::memory src_, dst_;
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
  using Builder = std::function<dnnl::primitive(const std::vector<dnnl::memory::desc>& srcs,
                                                const dnnl::memory::desc& dst,
                                                dnnl::memory::desc* scratchpad, std::string* impl)>;

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
  bool Init();

  // Whether the kernel can run in `layout` within its planned scratch.
  bool CanRunIn(ActivationLayout layout) override;
  // Switches to `layout`; CanRunIn(layout) must hold.
  void RunIn(ActivationLayout layout) override;

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return scratch_.needs(); }
  ir::KernelChoice Choice() const override;
  // Run instead of the primitive in the plain layout, channels last, or
  // nChw16c, when set; each with a few words for reports.
  using Copy = std::pair<std::function<void(ops::KernelContext&)>, std::string>;
  Copy plain_run, channels_last_run, blocked16_run;

  Status Run(ops::KernelContext& ctx) override;

 private:
  const Copy* copy_run() const;

  // Binds the primitive for `layout` (nullopt: plain).
  bool Bind(std::optional<ActivationLayout> layout, dnnl::memory::desc* scratchpad);

  std::string name_, impl_;
  Builder build_;
  std::vector<int> src_args_;
  std::vector<std::vector<int64_t>> src_shapes_;
  std::vector<int64_t> dst_shape_;
  bool single_thread_ = false;
  std::optional<ActivationLayout> layout_;  // nullopt: plain
  ScratchList scratch_;
  size_t planned_scratchpad_ = 0;
  std::vector<dnnl::memory> srcs_;
  dnnl::memory dst_;
  BoundPrimitive primitive_;
};

}  // namespace tessel::cpu
