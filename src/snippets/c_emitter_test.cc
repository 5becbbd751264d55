// The C-family emitter's dialects: text checks (no device or C compiler
// needed; the OpenCL executor tests compile and run what the OpenCL dialect
// emits against the reference, tests/c_target what the C99 one emits).
#include "snippets/c_emitter.h"

#include <gtest/gtest.h>

#include "snippets/lower.h"
#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

using testing::BodyBuilder;

TEST(OpenClEmitter, Indexes_broadcast_arguments_by_their_strides) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 1000});
  ir::Value* bias = b.Input("bias", {4, 1});
  ir::Value* mask = b.Input("mask", {1000}, DType::kBool);
  ir::Value* sum = b.Op("Add", {x, bias});
  b.Output(b.Op("Where", {mask, sum, b.Op("Relu", {sum})}));
  auto ir = LowerSubgraph(b.graph());
  ASSERT_TRUE(ir.ok()) << ir.status().message();
  const std::string src = EmitOpenClKernel(*ir, "f32_snippet_0__opencl");
  EXPECT_NE(src.find("__kernel void f32_snippet_0__opencl(__global const float* a0, int a0_off, "),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("__global const uchar* a2"), std::string::npos) << src;
  EXPECT_NE(src.find("const int i = get_global_id(0);"), std::string::npos) << src;
  EXPECT_NE(src.find("if (i >= n) return;"), std::string::npos) << src;
  // The bias walks rows only (stride 1 per row), the mask columns only.
  EXPECT_NE(src.find("const int o1 = a1_off + d4 * 1;"), std::string::npos) << src;
  EXPECT_NE(src.find("const int o2 = a2_off + d5 * 1;"), std::string::npos) << src;
  EXPECT_NE(src.find("!= 0) ? 1.0f : 0.0f"), std::string::npos) << src;
  EXPECT_NE(src.find("a3[o3] = "), std::string::npos) << src;
}

TEST(OpenClEmitter, Immediates_read_back_exactly) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {16});
  b.Output(b.Op("Mul", {x, b.Scalar(0.1f)}));
  auto ir = LowerSubgraph(b.graph());
  ASSERT_TRUE(ir.ok()) << ir.status().message();
  const std::string src = EmitOpenClKernel(*ir, "k");
  // 0.1f as a hex float: exact, whatever the OpenCL compiler's rounding.
  EXPECT_NE(src.find("0x1.99999ap-4f"), std::string::npos) << src;
}

TEST(C99Emitter, Loops_over_the_domain_with_unit_stride_innermost) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {4, 1000});
  ir::Value* bias = b.Input("bias", {4, 1});
  ir::Value* sum = b.Op("Add", {x, bias});
  b.Output(b.Op("Sigmoid", {sum}));
  auto ir = LowerSubgraph(b.graph());
  ASSERT_TRUE(ir.ok()) << ir.status().message();
  const std::string src = EmitC99Kernel(*ir, "snippet_0");
  // Plain pointers at their element: no offsets, no element count, no
  // restrict (an output may be planned over an input).
  EXPECT_NE(src.find("static void snippet_0(const float* a0, const float* a1, float* a2) {"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("restrict"), std::string::npos) << src;
  EXPECT_EQ(src.find("get_global_id"), std::string::npos) << src;
  // Rows outside, columns inside; x contiguous, the bias once per row.
  const size_t rows = src.find("for (long d4 = 0; d4 < 4; ++d4) {");
  const size_t cols = src.find("for (long d5 = 0; d5 < 1000; ++d5) {");
  ASSERT_NE(rows, std::string::npos) << src;
  ASSERT_NE(cols, std::string::npos) << src;
  EXPECT_LT(rows, cols);
  EXPECT_NE(src.find("a0[d4 * 1000 + d5]"), std::string::npos) << src;
  EXPECT_NE(src.find("a1[d4]"), std::string::npos) << src;
  // C99's float math, not OpenCL's overloads.
  EXPECT_NE(src.find("expf("), std::string::npos) << src;
  EXPECT_EQ(src.find(" exp("), std::string::npos) << src;
}

TEST(C99Emitter, Bool_arguments_are_unsigned_char) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {8});
  ir::Value* mask = b.Input("mask", {8}, DType::kBool);
  b.Output(b.Op("Where", {mask, x, b.Op("Neg", {x})}));
  auto ir = LowerSubgraph(b.graph());
  ASSERT_TRUE(ir.ok()) << ir.status().message();
  const std::string src = EmitC99Kernel(*ir, "k");
  EXPECT_NE(src.find("const unsigned char* a"), std::string::npos) << src;
  EXPECT_EQ(src.find("uchar"), std::string::npos) << src;
}

}  // namespace
}  // namespace tessel::snippets
