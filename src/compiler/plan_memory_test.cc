#include "compiler/plan_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>

#include "compiler/compile.h"
#include "memory/pool_spec.h"
#include "memory/verifier.h"
#include "model/model_file.h"
#include "onnx/model_builder.h"
#include "targets/cpu/executor.h"
#include "targets/cpu/fast_kernel.h"
#include "targets/testing.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using onnx_io::ModelBuilder;

// a = Relu(x); b = Relu(a); c = Add(b, w); d = Concat(c, c); y = Relu(d).
// Nodes 1 and 2 can run in place; y is the caller's unless I/O is planned.
struct Chain {
  ir::Graph g;
  ir::Value *x, *a, *b, *c, *d, *y, *w;
  Chain() {
    g.set_opset_version(13);
    x = g.AddValue("x", DType::kFloat32, {64}, true);
    w = g.AddConstant("w", Tensor(DType::kFloat32, {64}));
    a = g.AddValue("a", DType::kFloat32, {64}, true);
    b = g.AddValue("b", DType::kFloat32, {64}, true);
    c = g.AddValue("c", DType::kFloat32, {64}, true);
    d = g.AddValue("d", DType::kFloat32, {128}, true);
    y = g.AddValue("y", DType::kFloat32, {128}, true);
    g.inputs().push_back(x);
    g.AddNode("Relu", "n0", {x}, {a});
    g.AddNode("Relu", "n1", {a}, {b});
    g.AddNode("Add", "n2", {b, w}, {c});
    g.AddNode("Concat", "n3", {c, c}, {d})->attrs.Set("axis", int64_t{0});
    g.AddNode("Relu", "n4", {d}, {y});
    g.outputs().push_back(y);
  }
};

// The CPU target's kernels for `g` (what the tests plan for).
std::vector<targets::NodeKernel> CpuKernels(const ir::Graph& g) {
  return cpu::SelectCpuKernels(g).nodes;
}

MemoryOptions Options() {
  MemoryOptions o;
  o.planner.verify = true;
  return o;
}

const memory::BufferInfo& BufferOf(const GraphMemoryProblem& p, const ir::Value* v) {
  return p.problem.buffers[static_cast<size_t>(p.value_buffer[static_cast<size_t>(v->id)])];
}

