#include "model/model_file.h"

#include <cstring>
#include <fstream>
#include <unordered_map>

#include "core/file_io.h"
#include "core/hash.h"
#include "core/messages.h"
#include "ir/texture.h"
#include "ir/verifier.h"
#include "model/graph_memory.h"
#include "ops/op_registry.h"
#include "ops/subgraph.h"

namespace tessel {

namespace {

constexpr char kMagic[8] = {'T', 'E', 'S', 'S', 'E', 'L', 'C', 'M'};
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 8;

enum class AttrKind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };

class Writer {
 public:
  template <typename T>
  void Pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void Str(const std::string& s) {
    Pod<uint64_t>(s.size());
    out_ += s;
  }
  void Bytes(const void* p, size_t n) {
    Pod<uint64_t>(n);
    out_.append(static_cast<const char*>(p), n);
  }
  void TensorPayload(const Tensor& t) {
    Pod<uint8_t>(static_cast<uint8_t>(t.dtype()));
    Pod<uint32_t>(static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.shape()) Pod<int64_t>(d);
    Bytes(t.raw_data(), t.size_bytes());
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

// No tensor of a model file may be larger (1 TiB): a bigger one is corruption.
constexpr int64_t kMaxValueBytes = int64_t{1} << 40;

class Reader {
 public:
  Reader(const char* data, size_t size,
         const std::function<void(const char*, size_t)>* done = nullptr)
      : p_(data), end_(data + size), done_(done) {}

  template <typename T>
  Status Pod(T* v) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return Truncated();
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return Status::Ok();
  }
  Status Str(std::string* s) {
    uint64_t n = 0;
    TESSEL_RETURN_IF_ERROR(Pod(&n));
    if (static_cast<uint64_t>(end_ - p_) < n) return Truncated();
    s->assign(p_, n);
    p_ += n;
    return Status::Ok();
  }
  Status TensorPayload(Tensor* t) {
    uint8_t dtype = 0;
    uint32_t rank = 0;
    TESSEL_RETURN_IF_ERROR(Pod(&dtype));
    TESSEL_RETURN_IF_ERROR(Pod(&rank));
    if (dtype == 0 || dtype >= kNumDTypes || rank > 64) return Corrupt("bad tensor header");
    Shape shape(rank);
    for (auto& d : shape) {
      TESSEL_RETURN_IF_ERROR(Pod(&d));
      if (d < 0) return Corrupt("negative dimension");
    }
    uint64_t n = 0;
    TESSEL_RETURN_IF_ERROR(Pod(&n));
    if (static_cast<uint64_t>(end_ - p_) < n) return Truncated();
    int64_t want = 0;
    if (!CheckedByteSize(shape, static_cast<DType>(dtype), &want) ||
        n != static_cast<uint64_t>(want)) {
      return Corrupt("tensor size does not match its shape");
    }
    *t = Tensor(static_cast<DType>(dtype), std::move(shape));
    if (n) std::memcpy(t->raw_data(), p_, n);
    if (done_ && *done_ && n) (*done_)(p_, n);
    p_ += n;
    return Status::Ok();
  }
  bool at_end() const { return p_ == end_; }

  static Status Truncated() { return DataLoss("the payload is truncated"); }
  static Status Corrupt(const std::string& what) {
    return DataLoss("the payload is corrupt (" + what + ")");
  }

 private:
  const char* p_;
  const char* end_;
  const std::function<void(const char*, size_t)>* done_;
};

void WriteAttr(Writer& w, const AttrValue& v) {
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>) {
          w.Pod(AttrKind::kInt);
          w.Pod(x);
        } else if constexpr (std::is_same_v<X, float>) {
          w.Pod(AttrKind::kFloat);
          w.Pod(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          w.Pod(AttrKind::kString);
          w.Str(x);
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          w.Pod(AttrKind::kInts);
          w.Bytes(x.data(), x.size() * sizeof(int64_t));
        } else if constexpr (std::is_same_v<X, std::vector<float>>) {
          w.Pod(AttrKind::kFloats);
          w.Bytes(x.data(), x.size() * sizeof(float));
        } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
          w.Pod(AttrKind::kStrings);
          w.Pod<uint64_t>(x.size());
          for (const auto& s : x) w.Str(s);
        } else {
          w.Pod(AttrKind::kTensor);
          w.TensorPayload(x);
        }
      },
      v);
}

