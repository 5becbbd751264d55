#include "targets/opencl/storage.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/check.h"
#include "ir/texture.h"
#include "snippets/c_emitter.h"
#include "targets/opencl/launch_plan.h"
#include "targets/opencl/texture_launches.h"

namespace tessel::opencl {

StatusOr<Storage> ParseStorage(const std::string& text) {
  if (text == "buffer") return Storage::kBuffer;
  if (text == "texture") return Storage::kTexture;
  if (text == "auto") return Storage::kAuto;
  return InvalidArgument("opencl target: unknown storage '" + text + "' (buffer, texture, auto)");
}

const char* StorageName(Storage s) {
  switch (s) {
    case Storage::kBuffer:
      return "buffer";
    case Storage::kTexture:
      return "texture";
    case Storage::kAuto:
      return "auto";
  }
  return "?";
}

namespace {

bool Fits(const std::optional<ir::TextureExtent>& e) {
  return e && e->width <= ir::kMinImage2dExtent && e->height <= ir::kMinImage2dExtent;
}

// "value 'x' stays in a buffer: ..." when `v` in `layout` is too large for
// an image; nullopt when it fits (or has no such layout).
std::optional<std::string> TooLargeNote(const ir::Value& v, ir::Layout layout) {
  const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v.shape, layout);
  if (!e || Fits(e)) return std::nullopt;
  return "value '" + v.name + "' stays in a buffer: its " + ir::LayoutName(layout) +
         " image would be " + std::to_string(e->width) + "x" + std::to_string(e->height) +
         " texels, over " + std::to_string(ir::kMinImage2dExtent);
}

}  // namespace

bool IsSnippetImageArg(const ir::Value& v) {
  return !v.is_constant() && v.dtype == DType::kFloat32 && v.shape.size() == 4;
}

std::optional<TextureOperands> ImageKernelOperands(const ir::Node& node, int opset) {
  std::vector<ir::Value*> inputs;
  StatusOr<std::optional<snippets::KernelIR>> ir = LowerNodeSnippet(node, opset, &inputs);
  if (!ir.ok()) return std::nullopt;
  if (!*ir) return TextureKernelOperands(node, opset);
  if (!snippets::ImageSnippetShapes(**ir) || node.outputs.size() != 1) return std::nullopt;
  // Every image it would read or write must fit one (a small value
  // broadcast against a tall buffer would make that buffer an image).
  const auto fits = [](const ir::Value& v) {
    return Fits(ir::TextureExtentOf(v.shape, ir::Layout::kNCHW4c));
  };
  if (!node.outputs[0] || !fits(*node.outputs[0])) return std::nullopt;
  TextureOperands ops;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] && IsSnippetImageArg(*node.inputs[i])) {
      if (!fits(*node.inputs[i])) return std::nullopt;
      ops.image_inputs.push_back(static_cast<int>(i));
    }
  }
  return ops;
}

namespace {

// How node `n` (with an image kernel) reads value `v`: as an image
// activation, as its weight image, or not through an image (a bias, or not
// at all).
enum class Use { kNone, kImage, kWeight };
Use UseOf(const ir::Node& n, const TextureOperands& ops, const ir::Value* v) {
  Use use = Use::kNone;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != v) continue;
    const int index = static_cast<int>(i);
    const bool image = std::find(ops.image_inputs.begin(), ops.image_inputs.end(), index) !=
                       ops.image_inputs.end();
    const Use here = image ? Use::kImage : index == ops.weight_input ? Use::kWeight : Use::kNone;
    // A value read twice must be read the same way both times.
    if (i > 0 && use != here && use != Use::kNone) return Use::kNone;
    if (here == Use::kNone) return Use::kNone;
    use = here;
  }
  return use;
}

}  // namespace