TEST(BuildMemoryProblem, Lifespans_follow_the_schedule) {
  Chain c;
  MemoryOptions o = Options();
  o.in_place = false;
  StatusOr<GraphMemoryProblem> p = BuildMemoryProblem(c.g, CpuKernels(c.g), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  struct Case {
    const ir::Value* v;
    int64_t first, last;
  } cases[] = {{c.a, 0, 2}, {c.b, 1, 3}, {c.c, 2, 4}, {c.d, 3, 5}};
  for (const Case& k : cases) {
    EXPECT_EQ(BufferOf(*p, k.v).live.first_use, k.first) << k.v->name;
    EXPECT_EQ(BufferOf(*p, k.v).live.last_use, k.last) << k.v->name;
    EXPECT_EQ(BufferOf(*p, k.v).size_bytes, static_cast<int64_t>(k.v->size_bytes()));
    EXPECT_EQ(BufferOf(*p, k.v).alignment, 64);
  }
  // Graph inputs and outputs are the caller's; the constant lives throughout
  // in the read-only pool.
  EXPECT_EQ(p->value_buffer[static_cast<size_t>(c.x->id)], -1);
  EXPECT_EQ(p->value_buffer[static_cast<size_t>(c.y->id)], -1);
  const memory::BufferInfo& w = BufferOf(*p, c.w);
  EXPECT_TRUE(p->problem.pools[static_cast<size_t>(w.pool_candidates[0])].read_only);
  EXPECT_EQ(w.live.first_use, 0);
  EXPECT_EQ(w.live.last_use, 5);
  EXPECT_EQ(p->in_place, (std::vector<int32_t>{-1, -1, -1, -1, -1}));
}

TEST(BuildMemoryProblem, Elementwise_ops_reuse_a_dying_input) {
  Chain c;
  StatusOr<GraphMemoryProblem> p = BuildMemoryProblem(c.g, CpuKernels(c.g), Options());
  ASSERT_TRUE(p.ok());
  const auto buffer = [&](const ir::Value* v) {
    return p->value_buffer[static_cast<size_t>(v->id)];
  };
  EXPECT_EQ(buffer(c.a), buffer(c.b));
  EXPECT_EQ(buffer(c.b), buffer(c.c));
  EXPECT_NE(buffer(c.c), buffer(c.d));
  EXPECT_EQ(BufferOf(*p, c.a).live.first_use, 0);
  EXPECT_EQ(BufferOf(*p, c.a).live.last_use, 4);
  // Relu(x) may not write over the caller's input; Concat is no elementwise op.
  EXPECT_EQ(p->in_place, (std::vector<int32_t>{-1, 0, 0, -1, -1}));
}

TEST(BuildMemoryProblem, Scratch_is_live_only_while_its_node_runs) {
  Chain c;
  MemoryOptions o = Options();
  std::vector<targets::NodeKernel> kernels(c.g.nodes().size(),
                                           {{.family = ir::KernelFamily::kReference}, {}});
  kernels[3].scratch = {{"tmp", 100, 128}};
  StatusOr<GraphMemoryProblem> p = BuildMemoryProblem(c.g, kernels, o);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->scratch_buffer[3].size(), 1u);
  const memory::BufferInfo& s = p->problem.buffers[static_cast<size_t>(p->scratch_buffer[3][0])];
  EXPECT_EQ(s.name, "n3/tmp");
  EXPECT_EQ(s.live.first_use, 3);
  EXPECT_EQ(s.live.last_use, 4);
  EXPECT_EQ(s.alignment, 128);
  // Planned together with the tensors: it overlaps neither c nor d.
  StatusOr<ir::MemoryLayout> layout = PlanMemory(c.g, kernels, o);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  const ir::BufferPlacement sp = layout->scratch[3][0];
  for (const ir::Value* v : {c.c, c.d}) {
    const ir::BufferPlacement vp = layout->values[static_cast<size_t>(v->id)];
    EXPECT_TRUE(sp.offset_bytes + 100 <= vp.offset_bytes ||
                vp.offset_bytes + static_cast<int64_t>(v->size_bytes()) <= sp.offset_bytes)
        << v->name;
  }
}

TEST(BuildMemoryProblem, Planned_io_lives_in_the_workspace) {
  Chain c;
  MemoryOptions o = Options();
  o.plan_io = true;
  StatusOr<GraphMemoryProblem> p = BuildMemoryProblem(c.g, CpuKernels(c.g), o);
  ASSERT_TRUE(p.ok());
  // The planned input dies at n0 and d at n4, so those run in place too:
  // x, a, b, c share one buffer, d and y another.
  const auto buffer = [&](const ir::Value* v) {
    return p->value_buffer[static_cast<size_t>(v->id)];
  };
  EXPECT_EQ(buffer(c.x), buffer(c.c));
  EXPECT_EQ(buffer(c.d), buffer(c.y));
  EXPECT_EQ(BufferOf(*p, c.x).live.first_use, 0);
  EXPECT_EQ(BufferOf(*p, c.x).live.last_use, 4);
  EXPECT_EQ(BufferOf(*p, c.y).live.first_use, 3);
  EXPECT_EQ(BufferOf(*p, c.y).live.last_use, 5);
  EXPECT_EQ(p->in_place, (std::vector<int32_t>{0, 0, 0, -1, 0}));
}

