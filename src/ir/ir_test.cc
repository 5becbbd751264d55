#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tessel::ir {
namespace {

TEST(DType, Half_round_trips_representable_values) {
  for (float f :
       {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
}

TEST(DType, Half_rounds_to_nearest_even_and_saturates_to_inf) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 1.0f / 2048)), 1.0f);                // tie -> even
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);  // tie -> even (up)
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
}

TEST(DType, BFloat16_keeps_the_top_bits) {
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.5f)), 1.5f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(-3.0f)), -3.0f);
  EXPECT_NEAR(BFloat16ToFloat(FloatToBFloat16(3.14159f)), 3.14159f, 0.02f);
}

TEST(Tensor, Conversions_to_integers_saturate_and_map_nan_to_zero) {
  EXPECT_EQ(FromDouble<uint8_t>(-29.0), 0);
  EXPECT_EQ(FromDouble<uint8_t>(300.0), 255);
  EXPECT_EQ(FromDouble<uint8_t>(254.9), 254);
  EXPECT_EQ(FromDouble<int8_t>(-1e9), -128);
  EXPECT_EQ(FromDouble<int64_t>(1e300), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(FromDouble<int64_t>(-std::numeric_limits<double>::infinity()),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(FromDouble<int32_t>(std::nan("")), 0);
  EXPECT_EQ(FromDouble<uint64_t>(-1.0), 0u);
  EXPECT_EQ(FromDouble<int64_t>(-3.7), -3);  // truncation inside the range, as static_cast
}

TEST(Tensor, Checked_byte_sizes_refuse_negative_dims_and_overflow) {
  int64_t bytes = -1;
  EXPECT_TRUE(CheckedByteSize({2, 3}, DType::kFloat32, &bytes));
  EXPECT_EQ(bytes, 24);
  EXPECT_TRUE(CheckedByteSize({}, DType::kInt64, &bytes));
  EXPECT_EQ(bytes, 8);
  EXPECT_TRUE(CheckedByteSize({0, 1000000000000}, DType::kFloat32, &bytes));
  EXPECT_EQ(bytes, 0);
  EXPECT_FALSE(CheckedByteSize({2, -3}, DType::kFloat32, &bytes));
  EXPECT_FALSE(CheckedByteSize({100000000000, 1000000, 1000000}, DType::kFloat32, &bytes));
  EXPECT_FALSE(CheckedByteSize({int64_t{1} << 61}, DType::kFloat32, &bytes));
  // Empty, but Flatten would multiply 2^62 by 5.
  EXPECT_FALSE(CheckedByteSize({0, int64_t{1} << 62, 5}, DType::kFloat32, &bytes));
  EXPECT_FALSE(CheckedByteSize({int64_t{1} << 62, 5, 0}, DType::kUInt8, &bytes));
}

TEST(Tensor, Owns_zeroed_aligned_storage) {
  Tensor t(DType::kFloat32, {2, 3});
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.size_bytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
}

TEST(Tensor, Copies_share_storage_and_clone_does_not) {
  Tensor a = Tensor::FromVector<int64_t>({1, 2, 3}, {3});
  Tensor b = a;
  Tensor c = a.Clone();
  a.data<int64_t>()[0] = 42;
  EXPECT_EQ(b.data<int64_t>()[0], 42);
  EXPECT_EQ(c.data<int64_t>()[0], 1);
  EXPECT_EQ(c.ToInt64Vector(), (std::vector<int64_t>{1, 2, 3}));
}

TEST(Tensor, Strides_are_row_major) {
  EXPECT_EQ(StridesOf({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ShapeToString({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(ShapeToString({}), "scalar");
}

TEST(Graph, Sorts_topologically_and_keeps_order_otherwise) {
  Graph g;
  Value* x = g.AddValue("x", DType::kFloat32, {2}, true);
  g.inputs().push_back(x);
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  g.AddNode("Relu", "second", {a}, {b});
  g.AddNode("Relu", "first", {x}, {a});
  g.outputs().push_back(b);
  ASSERT_TRUE(g.SortTopologically().ok());
  EXPECT_EQ(g.nodes()[0]->name, "first");
  EXPECT_EQ(g.nodes()[1]->name, "second");
}

TEST(Graph, SortTopologically_rejects_a_cycle_naming_a_node) {
  Graph g;
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  g.AddNode("Relu", "n1", {a}, {b});
  g.AddNode("Relu", "n2", {b}, {a});
  Status s = g.SortTopologically();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("Relu 'n"), std::string::npos) << s.message();
}

TEST(Graph, RemoveNodes_drops_unreferenced_values_and_renumbers) {
  Graph g;
  Value* x = g.AddValue("x", DType::kFloat32, {2}, true);
  g.inputs().push_back(x);
  Value* a = g.AddValue("a", DType::kFloat32, {2}, true);
  Value* dead = g.AddValue("dead", DType::kFloat32, {2}, true);
  g.AddNode("Relu", "keep", {x}, {a});
  g.AddNode("Relu", "drop", {x}, {dead});
  g.outputs().push_back(a);
  g.RemoveNodes([](const Node& n) { return n.name == "drop"; });
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.values().size(), 2u);
  EXPECT_EQ(g.FindValue("dead"), nullptr);
  EXPECT_TRUE(VerifyGraph(g).ok());
}

TEST(Verifier, rejects_use_before_definition) {
  Graph g;
  Value* a = g.AddValue("a", DType::kFloat32, {2}, true);
  Value* b = g.AddValue("b", DType::kFloat32, {2}, true);
  g.AddNode("Relu", "n", {a}, {b});
  g.outputs().push_back(b);
  Status s = VerifyGraph(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reads 'a' before it is produced"), std::string::npos) << s.message();
}

TEST(Verifier, rejects_untyped_values_and_mismatched_constants) {
  Graph g;
  Value* c = g.AddConstant("c", Tensor(DType::kFloat32, {2}));
  c->shape = {3};
  g.outputs().push_back(c);
  Status s = VerifyGraph(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("constant 'c'"), std::string::npos) << s.message();
}

TEST(Printer, Prints_inputs_nodes_and_attributes) {
  Graph g;
  g.set_name("tiny");
  g.set_opset_version(13);
  Value* x = g.AddValue("x", DType::kFloat32, {1, 4}, true);
  g.inputs().push_back(x);
  Value* y = g.AddValue("y", DType::kFloat32, {1, 4}, true);
  Node* n = g.AddNode("LeakyRelu", "lrelu", {x}, {y});
  n->attrs.Set("alpha", 0.5f);
  g.outputs().push_back(y);
  std::ostringstream os;
  PrintGraph(g, os);
  EXPECT_NE(os.str().find("graph 'tiny' opset 13: 1 nodes"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("%y = LeakyRelu(%x) {alpha=0.5} : float32 1x4"), std::string::npos)
      << os.str();
}

}  // namespace
}  // namespace tessel::ir
