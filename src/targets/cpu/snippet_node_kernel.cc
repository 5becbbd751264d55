#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/subgraph.h"
#include "snippets/lower.h"
#include "snippets/snippet_kernel.h"
#include "targets/cpu/native_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

namespace {

// A Subgraph node (a fused elementwise region) on its JIT-compiled snippet.
// Beside convolutions it can run on their tensors in the graph's layout
// (nhwc, or nChw16c): elementwise and broadcasting ops do not care where an
// axis lies, so the snippet is compiled a second time for the rewritten
// shapes (snippets::LowerSubgraph). Its inputs of one pixel per channel (a
// squeeze-excitation scale [N, C, 1, 1]) or of one channel are read from
// the same bytes in either layout, and are taken as they are.
// The snippets JIT's options of the CPU target building this kernel.
snippets::SnippetOptions JitOptions() {
  snippets::SnippetOptions options;
  options.isa = ActiveOptions().isa;
  options.dump_dir = ActiveOptions().snippets_dump_dir;
  return options;
}

class SnippetNodeKernel final : public LayoutFlexibleKernel {
 public:
  SnippetNodeKernel(const ir::Node& node, std::unique_ptr<snippets::SnippetKernel> plain)
      : node_(node), plain_(std::move(plain)) {
    for (const ir::Value* y : node.outputs) rank_ = std::max(rank_, y->shape.size());
    for (const ir::Value* y : node.outputs) out_bytes_ += static_cast<int64_t>(y->size_bytes());
  }

  const std::vector<ops::ScratchNeed>& scratch_needs() const override { return none_; }

  // The instruction set it was compiled for (the interpreter where the JIT
  // cannot take the body), and the layout it runs in.
  ir::KernelChoice Choice() const override {
    const snippets::SnippetKernel* k = in_layout_ ? in_layout_.get() : plain_.get();
    return {.family = ir::KernelFamily::kSnippet,
            .implementation = snippets::IsaName(k->isa()),
            .variant = in_layout_ ? ir::LayoutName(layout_) : ""};
  }

  bool CanRunIn(ActivationLayout layout) override {
    if (rank_ < 3 || rank_ > 5) return false;
    for (const ir::Value* y : node_.outputs) {
      if (y->shape.size() != rank_) return false;
    }
    return snippets::LowerSubgraph(*node_.body, layout).ok();
  }

  bool TakesEitherLayout(size_t input, ActivationLayout layout) const override {
    const ir::Value* x = node_.input(input);
    return x && snippets::SameAsPlain(x->shape, std::max<size_t>(rank_, 3), layout);
  }

  void RunIn(ActivationLayout layout) override {
    layout_ = layout;
    snippets::SnippetOptions options = JitOptions();
    options.layout = layout;
    auto k = snippets::SnippetKernel::Compile(*node_.body, options);
    if (k.ok()) {
      in_layout_ = std::move(*k);
    } else {
      in_layout_failed_ = k.status();
    }
  }

  Status Run(ops::KernelContext& ctx) override {
    if (!in_layout_failed_.ok()) return in_layout_failed_;
    const snippets::SnippetKernel* k = in_layout_ ? in_layout_.get() : plain_.get();
    in_.clear();
    out_.clear();
    for (const Tensor* t : ctx.inputs) in_.push_back(t->raw_data());
    for (Tensor* t : ctx.outputs) out_.push_back(t->raw_data());
    // A snippet that writes little runs on the calling thread (thread_pool.h).
    if (out_bytes_ < ParallelCopyBytes()) {
      k->Run(in_, out_, [](int64_t n, const std::function<void(int64_t)>& fn) {
        for (int64_t i = 0; i < n; ++i) fn(i);
      });
    } else {
      ThreadPool& pool = ThreadPool::Current();
      k->Run(in_, out_, [&pool](int64_t n, const std::function<void(int64_t)>& fn) {
        pool.ParallelFor(n, fn);
      });
    }
    return Status::Ok();
  }

 private:
  const ir::Node& node_;
  std::unique_ptr<snippets::SnippetKernel> plain_;
  // Compiled for `layout_` once RunIn switched to it.
  std::unique_ptr<snippets::SnippetKernel> in_layout_;
  ActivationLayout layout_ = ActivationLayout::kChannelsLast;
  Status in_layout_failed_;
  size_t rank_ = 0;
  int64_t out_bytes_ = 0;
  std::vector<const void*> in_;
  std::vector<void*> out_;
  const std::vector<ops::ScratchNeed> none_;
};

}  // namespace

std::unique_ptr<FastKernel> MakeSnippetNodeKernel(const ir::Node& node) {
  if (!ops::IsSubgraph(node) || !node.body) return nullptr;
  for (const ir::Value* v : node.inputs) {
    if (!v) return nullptr;
  }
  for (const ir::Value* v : node.outputs) {
    if (!v) return nullptr;
  }
  auto k = snippets::SnippetKernel::Compile(*node.body, JitOptions());
  if (!k.ok()) return nullptr;
  return std::make_unique<SnippetNodeKernel>(node, std::move(*k));
}

}  // namespace tessel::cpu
