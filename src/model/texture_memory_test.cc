// Values in a texture scope in the memory plan: planned in 2D beside the
// byte pools (graph_memory.h), checked when a layout is loaded, and carried
// by the .tsl (model_file.h).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "compiler/compile.h"
#include "ir/texture.h"
#include "model/model_file.h"
#include "model/plan_memory.h"
#include "onnx/model_builder.h"
#include "targets/testing.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

// a = Conv(x, w) [0, 4); b = Relu(a) [1, 3); c = Relu(b) [2, 4);
// d = Add(a, c) [3, 5); y = Relu(d), the caller's. Unfused, on the
// reference target; then a, b, c, d are put in scope texture (NCHW4c:
// 16 x 32 texels each) and w in texture:weight (OIHW4o: 72 x 2 texels), as
// the OpenCL target's select-kernels would.
class TextureMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_texture_memory_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 8, 16, 16});
    b.Initializer("w", Tensor(DType::kFloat32, {8, 8, 3, 3}));
    ModelBuilder::SetAttr(b.Node("Conv", {"x", "w"}, {"a"}), "pads",
                          std::vector<int64_t>{1, 1, 1, 1});
    b.Node("Relu", {"a"}, {"b"});
    b.Node("Relu", {"b"}, {"c"});
    b.Node("Add", {"a", "c"}, {"d"});
    b.Node("Relu", {"d"}, {"y"});
    b.Output("y");
    ASSERT_TRUE(b.Save(dir_ / "net.onnx").ok());
    CompilerOptions o;
    o.fusion = false;
    StatusOr<CompiledModel> m = Compile(dir_ / "net.onnx", targets::testing::Reference(), o);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(*m);
    ASSERT_EQ(graph().nodes().size(), 5u);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ir::Graph& graph() { return *model_.graph; }
  ir::Value* value(const std::string& name) {
    for (const auto& v : graph().values()) {
      if (v->name == name) return v.get();
    }
    ADD_FAILURE() << "no value " << name;
    return nullptr;
  }
  void UseTextures() {
    for (const char* name : {"a", "b", "c", "d"}) {
      value(name)->scope = ir::StorageScope::kTexture;
      value(name)->layout = ir::Layout::kNCHW4c;
    }
    value("w")->scope = ir::StorageScope::kTextureWeight;
    value("w")->layout = ir::Layout::kOIHW4o;
  }
  StatusOr<ir::MemoryLayout> Plan(const std::string& algorithm = "auto") {
    MemoryOptions o;
    o.algorithm = algorithm;
    o.planner.verify = true;
    return PlanMemory(graph(), targets::ReferenceKernels(graph()), o);
  }
  const ir::TexturePlacement& at(const ir::MemoryLayout& l, const std::string& name) {
    return l.texture_values[static_cast<size_t>(value(name)->id)];
  }

  fs::path dir_;
  CompiledModel model_;
};

TEST_F(TextureMemory, Without_textures_the_layout_has_none) {
  StatusOr<ir::MemoryLayout> l = Plan();
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_TRUE(l->textures.empty());
  EXPECT_TRUE(l->texture_values.empty());
  EXPECT_TRUE(l->values[static_cast<size_t>(value("a")->id)].planned());
  // c = Relu(b) writes over b, which dies there.
  EXPECT_EQ(l->in_place[2], 0);
}