StorageDecisions CollectStorageInfo(const ir::Graph& graph, Storage storage) {
  const auto& nodes = graph.nodes();
  StorageDecisions d;
  d.image_node.assign(nodes.size(), false);
  d.values.resize(graph.values().size());
  TESSEL_CHECK(storage != Storage::kAuto);
  if (storage == Storage::kBuffer) return d;

  // Which nodes have an image kernel, and how they read their inputs.
  std::vector<std::optional<TextureOperands>> ops(nodes.size());
  std::unordered_map<const ir::Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ops[i] = ImageKernelOperands(*nodes[i], graph.opset_version());
    index[nodes[i].get()] = i;
  }
  std::vector<std::vector<size_t>> readers(graph.values().size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* v : nodes[i]->inputs) {
      if (!v) continue;
      auto& r = readers[static_cast<size_t>(v->id)];
      if (r.empty() || r.back() != i) r.push_back(i);
    }
  }
  std::vector<bool> boundary(graph.values().size(), false);
  for (const ir::Value* v : graph.inputs()) boundary[static_cast<size_t>(v->id)] = true;
  for (const ir::Value* v : graph.outputs()) boundary[static_cast<size_t>(v->id)] = true;

  // Weights: a texture:weight image when every reader takes it as its
  // weight, in one texel layout. A node whose weight cannot be an image has
  // no image kernel.
  auto weight_of = [&](size_t i) -> const ir::Value* {
    return ops[i] && ops[i]->weight_input >= 0
               ? nodes[i]->input(static_cast<size_t>(ops[i]->weight_input))
               : nullptr;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!ops[i] || ops[i]->weight_input < 0) continue;
    const ir::Value* w = weight_of(i);
    bool ok = w && w->is_constant() && !boundary[static_cast<size_t>(w->id)] &&
              Fits(ir::TextureExtentOf(w->shape, ops[i]->weight_layout));
    for (size_t r : w ? readers[static_cast<size_t>(w->id)] : std::vector<size_t>{}) {
      ok = ok && ops[r] && UseOf(*nodes[r], *ops[r], w) == Use::kWeight &&
           ops[r]->weight_layout == ops[i]->weight_layout;
    }
    if (!ok) ops[i].reset();
  }

  // Activations too large for an image, whoever reads and writes them.
  for (const auto& v : graph.values()) {
    if (!IsSnippetImageArg(*v) || boundary[static_cast<size_t>(v->id)]) continue;
    if (auto note = TooLargeNote(*v, ir::Layout::kNCHW4c)) d.notes.push_back(*note);
  }

  // Until nothing changes: activations are textures when written and read
  // by image kernels only; image nodes are those with an image kernel and
  // an activation in a texture; a weight is an image when every reader is
  // an image node (image kernels read weights from images only, so a node
  // whose weight another, buffer node reads loses its image kernel, and
  // the textures around it are decided again).
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& v : graph.values()) {
      const auto id = static_cast<size_t>(v->id);
      d.values[id] = {};
      if (v->is_constant() || boundary[id] || !v->producer || v->dtype != DType::kFloat32) {
        continue;
      }
      const size_t p = index.at(v->producer);
      if (!ops[p] || v->producer->output(0) != v.get()) continue;
      bool ok = !readers[id].empty();
      for (size_t r : readers[id]) {
        ok = ok && ops[r] && UseOf(*nodes[r], *ops[r], v.get()) == Use::kImage;
      }
      if (!ok) continue;
      if (!Fits(ir::TextureExtentOf(v->shape, ir::Layout::kNCHW4c))) continue;
      d.values[id] = {.layout = ir::Layout::kNCHW4c, .scope = ir::StorageScope::kTexture};
    }
    auto in_texture = [&](const ir::Value* v) {
      return v && d.values[static_cast<size_t>(v->id)].scope == ir::StorageScope::kTexture;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      bool image = false;
      if (ops[i]) {
        for (int k : ops[i]->image_inputs) {
          image = image || in_texture(nodes[i]->input(static_cast<size_t>(k)));
        }
        image = image || in_texture(nodes[i]->output(0));
      }
      d.image_node[i] = image;
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const ir::Value* w = weight_of(i);
      if (!w) continue;
      bool all_image = true;
      for (size_t r : readers[static_cast<size_t>(w->id)]) all_image = all_image && d.image_node[r];
      if (all_image) {
        d.values[static_cast<size_t>(w->id)] = {.layout = ops[i]->weight_layout,
                                                .scope = ir::StorageScope::kTextureWeight};
      } else if (d.image_node[i]) {
        ops[i].reset();
        changed = true;
      }
    }
  }
  return d;
}

}  // namespace tessel::opencl