// x -> conv a -> conv b -> conv c -> y (3x3, 3x3, 1x1; 8, 16, 16, 8 channels);
// with `pool`, b is a 2x2 max pool (16 channels, 6x6) instead.
struct ConvChain {
  ir::Graph g;
  explicit ConvChain(bool pool = false) {
    g.set_opset_version(13);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto random = [&](const Shape& shape) {
      Tensor t(DType::kFloat32, shape);
      for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
      return t;
    };
    ir::Value* v = g.AddValue("x", DType::kFloat32, {1, 8, 12, 12}, true);
    g.inputs().push_back(v);
    int64_t channels = 8;
    int64_t side = 12;
    for (auto [name, out, k] : {std::tuple{"a", 16, 3}, {"b", 16, 3}, {"c", 8, 1}}) {
      const std::string n = name;
      if (pool && n == "b") {
        side /= 2;
        ir::Value* y = g.AddValue("pooled", DType::kFloat32, {1, out, side, side}, true);
        ir::Node* p = g.AddNode("MaxPool", n, {v}, {y});
        p->attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
        p->attrs.Set("strides", std::vector<int64_t>{2, 2});
        v = y;
        continue;
      }
      ir::Value* y = g.AddValue(n + "_out", DType::kFloat32, {1, out, side, side}, true);
      g.AddNode("Conv", n,
                {v, g.AddConstant(n + "_w", random({out, channels, k, k})),
                 g.AddConstant(n + "_b", random({out}))},
                {y})
          ->attrs.Set("pads", std::vector<int64_t>(4, k / 2));
      v = y;
      channels = out;
    }
    g.outputs().push_back(v);
  }
};

// The bytes of `needs`' scratch called `name`; -1 when there is none.
int64_t BytesOf(const std::vector<ops::ScratchNeed>& needs, const std::string& name) {
  int64_t bytes = -1;
  for (const ops::ScratchNeed& n : needs) {
    if (n.name == name) bytes = n.size_bytes;
  }
  return bytes;
}

// What each node's fast kernel declares on its own, before its neighbours
// are known (empty for the reference kernels).
std::vector<std::vector<ops::ScratchNeed>> NeedsAlone(const ir::Graph& g) {
  const cpu::ActivationLayout layout = cpu::ChooseActivationLayout(g);
  std::vector<std::vector<ops::ScratchNeed>> alone;
  for (const auto& n : g.nodes()) {
    std::unique_ptr<cpu::FastKernel> k = cpu::SelectFastKernel(*n, g.opset_version(), layout);
    alone.push_back(k ? k->scratch_needs() : std::vector<ops::ScratchNeed>{});
  }
  return alone;
}

// Plans `g` and runs it: the same bits as the allocating executor.
void ExpectPlannedRunMatches(const ir::Graph& g) {
  StatusOr<ir::MemoryLayout> planned = PlanMemory(g, CpuKernels(g), Options());
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  const Status checked = CheckLayoutFitsKernels(g, *planned, CpuKernels(g));
  ASSERT_TRUE(checked.ok()) << checked.message();
  Tensor x(DType::kFloat32, {1, 8, 12, 12});
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.data<float>()[i] = static_cast<float>(i % 11) - 5;
  }
  cpu::CpuExecutor allocating(g), with_plan(g, *planned);
  StatusOr<std::vector<Tensor>> want = allocating.Run({x}), got = with_plan.Run({x});
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ((*got)[0].size_bytes(), (*want)[0].size_bytes());
  EXPECT_EQ(std::memcmp((*got)[0].raw_data(), (*want)[0].raw_data(), (*want)[0].size_bytes()), 0);
}

TEST(PlanMemory, Tensors_exchanged_in_a_kernels_layout_plan_no_reorder_buffers) {
  ConvChain chain;
  const ir::Graph& g = chain.g;
  const std::vector<std::vector<ops::ScratchNeed>> negotiated = cpu::GraphScratchNeeds(g);
  ASSERT_EQ(negotiated.size(), 3u);
  const std::vector<std::vector<ops::ScratchNeed>> alone = NeedsAlone(g);
  if (BytesOf(alone[0], "output in kernel layout") <= 0 ||
      BytesOf(negotiated[0], "output in kernel layout") != 0) {
    GTEST_SKIP() << "the convolutions do not exchange a_out in the graph's layout here (no "
                    "oneDNN, or it picks a layout other than the graph's)";
  }
  // a_out and b_out flow conv to conv in the graph's layout: neither side
  // reorders them, so those buffers take no memory. x and y stay plain.
  EXPECT_EQ(BytesOf(negotiated[0], "output in kernel layout"), 0);
  EXPECT_EQ(BytesOf(negotiated[1], "input in kernel layout"), 0);
  EXPECT_EQ(BytesOf(negotiated[1], "output in kernel layout"), 0);
  EXPECT_EQ(BytesOf(negotiated[2], "input in kernel layout"), 0);
  EXPECT_EQ(BytesOf(negotiated[0], "input in kernel layout"),
            BytesOf(alone[0], "input in kernel layout"));
  EXPECT_EQ(BytesOf(negotiated[2], "output in kernel layout"),
            BytesOf(alone[2], "output in kernel layout"));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(negotiated[i].size(), alone[i].size()) << i;
  ExpectPlannedRunMatches(g);
}