template <typename T>
Status ReadVector(Reader& r, std::vector<T>* v) {
  std::string bytes;
  TESSEL_RETURN_IF_ERROR(r.Str(&bytes));
  if (bytes.size() % sizeof(T)) return Reader::Corrupt("attribute list size");
  v->resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(v->data(), bytes.data(), bytes.size());
  return Status::Ok();
}

Status ReadAttr(Reader& r, AttrValue* v) {
  uint8_t kind = 0;
  TESSEL_RETURN_IF_ERROR(r.Pod(&kind));
  switch (static_cast<AttrKind>(kind)) {
    case AttrKind::kInt: {
      int64_t x;
      TESSEL_RETURN_IF_ERROR(r.Pod(&x));
      *v = x;
      return Status::Ok();
    }
    case AttrKind::kFloat: {
      float x;
      TESSEL_RETURN_IF_ERROR(r.Pod(&x));
      *v = x;
      return Status::Ok();
    }
    case AttrKind::kString: {
      std::string s;
      TESSEL_RETURN_IF_ERROR(r.Str(&s));
      *v = std::move(s);
      return Status::Ok();
    }
    case AttrKind::kInts: {
      std::vector<int64_t> x;
      TESSEL_RETURN_IF_ERROR(ReadVector(r, &x));
      *v = std::move(x);
      return Status::Ok();
    }
    case AttrKind::kFloats: {
      std::vector<float> x;
      TESSEL_RETURN_IF_ERROR(ReadVector(r, &x));
      *v = std::move(x);
      return Status::Ok();
    }
    case AttrKind::kStrings: {
      uint64_t n;
      TESSEL_RETURN_IF_ERROR(r.Pod(&n));
      if (n > (1u << 20)) return Reader::Corrupt("attribute list size");
      std::vector<std::string> x(n);
      for (auto& s : x) TESSEL_RETURN_IF_ERROR(r.Str(&s));
      *v = std::move(x);
      return Status::Ok();
    }
    case AttrKind::kTensor: {
      Tensor t;
      TESSEL_RETURN_IF_ERROR(r.TensorPayload(&t));
      *v = std::move(t);
      return Status::Ok();
    }
  }
  return Reader::Corrupt("unknown attribute kind");
}

Status ReadValueRef(Reader& r, const std::vector<ir::Value*>& values, ir::Value** v) {
  int32_t idx = 0;
  TESSEL_RETURN_IF_ERROR(r.Pod(&idx));
  if (idx == -1) {
    *v = nullptr;
    return Status::Ok();
  }
  if (idx < 0 || static_cast<size_t>(idx) >= values.size()) return Reader::Corrupt("value index");
  *v = values[static_cast<size_t>(idx)];
  return Status::Ok();
}

// Subgraph bodies nest only through corrupt files; the bound keeps reading finite.
constexpr int kMaxBodyDepth = 8;