TEST_F(TextureMemory, Texture_values_are_tokens_not_buffers) {
  UseTextures();
  MemoryOptions o;
  StatusOr<GraphMemoryProblem> p =
      BuildMemoryProblem(graph(), targets::ReferenceKernels(graph()), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const char* name : {"a", "b", "c", "d", "w"}) {
    EXPECT_EQ(p->value_buffer[static_cast<size_t>(value(name)->id)], -1) << name;
  }
  struct Case {
    const char* name;
    int64_t width, height, first, last;
    int32_t kind;
  } cases[] = {{"a", 16, 32, 0, 4, kTextureKind},
               {"b", 16, 32, 1, 3, kTextureKind},
               {"c", 16, 32, 2, 4, kTextureKind},
               {"d", 16, 32, 3, 5, kTextureKind},
               {"w", 72, 2, 0, 5, kWeightKind}};
  ASSERT_EQ(p->textures.tokens.size(), 5u);
  for (const Case& c : cases) {
    const int32_t t = p->value_texture[static_cast<size_t>(value(c.name)->id)];
    ASSERT_GE(t, 0) << c.name;
    const memory::TextureToken& token = p->textures.tokens[static_cast<size_t>(t)];
    EXPECT_EQ(token.name, c.name);
    EXPECT_EQ(token.width, c.width) << c.name;
    EXPECT_EQ(token.height, c.height) << c.name;
    EXPECT_EQ(token.live.first_use, c.first) << c.name;
    EXPECT_EQ(token.live.last_use, c.last) << c.name;
    EXPECT_EQ(token.kind, c.kind) << c.name;
  }
  // Textures never run in place.
  EXPECT_EQ(p->in_place[2], -1);
  EXPECT_EQ(p->textures.max_width, ir::kMinImage2dExtent);
}

TEST_F(TextureMemory, Plans_textures_at_the_bound_and_checks_them) {
  UseTextures();
  StatusOr<ir::MemoryLayout> l = Plan();
  ASSERT_TRUE(l.ok()) << l.status().message();
  // Three of a, b, c, d live at once (512 texels each); w alone. A kernel
  // never reads and writes one image: b (read from a, read by c) and d
  // (read from a and c) lie apart from a and c, so a and c share one image
  // at two corners, b and d take turns in another.
  ASSERT_EQ(l->textures.size(), 3u);
  EXPECT_EQ(l->textures[0].name, "texture0");
  EXPECT_EQ(l->textures[1].name, "texture1");
  EXPECT_FALSE(l->textures[0].read_only);
  EXPECT_EQ(
      l->textures[0].width * l->textures[0].height + l->textures[1].width * l->textures[1].height,
      3 * 512);
  EXPECT_EQ(l->textures[2].name, "weight0");
  EXPECT_TRUE(l->textures[2].read_only);
  EXPECT_EQ(l->textures[2].width, 72);
  EXPECT_EQ(l->textures[2].height, 2);
  EXPECT_EQ(at(*l, "w").pool, 2);
  EXPECT_EQ(at(*l, "x").pool, -1);
  EXPECT_EQ(at(*l, "a").pool, at(*l, "c").pool);
  EXPECT_EQ(at(*l, "b").pool, at(*l, "d").pool);
  EXPECT_NE(at(*l, "a").pool, at(*l, "b").pool);
  EXPECT_FALSE(l->values[static_cast<size_t>(value("a")->id)].planned());
  const Status checked = CheckLayoutFitsKernels(graph(), *l, targets::ReferenceKernels(graph()));
  EXPECT_TRUE(checked.ok()) << checked.message();

  // Unplanned: an image per texture.
  StatusOr<ir::MemoryLayout> none = Plan("none");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->textures.size(), 5u);
  EXPECT_TRUE(CheckMemoryLayout(graph(), *none).ok());
}

