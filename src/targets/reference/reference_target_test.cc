#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "targets/cpu/target.h"
#include "targets/reference/target.h"
#include "targets/registry.h"
#include "targets/testing.h"

namespace tessel::targets {
namespace {

// x -> Relu -> Add(., x) -> y, typed.
struct SmallGraph {
  ir::Graph g;
  SmallGraph() {
    g.set_opset_version(17);
    ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
    ir::Value* r = g.AddValue("r", DType::kFloat32, {2, 3}, true);
    ir::Value* y = g.AddValue("y", DType::kFloat32, {2, 3}, true);
    g.inputs().push_back(x);
    g.AddNode("Relu", "relu", {x}, {r});
    g.AddNode("Add", "add", {r, x}, {y});
    g.outputs().push_back(y);
  }
};

TEST(TargetSpec, Prints_its_options_and_reads_them_back) {
  const TargetSpec spec{"cpu", {{"isa", "avx2"}, {"threads", "2"}}};
  EXPECT_EQ(spec.ToString(), "cpu isa=avx2 threads=2");
  EXPECT_EQ(spec.Option("isa"), "avx2");
  EXPECT_EQ(spec.Option("winograd", "auto"), "auto");
}

TEST(KernelChoice, Prints_its_fields_and_compares_the_decision_not_the_library_pick) {
  const ir::KernelChoice conv{.family = ir::KernelFamily::kOneDnn,
                              .implementation = "conv",
                              .variant = "direct x,y",
                              .detail = "brgconv:avx512_core"};
  EXPECT_EQ(conv.ToString(), "onednn conv (brgconv:avx512_core) direct x,y");
  ir::KernelChoice other_cpu = conv;
  other_cpu.detail = "jit:avx512_core";
  EXPECT_TRUE(conv.SameDecision(other_cpu));
  ir::KernelChoice reordered = conv;
  reordered.variant = "direct x";
  EXPECT_FALSE(conv.SameDecision(reordered));
  ir::KernelChoice winograd = conv;
  winograd.implementation = "winograd conv";
  EXPECT_FALSE(conv.SameDecision(winograd));
}

TEST(Registry, Names_every_target_and_rejects_what_it_does_not_know) {
  const std::vector<std::string> names = TargetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "reference"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  StatusOr<std::unique_ptr<Target>> unknown = MakeTarget({"tpu", {}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown target 'tpu'"), std::string::npos);
  StatusOr<std::unique_ptr<Target>> option = MakeTarget({"reference", {{"isa", "avx2"}}});
  ASSERT_FALSE(option.ok());
  EXPECT_NE(option.status().message().find("no options"), std::string::npos);
  StatusOr<std::unique_ptr<Target>> cpu_option = MakeTarget({"cpu", {{"colour", "red"}}});
  ASSERT_FALSE(cpu_option.ok());
  EXPECT_NE(cpu_option.status().message().find("unknown option 'colour'"), std::string::npos);
  StatusOr<std::unique_ptr<Target>> bad_isa = MakeTarget({"cpu", {{"isa", "sse9"}}});
  ASSERT_FALSE(bad_isa.ok());
  EXPECT_NE(bad_isa.status().message().find("isa 'sse9'"), std::string::npos);
  StatusOr<std::unique_ptr<Target>> threads = MakeTarget({"cpu", {{"threads", "two"}}});
  ASSERT_FALSE(threads.ok());
  EXPECT_NE(threads.status().message().find("threads='two'"), std::string::npos);
}

TEST(CpuTarget, Resolves_auto_and_accepts_models_of_its_isa_whatever_their_thread_count) {
  const Target& cpu = testing::Cpu();
  const std::string isa = cpu.spec().Option("isa");
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "generic") << isa;
  TargetSpec other_threads = cpu.spec();
  other_threads.options["threads"] = "7";
  EXPECT_TRUE(cpu.Accepts(other_threads));
  TargetSpec other_isa = cpu.spec();
  other_isa.options["isa"] = isa == "avx2" ? "generic" : "avx2";
  EXPECT_FALSE(cpu.Accepts(other_isa));
  EXPECT_FALSE(cpu.Accepts({"reference", {}}));
  // One process runs oneDNN at one ISA: another one is refused (or is one
  // this CPU lacks); isa generic, which runs no oneDNN, may sit beside it.
  if (isa != "generic") {
    TargetSpec other_onednn_isa = cpu.spec();
    other_onednn_isa.options["isa"] = isa == "avx2" ? "avx512" : "avx2";
    StatusOr<std::unique_ptr<Target>> switched = MakeTarget(other_onednn_isa);
    EXPECT_FALSE(switched.ok());
    TargetSpec generic = cpu.spec();
    generic.options["isa"] = "generic";
    StatusOr<std::unique_ptr<Target>> beside = MakeTarget(generic);
    EXPECT_TRUE(beside.ok()) << beside.status().message();
  }
}

TEST(ReferenceTarget, Selects_the_ops_own_kernels_and_runs_as_the_op_tests_evaluate) {
  SmallGraph s;
  StatusOr<KernelDecisions> kernels = testing::Reference().SelectKernels(s.g);
  ASSERT_TRUE(kernels.ok());
  ASSERT_EQ(kernels->nodes.size(), 2u);
  EXPECT_EQ(kernels->nodes[0].kernel.family, ir::KernelFamily::kReference);
  ASSERT_EQ(kernels->values.size(), s.g.values().size());
  for (const ValuePlacement& p : kernels->values) {
    EXPECT_EQ(p.layout, ir::Layout::kPlain);
    EXPECT_EQ(p.scope, ir::StorageScope::kGlobal);
  }
  const Tensor x = Tensor::FromVector<float>({-1, 2, -3, 4, 0, 6}, {2, 3});
  StatusOr<std::vector<Tensor>> out = testing::RunReference(s.g, {x});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<Tensor> expected = ops::test_util::EvaluateGraph(s.g, {x});
  ASSERT_EQ(out->size(), 1u);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    EXPECT_EQ((*out)[0].data<float>()[i], expected[0].data<float>()[i]) << i;
  }
  // Inputs are checked at every run.
  StatusOr<std::vector<Tensor>> wrong =
      testing::RunReference(s.g, {Tensor::FromVector<float>({1, 2}, {2})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("input 'x' has shape"), std::string::npos);
}

TEST(ReferenceTarget, Rejects_an_op_without_a_kernel_naming_the_node) {
  SmallGraph s;
  s.g.AddNode("NoSuchOp", "mystery", {s.g.inputs()[0]}, {});
  StatusOr<KernelDecisions> kernels = testing::Reference().SelectKernels(s.g);
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(kernels.status().message().find("NoSuchOp 'mystery'"), std::string::npos);
}

}  // namespace
}  // namespace tessel::targets

namespace tessel::targets {
namespace {

TEST(Profile, A_reference_kernel_is_slow_unless_it_moves_no_data) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
  const ir::Node* resize = g.AddNode("Resize", "r", {x}, {g.AddValue("y")});
  const ir::Node* reshape = g.AddNode("Reshape", "s", {x}, {g.AddValue("z")});
  const ir::Node* shape = g.AddNode("Shape", "t", {x}, {g.AddValue("w")});
  EXPECT_TRUE(ReferenceChoice(*resize).slow);
  EXPECT_FALSE(ReferenceChoice(*reshape).slow);  // a view: moves nothing
  EXPECT_FALSE(ReferenceChoice(*shape).slow);
}

TEST(Profile, The_report_marks_slow_paths_and_gives_their_share) {
  const std::vector<ProfileRow> rows = {
      {"Conv", "onednn conv (jit:avx2)", 3, 6.0, false},
      {"Resize", "reference", 1, 3.0, true},
      {"MaxPool", "onednn max pool (simple_nchw:any)", 2, 1.0, true}};
  const std::string report = FormatProfile(rows, 10);
  EXPECT_NE(report.find("total 10.000 ms, 10 runs"), std::string::npos) << report;
  // Slowest first; each slow row marked.
  EXPECT_LT(report.find("Conv"), report.find("Resize")) << report;
  EXPECT_NE(report.find("Resize  reference (1 node)  <- slow path"), std::string::npos) << report;
  EXPECT_EQ(report.find("(jit:avx2) (3 nodes)  <- slow"), std::string::npos) << report;
  EXPECT_NE(report.find("slow paths  40.0% of the time in 3 nodes; the most: Resize reference, "
                        "30.0%"),
            std::string::npos)
      << report;
  EXPECT_NE(FormatProfile({rows[0]}, 1).find("slow paths  none"), std::string::npos);
}

}  // namespace
}  // namespace tessel::targets