TEST(PlanMemory, A_pool_between_convs_plans_the_scratchpad_of_the_layout_it_runs_in) {
  ConvChain chain(/*pool=*/true);
  const ir::Graph& g = chain.g;
  const std::vector<std::vector<ops::ScratchNeed>> negotiated = cpu::GraphScratchNeeds(g);
  const std::vector<std::vector<ops::ScratchNeed>> alone = NeedsAlone(g);
  ASSERT_EQ(negotiated.size(), 3u);
  const int64_t plain = BytesOf(alone[1], "onednn scratchpad");
  if (plain <= 0 || BytesOf(negotiated[0], "output in kernel layout") != 0) {
    GTEST_SKIP() << "no oneDNN pool with a scratchpad in the plain layout between convolutions "
                    "that exchange tensors in another layout here";
  }
  // oneDNN's pooling transposes a plain tensor through its scratchpad; in
  // the convolutions' layout, next to them, it reads the tensor as it is.
  EXPECT_LT(BytesOf(negotiated[1], "onednn scratchpad"), plain);
  ExpectPlannedRunMatches(g);
}

TEST(PlanMemory, Uses_the_users_pools_in_order) {
  Chain c;
  MemoryOptions o = Options();
  o.pools = {*memory::ParsePoolSpec("name=sram,size=512"), *memory::ParsePoolSpec("name=dram"),
             *memory::ParsePoolSpec("name=flash,access=ro")};
  StatusOr<ir::MemoryLayout> layout = PlanMemory(c.g, CpuKernels(c.g), o);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  ASSERT_EQ(layout->pools.size(), 3u);
  EXPECT_EQ(layout->pools[0].name, "sram");
  EXPECT_LE(layout->pools[0].size_bytes, 512);
  EXPECT_GT(layout->pools[1].size_bytes, 0);  // the overflow
  EXPECT_EQ(layout->values[static_cast<size_t>(c.w->id)].pool, 2);
  EXPECT_TRUE(CheckMemoryLayout(c.g, *layout).ok());
}

TEST(PlanMemory, rejects_a_pool_too_small_naming_it) {
  Chain c;
  MemoryOptions o = Options();
  o.pools = {*memory::ParsePoolSpec("name=sram,size=300")};
  StatusOr<ir::MemoryLayout> layout = PlanMemory(c.g, CpuKernels(c.g), o);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find(
                "pool 'sram' is too small: limit 300 bytes, the plan needs 768 bytes"),
            std::string::npos)
      << layout.status().message();
  o.pools.push_back(o.pools[0]);
  EXPECT_NE(
      PlanMemory(c.g, CpuKernels(c.g), o).status().message().find("pool 'sram' is given twice"),
      std::string::npos);
}

