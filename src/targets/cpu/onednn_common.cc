// What the oneDNN kernel files share (onednn_internal.h): the engine and
// streams, memory descriptors, reorders, weights packed once, the thread
// thresholds, and OneDnnFlexible, the layout-indifferent kernel that pooling
// and Concat build on.
// Compiled only with oneDNN (TESSEL_WITH_ONEDNN).
#if TESSEL_WITH_ONEDNN
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/check.h"
#include "targets/cpu/onednn_internal.h"
#include "targets/cpu/thread_pool.h"

namespace tessel::cpu {

using dnnl::memory;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

memory::desc PlainDesc(const std::vector<int64_t>& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, strides);
}

memory::desc AnyDesc(const std::vector<int64_t>& dims) {
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::any);
}

namespace {

// Channels last (nwc, nhwc, ndhwc): the layout oneDNN's convolutions pick
// on AVX-512, of the same size as the plain one. Zero desc for other ranks.
memory::desc ChannelsLastDesc(const std::vector<int64_t>& dims) {
  using tag = memory::format_tag;
  const tag t = dims.size() == 3   ? tag::acb
                : dims.size() == 4 ? tag::acdb
                : dims.size() == 5 ? tag::acdeb
                                   : tag::undef;
  if (t == tag::undef) return memory::desc();
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, t);
}

}  // namespace

memory::desc Blocked16Desc(const std::vector<int64_t>& dims) {
  if (dims.size() != 4 || dims[1] % 16 != 0) return memory::desc();
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::nChw16c);
}

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

double ParallelFlops() { return ActiveOptions().parallel_min_mflop * 1e6; }
int64_t ParallelElements() { return static_cast<int64_t>(ParallelFlops() / 256); }

BoundPrimitive MakeReorder(const memory& from, const memory& to, ScratchList& scratch,
                           const std::string& name) {
  dnnl::reorder::primitive_desc pd(Engine(), from.get_desc(), Engine(), to.get_desc(),
                                   UserScratchpad());
  BoundPrimitive p{.primitive = dnnl::reorder(pd),
                   .args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  scratch.AddScratchpad(p, pd.scratchpad_desc(), name + " scratchpad");
  return p;
}

namespace {

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

}  // namespace

WeightPack::WeightPack(const void* data, const memory::desc& from, const memory::desc& to)
    : data_(data), from_(from), memory_(Unbound(to)) {}

void WeightPack::Pack() {
  if (data_ == nullptr || keep_) return;
  bool created = false;
  keep_ = PackCache::Global().Get(data_, from_, memory_.get_desc(), &created);
  if (created) packed_bytes_ = static_cast<int64_t>(memory_.get_desc().get_size());
  memory_.set_data_handle(keep_->get_data_handle());
}

// ---------------------------------------------------------------- layout-indifferent

bool OneDnnFlexible::Init() {
  memory::desc scratchpad;
  if (!Bind(std::nullopt, &scratchpad)) return false;
  primitive_.scratch = -1;
  scratch_.AddScratchpad(primitive_, scratchpad, "onednn scratchpad");
  planned_scratchpad_ = scratchpad.get_size();
  return true;
}

bool OneDnnFlexible::CanRunIn(ActivationLayout layout) {
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

void OneDnnFlexible::RunIn(ActivationLayout layout) {
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

ir::KernelChoice OneDnnFlexible::Choice() const {
  const Copy* copy = copy_run();
  const std::string detail = copy && copy->first ? copy->second : impl_;
  return {.family = ir::KernelFamily::kOneDnn,
          .implementation = name_,
          .variant = layout_ ? ir::LayoutName(*layout_) : "",
          .detail = detail,
          .slow = ReferenceGrade(detail)};
}

bool ReferenceGrade(const std::string& impl) {
  return impl.rfind("ref", 0) == 0 || impl.find("simple_") != std::string::npos ||
         impl.find("ref:") != std::string::npos;
}

Status OneDnnFlexible::Run(ops::KernelContext& ctx) {
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

const OneDnnFlexible::Copy* OneDnnFlexible::copy_run() const {
  if (!layout_) return &plain_run;
  return *layout_ == ActivationLayout::kBlocked16 ? &blocked16_run : &channels_last_run;
}

bool OneDnnFlexible::Bind(std::optional<ActivationLayout> layout, memory::desc* scratchpad) {
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

}  // namespace tessel::cpu

#endif  // TESSEL_WITH_ONEDNN
