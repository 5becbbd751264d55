// The C-family emitter's OpenCL C dialect: text checks (no device needed; the
// OpenCL executor tests compile and run what it emits against the reference).
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

}  // namespace
}  // namespace tessel::snippets