// A graph: values, nodes (each with its Subgraph body, if any), inputs,
// outputs. `depth` counts enclosing bodies.
Status ReadGraph(Reader& r, int depth, std::unique_ptr<ir::Graph>* out) {
  if (depth > kMaxBodyDepth) return Reader::Corrupt("subgraph bodies nest too deeply");
  auto graph = std::make_unique<ir::Graph>();
  std::string name;
  int32_t opset;
  TESSEL_RETURN_IF_ERROR(r.Str(&name));
  TESSEL_RETURN_IF_ERROR(r.Pod(&opset));
  graph->set_name(name);
  graph->set_opset_version(opset);
  uint32_t num_values;
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_values));
  std::vector<ir::Value*> values;
  for (uint32_t i = 0; i < num_values; ++i) {
    std::string vname;
    uint8_t dtype = 0, layout = 0, scope = 0, has_constant = 0;
    uint32_t rank = 0;
    TESSEL_RETURN_IF_ERROR(r.Str(&vname));
    TESSEL_RETURN_IF_ERROR(r.Pod(&dtype));
    TESSEL_RETURN_IF_ERROR(r.Pod(&rank));
    if (dtype >= kNumDTypes || rank > 64) return Reader::Corrupt("value header");
    Shape shape(rank);
    for (auto& d : shape) TESSEL_RETURN_IF_ERROR(r.Pod(&d));
    // Before anything uses the shape: sizes that are negative, overflow, or
    // exceed any machine are refused, not allocated.
    int64_t bytes = 0;
    if (!CheckedByteSize(shape, static_cast<DType>(dtype), &bytes) || bytes > kMaxValueBytes) {
      return Reader::Corrupt("value '" + EscapeForMessage(vname) + "' has an absurd shape");
    }
    TESSEL_RETURN_IF_ERROR(r.Pod(&layout));
    TESSEL_RETURN_IF_ERROR(r.Pod(&scope));
    TESSEL_RETURN_IF_ERROR(r.Pod(&has_constant));
    if (layout > ir::kLastLayout || scope > ir::kLastStorageScope) {
      return Reader::Corrupt("value layout or scope");
    }
    ir::Value* v = graph->AddValue(vname, static_cast<DType>(dtype), shape, true);
    v->layout = static_cast<ir::Layout>(layout);
    v->scope = static_cast<ir::StorageScope>(scope);
    if (has_constant) TESSEL_RETURN_IF_ERROR(r.TensorPayload(&v->constant));
    values.push_back(v);
  }
  uint32_t num_nodes;
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_nodes));
  for (uint32_t i = 0; i < num_nodes; ++i) {
    std::string nname, op_type, domain;
    ir::KernelChoice kernel;
    uint8_t family = 0, flags = 0;
    TESSEL_RETURN_IF_ERROR(r.Str(&nname));
    TESSEL_RETURN_IF_ERROR(r.Str(&op_type));
    TESSEL_RETURN_IF_ERROR(r.Str(&domain));
    TESSEL_RETURN_IF_ERROR(r.Pod(&family));
    TESSEL_RETURN_IF_ERROR(r.Str(&kernel.implementation));
    TESSEL_RETURN_IF_ERROR(r.Str(&kernel.variant));
    TESSEL_RETURN_IF_ERROR(r.Str(&kernel.detail));
    TESSEL_RETURN_IF_ERROR(r.Pod(&flags));
    if (family > ir::kLastKernelFamily || flags > 3) return Reader::Corrupt("node kernel");
    kernel.family = static_cast<ir::KernelFamily>(family);
    kernel.slow = (flags & 1) != 0;
    kernel.view = (flags & 2) != 0;
    std::vector<ir::Value*> ins, outs;
    for (auto* list : {&ins, &outs}) {
      uint32_t n;
      TESSEL_RETURN_IF_ERROR(r.Pod(&n));
      if (n > num_values + 1) return Reader::Corrupt("node arity");
      list->resize(n);
      for (auto& v : *list) TESSEL_RETURN_IF_ERROR(ReadValueRef(r, values, &v));
    }
    for (ir::Value* o : outs) {
      if (o && o->producer) return Reader::Corrupt("a value has two producers");
    }
    ir::Node* node = graph->AddNode(op_type, nname, ins, outs);
    node->domain = domain;
    node->kernel = std::move(kernel);
    uint32_t num_attrs;
    TESSEL_RETURN_IF_ERROR(r.Pod(&num_attrs));
    for (uint32_t k = 0; k < num_attrs; ++k) {
      std::string aname;
      AttrValue v;
      TESSEL_RETURN_IF_ERROR(r.Str(&aname));
      TESSEL_RETURN_IF_ERROR(ReadAttr(r, &v));
      node->attrs.Set(aname, std::move(v));
    }
    uint8_t has_body = 0;
    TESSEL_RETURN_IF_ERROR(r.Pod(&has_body));
    if (has_body > 1) return Reader::Corrupt("body flag");
    if (has_body) TESSEL_RETURN_IF_ERROR(ReadGraph(r, depth + 1, &node->body));
  }
  for (auto* list : {&graph->inputs(), &graph->outputs()}) {
    uint32_t n;
    TESSEL_RETURN_IF_ERROR(r.Pod(&n));
    if (n > num_values) return Reader::Corrupt("graph input/output count");
    for (uint32_t k = 0; k < n; ++k) {
      ir::Value* v;
      TESSEL_RETURN_IF_ERROR(ReadValueRef(r, values, &v));
      if (!v) return Reader::Corrupt("graph input/output");
      list->push_back(v);
    }
  }
  *out = std::move(graph);
  return Status::Ok();
}