TEST_F(TextureMemory, CheckMemoryLayout_rejects_bad_texture_placements) {
  UseTextures();
  StatusOr<ir::MemoryLayout> good = Plan();
  ASSERT_TRUE(good.ok()) << good.status().message();
  ASSERT_TRUE(CheckMemoryLayout(graph(), *good).ok());
  const auto id = [&](const char* name) { return static_cast<size_t>(value(name)->id); };
  struct Case {
    const char* message;
    std::function<void(ir::MemoryLayout&)> corrupt;
  } cases[] = {
      {"its textures do not hold: texture plan 'auto': texture 'a'",
       [&](ir::MemoryLayout& l) { l.texture_values[id("b")] = l.texture_values[id("a")]; }},
      {"value 'c' (16x32 texels, scope texture) at (0, 9999) does not fit texture pool "
       "'texture0'",
       [&](ir::MemoryLayout& l) {
         l.texture_values[id("c")] = {0, 0, 9999};
       }},
      {"value 'w' (72x2 texels, scope texture:weight) lies in read-write texture pool 'texture0'",
       [&](ir::MemoryLayout& l) {
         l.texture_values[id("w")] = {0, 0, 0};
       }},
      {"value 'd' (16x32 texels, scope texture) has no texture pool",
       [&](ir::MemoryLayout& l) { l.texture_values[id("d")].pool = -1; }},
      {"value 'a' in scope texture has a place in a byte pool",
       [&](ir::MemoryLayout& l) {
         l.values[id("a")] = {0, 0};
       }},
      {"value 'x' in scope global has a place in a texture pool",
       [&](ir::MemoryLayout& l) {
         l.texture_values[id("x")] = {0, 0, 0};
       }},
      {"its texture placements do not match the graph (0 for",
       [&](ir::MemoryLayout& l) { l.texture_values.clear(); }},
      {"texture pool 'weight0' is 72x20000 texels; images are 1x1 to 16384x16384",
       [&](ir::MemoryLayout& l) { l.textures[2].height = 20000; }},
      {"its textures do not hold: texture plan 'auto': image 'weight0' is 80x2; its textures "
       "need 72x2",
       [&](ir::MemoryLayout& l) { l.textures[2].width = 80; }},
  };
  for (const Case& k : cases) {
    ir::MemoryLayout bad = *good;
    k.corrupt(bad);
    const Status s = CheckMemoryLayout(graph(), bad);
    ASSERT_FALSE(s.ok()) << k.message;
    EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
  }
}

TEST_F(TextureMemory, BuildMemoryProblem_rejects_texture_scopes_it_cannot_plan) {
  struct Case {
    const char* message;
    std::function<void()> mark;
  } cases[] = {
      {"value 'y' in scope texture is a graph input or output; those are buffers",
       [&] {
         value("y")->scope = ir::StorageScope::kTexture;
         value("y")->layout = ir::Layout::kNCHW4c;
       }},
      {"value 'w' in scope texture is a constant; constants take texture:weight",
       [&] {
         value("w")->scope = ir::StorageScope::kTexture;
         value("w")->layout = ir::Layout::kNCHW4c;
       }},
      {"value 'a' in scope texture has layout plain, which has no 2D extent for its shape",
       [&] { value("a")->scope = ir::StorageScope::kTexture; }},
  };
  for (const Case& k : cases) {
    for (const auto& v : graph().values()) {
      v->scope = ir::StorageScope::kGlobal;
      v->layout = ir::Layout::kPlain;
    }
    k.mark();
    const StatusOr<ir::MemoryLayout> l = Plan();
    ASSERT_FALSE(l.ok()) << k.message;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(l.status().message().find(k.message), std::string::npos) << l.status().message();
  }
}