TEST(CheckMemoryLayout, rejects_layouts_that_do_not_fit_the_graph) {
  Chain c;
  StatusOr<ir::MemoryLayout> good = PlanMemory(c.g, CpuKernels(c.g), Options());
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE(CheckMemoryLayout(c.g, *good).ok());
  struct Case {
    const char* message;
    std::function<void(ir::MemoryLayout&)> corrupt;
  } cases[] = {
      {"value 'd' does not fit",
       [&](ir::MemoryLayout& l) {
         l.values[static_cast<size_t>(c.d->id)].offset_bytes += 1 << 20;
       }},
      {"value 'w' does not fit",
       [&](ir::MemoryLayout& l) { l.values[static_cast<size_t>(c.w->id)].pool = 0; }},
      {"value 'd' has no place",
       [&](ir::MemoryLayout& l) { l.values[static_cast<size_t>(c.d->id)].pool = -1; }},
      {"Add 'n2' runs in place", [&](ir::MemoryLayout& l) { l.in_place[2] = 1; }},
      {"its size does not match", [&](ir::MemoryLayout& l) { l.in_place.pop_back(); }},
      {"Concat 'n3' has 1 scratch buffers",
       [&](ir::MemoryLayout& l) {
         l.scratch[3].push_back({0, 0});
       }},
      // c (256 bytes, a and b before it, in place) is read by the Concat
      // that writes d (512 bytes): both live at step 3. Moved over c, d
      // stays inside the 768-byte pool.
      {"its buffers overlap at the sizes of this machine's kernels",
       [&](ir::MemoryLayout& l) {
         const ir::BufferPlacement& at = l.values[static_cast<size_t>(c.c->id)];
         l.values[static_cast<size_t>(c.d->id)] = {at.pool,
                                                   std::min<int64_t>(at.offset_bytes, 256)};
       }},
      {"its in-place choices are not this compiler's",
       [&](ir::MemoryLayout& l) { l.in_place[1] = -1; }},
  };
  for (const Case& k : cases) {
    ir::MemoryLayout bad = *good;
    k.corrupt(bad);
    Status s = CheckLayoutFitsKernels(c.g, bad, CpuKernels(c.g));
    ASSERT_FALSE(s.ok()) << k.message;
    EXPECT_NE(s.message().find(k.message), std::string::npos) << s.message();
  }
}

TEST(CheckMemoryLayout, rejects_scratch_that_would_overlap_a_live_tensor_at_this_cpus_size) {
  // As a model compiled where a kernel needed less scratch (a reorder
  // buffer negotiated away, a smaller scratchpad) and loaded here: the
  // placement lies inside the pool but over a tensor live at the same step.
  ConvChain chain;
  const ir::Graph& g = chain.g;
  StatusOr<ir::MemoryLayout> good = PlanMemory(g, CpuKernels(g), Options());
  ASSERT_TRUE(good.ok()) << good.status().message();
  const Status checked = CheckLayoutFitsKernels(g, *good, CpuKernels(g));
  ASSERT_TRUE(checked.ok()) << checked.message();
  // A scratch buffer of a conv that fits over the conv's input or output:
  // both are live while it runs (x and y are the caller's, not planned).
  const std::vector<std::vector<ops::ScratchNeed>> needs = cpu::GraphScratchNeeds(g);
  ir::MemoryLayout bad = *good;
  bool misplaced = false;
  for (size_t i = 0; i < needs.size() && !misplaced; ++i) {
    for (size_t k = 0; k < needs[i].size() && !misplaced; ++k) {
      for (const ir::Value* v : {g.nodes()[i]->input(0), g.nodes()[i]->output(0)}) {
        const ir::BufferPlacement& at = good->values[static_cast<size_t>(v->id)];
        if (misplaced || !at.planned() || needs[i][k].size_bytes == 0 ||
            needs[i][k].size_bytes > static_cast<int64_t>(v->size_bytes()))
          continue;
        bad.scratch[i][k] = at;
        misplaced = true;
      }
    }
  }
  if (!misplaced) GTEST_SKIP() << "no convolution has scratch that fits over a tensor here";
  Status s = CheckLayoutFitsKernels(g, bad, CpuKernels(g));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("overlap at the sizes of this machine's kernels"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("recompile"), std::string::npos) << s.message();
}