Status ReadPlacement(Reader& r, ir::BufferPlacement* p) {
  TESSEL_RETURN_IF_ERROR(r.Pod(&p->pool));
  TESSEL_RETURN_IF_ERROR(r.Pod(&p->offset_bytes));
  return Status::Ok();
}

// The layout's shape must match the graph's; CheckMemoryLayout checks the
// rest once the graph is known to be sound.
Status ReadLayout(Reader& r, const ir::Graph& graph, ir::MemoryLayout* layout) {
  uint8_t has_layout = 0;
  TESSEL_RETURN_IF_ERROR(r.Pod(&has_layout));
  if (has_layout > 1) return Reader::Corrupt("memory layout flag");
  if (!has_layout) return Status::Ok();
  TESSEL_RETURN_IF_ERROR(r.Str(&layout->algorithm));
  uint32_t num_pools = 0, num_values = 0, num_nodes = 0;
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_pools));
  if (num_pools == 0 || num_pools > 1024) return Reader::Corrupt("memory pool count");
  layout->pools.resize(num_pools);
  for (ir::MemoryPool& pool : layout->pools) {
    uint8_t read_only = 0;
    TESSEL_RETURN_IF_ERROR(r.Str(&pool.name));
    TESSEL_RETURN_IF_ERROR(r.Pod(&pool.size_bytes));
    TESSEL_RETURN_IF_ERROR(r.Pod(&read_only));
    if (read_only > 1) return Reader::Corrupt("memory pool access");
    pool.read_only = read_only != 0;
  }
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_values));
  if (num_values != graph.values().size()) return Reader::Corrupt("memory layout value count");
  layout->values.resize(num_values);
  for (ir::BufferPlacement& p : layout->values) TESSEL_RETURN_IF_ERROR(ReadPlacement(r, &p));
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_nodes));
  if (num_nodes != graph.nodes().size()) return Reader::Corrupt("memory layout node count");
  layout->in_place.resize(num_nodes);
  layout->scratch.resize(num_nodes);
  for (uint32_t i = 0; i < num_nodes; ++i) {
    uint32_t num_scratch = 0;
    TESSEL_RETURN_IF_ERROR(r.Pod(&layout->in_place[i]));
    TESSEL_RETURN_IF_ERROR(r.Pod(&num_scratch));
    if (num_scratch > 1024) return Reader::Corrupt("scratch count");
    layout->scratch[i].resize(num_scratch);
    for (ir::BufferPlacement& p : layout->scratch[i]) TESSEL_RETURN_IF_ERROR(ReadPlacement(r, &p));
  }
  // Every texture pool holds at least one value.
  uint32_t num_textures = 0, num_texture_values = 0;
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_textures));
  if (num_textures > graph.values().size()) return Reader::Corrupt("texture pool count");
  layout->textures.resize(num_textures);
  for (ir::TexturePool& pool : layout->textures) {
    uint8_t read_only = 0;
    TESSEL_RETURN_IF_ERROR(r.Str(&pool.name));
    TESSEL_RETURN_IF_ERROR(r.Pod(&pool.width));
    TESSEL_RETURN_IF_ERROR(r.Pod(&pool.height));
    TESSEL_RETURN_IF_ERROR(r.Pod(&read_only));
    if (pool.width < 1 || pool.height < 1 || pool.width > ir::kMinImage2dExtent ||
        pool.height > ir::kMinImage2dExtent) {
      return Reader::Corrupt("texture pool extent");
    }
    if (read_only > 1) return Reader::Corrupt("texture pool access");
    pool.read_only = read_only != 0;
  }
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_texture_values));
  if (num_texture_values != 0 && num_texture_values != graph.values().size()) {
    return Reader::Corrupt("texture placement count");
  }
  layout->texture_values.resize(num_texture_values);
  for (ir::TexturePlacement& p : layout->texture_values) {
    TESSEL_RETURN_IF_ERROR(r.Pod(&p.pool));
    TESSEL_RETURN_IF_ERROR(r.Pod(&p.x));
    TESSEL_RETURN_IF_ERROR(r.Pod(&p.y));
    if (p.pool < -1 || p.pool >= static_cast<int32_t>(num_textures)) {
      return Reader::Corrupt("texture placement pool");
    }
  }
  return Status::Ok();
}