TEST_F(TextureMemory, The_texture_plan_survives_the_model_file) {
  UseTextures();
  StatusOr<ir::MemoryLayout> l = Plan();
  ASSERT_TRUE(l.ok()) << l.status().message();
  model_.memory = *l;
  StatusOr<CompiledModel> back =
      DeserializeCompiledModel(SerializeCompiledModel(model_), "net.tsl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->memory.textures.size(), l->textures.size());
  for (size_t i = 0; i < l->textures.size(); ++i) {
    EXPECT_EQ(back->memory.textures[i].name, l->textures[i].name);
    EXPECT_EQ(back->memory.textures[i].width, l->textures[i].width);
    EXPECT_EQ(back->memory.textures[i].height, l->textures[i].height);
    EXPECT_EQ(back->memory.textures[i].read_only, l->textures[i].read_only);
  }
  ASSERT_EQ(back->memory.texture_values.size(), l->texture_values.size());
  for (size_t i = 0; i < l->texture_values.size(); ++i) {
    EXPECT_EQ(back->memory.texture_values[i].pool, l->texture_values[i].pool);
    EXPECT_EQ(back->memory.texture_values[i].x, l->texture_values[i].x);
    EXPECT_EQ(back->memory.texture_values[i].y, l->texture_values[i].y);
  }
  EXPECT_EQ(back->graph->values()[static_cast<size_t>(value("w")->id)]->scope,
            ir::StorageScope::kTextureWeight);

  // Without textures the section is two zero counts.
  for (const auto& v : graph().values()) {
    v->scope = ir::StorageScope::kGlobal;
    v->layout = ir::Layout::kPlain;
  }
  StatusOr<ir::MemoryLayout> plain = Plan();
  ASSERT_TRUE(plain.ok());
  model_.memory = *plain;
  back = DeserializeCompiledModel(SerializeCompiledModel(model_), "plain.tsl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->memory.textures.empty());
  EXPECT_TRUE(back->memory.texture_values.empty());
}

TEST_F(TextureMemory, A_corrupt_texture_section_is_refused_in_one_line) {
  UseTextures();
  StatusOr<ir::MemoryLayout> l = Plan();
  ASSERT_TRUE(l.ok()) << l.status().message();
  model_.memory = *l;
  // The payload ends with the texture section: the pools' count, the pools
  // (a name's length and characters, width, height, read-only flag:
  // "texture0", "texture1" then "weight0"), then a count and one placement
  // (pool, x, y) per value.
  const std::string file = SerializeCompiledModel(model_);
  const std::string payload = file.substr(28);
  const size_t num_values = graph().values().size();
  const size_t placements = payload.size() - num_values * (4 + 8 + 8);
  const size_t pools = placements - 4 - 2 * (8 + 8 + 8 + 8 + 1) - (8 + 7 + 8 + 8 + 1);
  const size_t count = pools - 4;
  auto put32 = [](std::string& s, size_t at, int32_t v) { std::memcpy(&s[at], &v, 4); };
  auto put64 = [](std::string& s, size_t at, int64_t v) { std::memcpy(&s[at], &v, 8); };
  struct Case {
    const char* message;
    std::function<void(std::string&)> corrupt;
  } cases[] = {
      {"texture pool count", [&](std::string& s) { put32(s, count, 1 << 30); }},
      {"texture pool extent", [&](std::string& s) { put64(s, pools + 16, 0); }},
      {"texture pool extent", [&](std::string& s) { put64(s, pools + 24, 1 << 20); }},
      {"texture pool access", [&](std::string& s) { s[pools + 32] = 2; }},
      {"texture placement count", [&](std::string& s) { put32(s, placements - 4, 3); }},
      {"texture placement pool", [&](std::string& s) { put32(s, placements, 3); }},
  };
  ASSERT_TRUE(DeserializeCompiledModelPayload(payload, "good.tsl").ok());
  for (const Case& k : cases) {
    std::string bad = payload;
    k.corrupt(bad);
    const StatusOr<CompiledModel> m = DeserializeCompiledModelPayload(bad, "bad.tsl");
    ASSERT_FALSE(m.ok()) << k.message;
    EXPECT_EQ(m.status().message(),
              std::string("compiled model 'bad.tsl': the payload is corrupt (") + k.message + ")");
  }
  // A texture placement that reaches outside its pool passes the reader and
  // is caught by the layout check.
  std::string outside = payload;
  const size_t c = placements + static_cast<size_t>(value("c")->id) * 20;
  put64(outside, c + 4, 0);
  put64(outside, c + 12, 9999);
  const StatusOr<CompiledModel> m = DeserializeCompiledModelPayload(outside, "bad.tsl");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("compiled model 'bad.tsl' has a bad memory layout: value "
                                      "'c' (16x32 texels, scope texture) at (0, 9999)"),
            std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace tessel