class PlannedExecution : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_plan_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Conv (accumulates into its output) -> Relu -> Add (in place) -> Conv ->
  // Flatten -> MatMul -> Softmax, fusion off so the elementwise ops run
  // their reference kernels in place.
  fs::path WriteNet() {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    auto random = [&](Shape s) {
      Tensor t(DType::kFloat32, s);
      for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
      return t;
    };
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 3, 8, 8});
    b.Initializer("w1", random({4, 3, 3, 3}));
    b.Initializer("b1", random({4}));
    b.Initializer("w2", random({4, 4, 3, 3}));
    b.Initializer("m", random({256, 10}));
    ModelBuilder::SetAttr(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads",
                          std::vector<int64_t>{1, 1, 1, 1});
    b.Node("Relu", {"c1"}, {"r1"});
    b.Node("Add", {"r1", "r1"}, {"s1"});
    ModelBuilder::SetAttr(b.Node("Conv", {"s1", "w2"}, {"c2"}), "pads",
                          std::vector<int64_t>{1, 1, 1, 1});
    b.Node("Flatten", {"c2"}, {"f"});
    b.Node("MatMul", {"f", "m"}, {"z"});
    b.Node("Softmax", {"z"}, {"y"});
    b.Output("y");
    const fs::path p = dir_ / "net.onnx";
    EXPECT_TRUE(b.Save(p).ok());
    return p;
  }

  static std::vector<Tensor> RunWith(const fs::path& model, const std::string& planner,
                                     bool plan_io, const std::vector<Tensor>& inputs,
                                     cpu::RunStats* stats = nullptr) {
    CompilerOptions o;
    o.fusion = false;
    o.memory.algorithm = planner;
    o.memory.plan_io = plan_io;
    o.memory.planner.verify = true;
    StatusOr<CompiledModel> m = Compile(model, targets::testing::Cpu(), o);
    EXPECT_TRUE(m.ok()) << m.status().message();
    std::unique_ptr<cpu::CpuExecutor> exec =
        m->memory.empty() ? std::make_unique<cpu::CpuExecutor>(*m->graph)
                          : std::make_unique<cpu::CpuExecutor>(*m->graph, m->memory);
    std::vector<Tensor> out;
    for (int run = 0; run < 2; ++run) {  // the second run reuses dirty arenas
      StatusOr<std::vector<Tensor>> r = exec->Run(inputs);
      EXPECT_TRUE(r.ok()) << r.status().message();
      out = *r;
    }
    if (stats) *stats = exec->stats();
    return out;
  }

  fs::path dir_;
};

TEST_F(PlannedExecution, Gives_the_same_bits_as_the_allocating_executor) {
  const fs::path model = WriteNet();
  Tensor x(DType::kFloat32, {1, 3, 8, 8});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) - 3;
  cpu::RunStats reference_stats, planned_stats;
  const std::vector<Tensor> reference = RunWith(model, "none", false, {x}, &reference_stats);
  for (const char* planner : {"auto", "greedy_by_size", "hill_climb", "optimal"}) {
    for (bool plan_io : {false, true}) {
      const std::vector<Tensor> planned = RunWith(model, planner, plan_io, {x}, &planned_stats);
      ASSERT_EQ(planned.size(), reference.size());
      ASSERT_EQ(planned[0].size_bytes(), reference[0].size_bytes());
      EXPECT_EQ(
          std::memcmp(planned[0].raw_data(), reference[0].raw_data(), reference[0].size_bytes()), 0)
          << planner << (plan_io ? " with planned io" : "");
    }
  }
  // The planned executor reports the reference peak, predicted, next to its
  // workspace.
  EXPECT_EQ(planned_stats.peak_activation_bytes, reference_stats.peak_activation_bytes);
  EXPECT_GT(planned_stats.workspace_bytes, 0);
}

TEST_F(PlannedExecution, The_layout_survives_the_model_file) {
  CompilerOptions o;
  o.memory.planner.verify = true;
  StatusOr<CompiledModel> m = Compile(WriteNet(), targets::testing::Cpu(), o);
  ASSERT_TRUE(m.ok());
  ASSERT_FALSE(m->memory.empty());
  StatusOr<CompiledModel> back = DeserializeCompiledModel(SerializeCompiledModel(*m), "net.tsl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->memory.algorithm, m->memory.algorithm);
  ASSERT_EQ(back->memory.values.size(), m->memory.values.size());
  for (size_t i = 0; i < m->memory.values.size(); ++i) {
    EXPECT_EQ(back->memory.values[i].pool, m->memory.values[i].pool);
    EXPECT_EQ(back->memory.values[i].offset_bytes, m->memory.values[i].offset_bytes);
  }
  EXPECT_EQ(back->memory.in_place, m->memory.in_place);
  // A layout that reaches past its arena is refused at load.
  m->memory.pools[0].size_bytes = 1;
  StatusOr<CompiledModel> bad = DeserializeCompiledModel(SerializeCompiledModel(*m), "bad.tsl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("compiled model 'bad.tsl' has a bad memory layout"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace tessel