void WriteLayout(Writer& w, const ir::MemoryLayout& layout) {
  w.Pod<uint8_t>(layout.empty() ? 0 : 1);
  if (layout.empty()) return;
  w.Str(layout.algorithm);
  w.Pod<uint32_t>(static_cast<uint32_t>(layout.pools.size()));
  for (const ir::MemoryPool& pool : layout.pools) {
    w.Str(pool.name);
    w.Pod<int64_t>(pool.size_bytes);
    w.Pod<uint8_t>(pool.read_only ? 1 : 0);
  }
  auto placement = [&](const ir::BufferPlacement& p) {
    w.Pod<int32_t>(p.pool);
    w.Pod<int64_t>(p.offset_bytes);
  };
  w.Pod<uint32_t>(static_cast<uint32_t>(layout.values.size()));
  for (const ir::BufferPlacement& p : layout.values) placement(p);
  w.Pod<uint32_t>(static_cast<uint32_t>(layout.in_place.size()));
  for (size_t i = 0; i < layout.in_place.size(); ++i) {
    w.Pod<int32_t>(layout.in_place[i]);
    w.Pod<uint32_t>(static_cast<uint32_t>(layout.scratch[i].size()));
    for (const ir::BufferPlacement& p : layout.scratch[i]) placement(p);
  }
  w.Pod<uint32_t>(static_cast<uint32_t>(layout.textures.size()));
  for (const ir::TexturePool& pool : layout.textures) {
    w.Str(pool.name);
    w.Pod<int64_t>(pool.width);
    w.Pod<int64_t>(pool.height);
    w.Pod<uint8_t>(pool.read_only ? 1 : 0);
  }
  w.Pod<uint32_t>(static_cast<uint32_t>(layout.texture_values.size()));
  for (const ir::TexturePlacement& p : layout.texture_values) {
    w.Pod<int32_t>(p.pool);
    w.Pod<int64_t>(p.x);
    w.Pod<int64_t>(p.y);
  }
}

Status ReadTarget(Reader& r, targets::TargetSpec* target) {
  TESSEL_RETURN_IF_ERROR(r.Str(&target->name));
  uint32_t num_options;
  TESSEL_RETURN_IF_ERROR(r.Pod(&num_options));
  if (num_options > 64) return Reader::Corrupt("target option count");
  for (uint32_t i = 0; i < num_options; ++i) {
    std::string key, value;
    TESSEL_RETURN_IF_ERROR(r.Str(&key));
    TESSEL_RETURN_IF_ERROR(r.Str(&value));
    target->options[key] = value;
  }
  return Status::Ok();
}

void WriteTarget(Writer& w, const targets::TargetSpec& target) {
  w.Str(target.name);
  w.Pod<uint32_t>(static_cast<uint32_t>(target.options.size()));
  for (const auto& [key, value] : target.options) {
    w.Str(key);
    w.Str(value);
  }
}

Status ReadPayload(Reader& r, CompiledModel* model) {
  TESSEL_RETURN_IF_ERROR(ReadTarget(r, &model->target));
  TESSEL_RETURN_IF_ERROR(ReadGraph(r, 0, &model->graph));
  TESSEL_RETURN_IF_ERROR(ReadLayout(r, *model->graph, &model->memory));
  if (!r.at_end()) return Reader::Corrupt("trailing bytes");
  return Status::Ok();
}

void WriteGraph(Writer& w, const ir::Graph& g) {
  w.Str(g.name());
  w.Pod<int32_t>(g.opset_version());
  w.Pod<uint32_t>(static_cast<uint32_t>(g.values().size()));
  for (const auto& v : g.values()) {
    w.Str(v->name);
    w.Pod<uint8_t>(static_cast<uint8_t>(v->dtype));
    w.Pod<uint32_t>(static_cast<uint32_t>(v->shape.size()));
    for (int64_t d : v->shape) w.Pod<int64_t>(d);
    w.Pod<uint8_t>(static_cast<uint8_t>(v->layout));
    w.Pod<uint8_t>(static_cast<uint8_t>(v->scope));
    w.Pod<uint8_t>(v->is_constant() ? 1 : 0);
    if (v->is_constant()) w.TensorPayload(v->constant);
  }
  auto ref = [&](const ir::Value* v) { w.Pod<int32_t>(v ? v->id : -1); };
  w.Pod<uint32_t>(static_cast<uint32_t>(g.nodes().size()));
  for (const auto& n : g.nodes()) {
    w.Str(n->name);
    w.Str(n->op_type);
    w.Str(n->domain);
    w.Pod<uint8_t>(static_cast<uint8_t>(n->kernel.family));
    w.Str(n->kernel.implementation);
    w.Str(n->kernel.variant);
    w.Str(n->kernel.detail);
    w.Pod<uint8_t>(static_cast<uint8_t>((n->kernel.slow ? 1 : 0) | (n->kernel.view ? 2 : 0)));
    w.Pod<uint32_t>(static_cast<uint32_t>(n->inputs.size()));
    for (const ir::Value* v : n->inputs) ref(v);
    w.Pod<uint32_t>(static_cast<uint32_t>(n->outputs.size()));
    for (const ir::Value* v : n->outputs) ref(v);
    w.Pod<uint32_t>(static_cast<uint32_t>(n->attrs.all().size()));
    for (const auto& [name, value] : n->attrs.all()) {
      w.Str(name);
      WriteAttr(w, value);
    }
    w.Pod<uint8_t>(n->body ? 1 : 0);
    if (n->body) WriteGraph(w, *n->body);
  }
  w.Pod<uint32_t>(static_cast<uint32_t>(g.inputs().size()));
  for (const ir::Value* v : g.inputs()) ref(v);
  w.Pod<uint32_t>(static_cast<uint32_t>(g.outputs().size()));
  for (const ir::Value* v : g.outputs()) ref(v);
}

}  // namespace

std::string SerializeCompiledModel(const CompiledModel& model) {
  Writer w;
  WriteTarget(w, model.target);
  WriteGraph(w, *model.graph);
  WriteLayout(w, model.memory);

  const std::string& payload = w.str();
  Writer header;
  header.str().append(kMagic, sizeof kMagic);
  header.Pod<uint32_t>(kModelFormatVersion);
  header.Pod<uint64_t>(payload.size());
  header.Pod<uint64_t>(Fnv1a64(payload.data(), payload.size()));
  return header.str() + payload;
}

StatusOr<CompiledModel> DeserializeCompiledModel(
    std::string_view bytes, const std::string& source,
    const std::function<void(const char*, size_t)>& done) {
  const std::string where = "compiled model '" + source + "'";
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return DataLoss(where + " is not a tessel compiled model (bad magic or too short)");
  }
  uint32_t version;
  uint64_t size, checksum;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&size, bytes.data() + 12, 8);
  std::memcpy(&checksum, bytes.data() + 20, 8);
  if (version != kModelFormatVersion) {
    return DataLoss(where + " has format version " + std::to_string(version) +
                    "; this tessel reads version " + std::to_string(kModelFormatVersion) +
                    ": compile the model again");
  }
  if (bytes.size() - kHeaderBytes != size) {
    return DataLoss(where + " is truncated or padded: header says " + std::to_string(size) +
                    " payload bytes, file has " + std::to_string(bytes.size() - kHeaderBytes));
  }
  const char* payload = bytes.data() + kHeaderBytes;
  if (Fnv1a64(payload, size) != checksum) {
    return DataLoss(where + " is corrupt: checksum mismatch");
  }
  // The checksum read every page; the parser reads them again one by one.
  if (done) done(payload, size);
  return DeserializeCompiledModelPayload(std::string_view(payload, size), source, done);
}

StatusOr<CompiledModel> DeserializeCompiledModelPayload(
    std::string_view payload, const std::string& source,
    const std::function<void(const char*, size_t)>& done) {
  const std::string where = "compiled model '" + source + "'";
  CompiledModel model;
  model.source = source;
  Reader r(payload.data(), payload.size(), &done);
  Status s = ReadPayload(r, &model);
  if (!s.ok()) return DataLoss(where + ": " + s.message());
  s = ir::VerifyGraph(*model.graph);
  if (!s.ok()) return DataLoss(where + " is inconsistent: " + s.message());
  for (const auto& n : model.graph->nodes()) {
    if (!ops::OpRegistry::Global().Find(n->op_type, n->domain)) {
      return Unsupported(where + " uses op " + n->Describe() +
                         ", which this tessel does not support");
    }
    if (n->body && !ops::IsSubgraph(*n)) {
      return DataLoss(where + " is inconsistent: " + n->Describe() + " has a body");
    }
    if (ops::IsSubgraph(*n)) {
      s = ops::ValidateSubgraph(*n, model.graph->opset_version());
      if (!s.ok()) return DataLoss(where + " is inconsistent: " + s.message());
    }
  }
  if (!model.memory.empty()) {
    s = CheckMemoryLayout(*model.graph, model.memory);
    if (!s.ok()) return DataLoss(where + " has a bad memory layout: " + s.message());
  }
  return model;
}

Status WriteCompiledModel(const CompiledModel& model, const std::filesystem::path& path) {
  return WriteFileAtomically(path, SerializeCompiledModel(model));
}

StatusOr<CompiledModel> ReadCompiledModel(const std::filesystem::path& path) {
  // Mapped, its pages released as the weights are copied out of them: the
  // file and the parsed model are never both resident (wav2vec2: 18 MiB).
  TESSEL_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  return DeserializeCompiledModel(file.bytes(), path.string(),
                                  [&file](const char* begin, size_t n) { file.Release(begin, n); });
}

StatusOr<bool> IsCompiledModelFile(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return NotFound("'" + path.string() + "': no such file");
  }
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof kMagic] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == sizeof magic && std::memcmp(magic, kMagic, sizeof magic) == 0;
}

}  // namespace tessel
