// The image kernels (texture_kernels.cl.inc) against the reference op
// kernels, one node at a time: the node's launches come from
// BuildTextureNodeLaunches, run on images this test allocates, fills
// through the conversion kernels (weights through ir::PackTexels) and
// reads back through them. Every tensor sits at a non-zero corner of an
// image larger than it, the rest of the image NaN, so that a kernel reading
// outside its tensor's region (padding taken from the neighbour's texels)
// or writing a pad lane other than zero fails. Without an OpenCL device
// with images the device tests skip, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/texture.h"
#include "onnx/test_data.h"
#include "ops/fused_activation.h"
#include "ops/op_registry.h"
#include "ops/op_test_util.h"
#include "targets/opencl/cl_error.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/test_env.h"
#include "targets/opencl/texture_launches.h"

namespace tessel::opencl {
namespace {

using ops::ActivationKind;
using ops::FusedActivation;
using ops::test_util::RandomFloats;

constexpr int kOpset = 17;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The inverse of ir::PackTexels: texels of `layout` back to a tensor of
// logical `shape` (the tests' view of the texel formulas of ir/texture.h).
Tensor UnpackTexels(const std::vector<float>& texels, const Shape& shape, ir::Layout layout) {
  const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(shape, layout);
  Tensor t(DType::kFloat32, shape);
  const int64_t a = shape[0], b = shape[1], c = shape[2], d = shape[3];
  for (int64_t i0 = 0; i0 < a; ++i0) {
    for (int64_t i1 = 0; i1 < b; ++i1) {
      for (int64_t i2 = 0; i2 < c; ++i2) {
        for (int64_t i3 = 0; i3 < d; ++i3) {
          int64_t x = 0, y = 0, lane = 0;
          if (layout == ir::Layout::kNCHW4c) {
            x = i3, y = (i0 * ir::Texels(b) + i1 / 4) * c + i2, lane = i1 % 4;
          } else if (layout == ir::Layout::kOIHW4o) {
            x = (i1 * c + i2) * d + i3, y = i0 / 4, lane = i0 % 4;
          } else {
            x = i2 * d + i3, y = i0 / 4, lane = i0 % 4;
          }
          t.data<float>()[((i0 * b + i1) * c + i2) * d + i3] =
              texels[static_cast<size_t>((y * e->width + x) * 4 + lane)];
        }
      }
    }
  }
  return t;
}

TEST(PackTexels, places_every_element_as_the_layout_says) {
  const Tensor act = RandomFloats({2, 5, 3, 4}, 1);
  const std::vector<float> t = ir::PackTexels(act, ir::Layout::kNCHW4c);
  ASSERT_EQ(t.size(), static_cast<size_t>(4 * 2 * 2 * 3 * 4));  // width 4, height 2*2*3
  // (n=1, c=4, h=2, w=3): lane 0 of texel (3, (1*2 + 1)*3 + 2).
  EXPECT_EQ(t[((11 * 4) + 3) * 4 + 0], act.data<float>()[((1 * 5 + 4) * 3 + 2) * 4 + 3]);
  EXPECT_EQ(t[((11 * 4) + 3) * 4 + 1], 0.0f);  // channel 5: a pad lane
  const Tensor w = RandomFloats({6, 3, 2, 2}, 2);
  const std::vector<float> tw = ir::PackTexels(w, ir::Layout::kOIHW4o);
  ASSERT_EQ(tw.size(), static_cast<size_t>(16 * 2 * 4));  // width 4*2*2, height 2
  // (o=5, i=2, kh=1, kw=0): lane 1 of texel ((2*2 + 1)*2 + 0, 1).
  EXPECT_EQ(tw[((1 * 16) + 10) * 4 + 1], w.data<float>()[((5 * 3 + 2) * 2 + 1) * 2 + 0]);
  for (const auto& [tensor, layout] :
       {std::pair{act, ir::Layout::kNCHW4c}, std::pair{w, ir::Layout::kOIHW4o},
        std::pair{RandomFloats({7, 1, 3, 3}, 3), ir::Layout::kOHW4o}}) {
    const Tensor back = UnpackTexels(ir::PackTexels(tensor, layout), tensor.shape(), layout);
    const auto c = onnx_io::CompareTensors(back, tensor, 0, 0);
    EXPECT_TRUE(c.ok) << ir::LayoutName(layout) << ": " << c.mismatches << " elements off";
  }
}

// A tensor's place on the device: a plan buffer index of this test's table
// (an image or a buffer) and, for images, the region's corner and extent.
struct Placed {
  TensorRef ref;
  ir::TextureExtent extent;
};

class TextureKernelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_reason_ = new std::string(DeviceTestSkipReason());
    if (!skip_reason_->empty()) return;
    RuntimeOptions options;
    options.cache_dir = TESSEL_TEST_CACHE_DIR;
    auto rt = Runtime::Create("", options);
    if (!rt.ok()) {
      *skip_reason_ = "OpenCL runtime unavailable: " + rt.status().message();
      return;
    }
    if (!(*rt)->device().image_support) {
      *skip_reason_ = (*rt)->device().name + " has no image support";
      return;
    }
    runtime_ = rt->release();
    StatusOr<cl_program> program = runtime_->BuildProgram(OpKernelSource(), ProgramOptions());
    if (!program.ok()) {
      *skip_reason_ = "";
      build_error_ = new std::string(program.status().message());
      return;
    }
    program_ = *program;
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
    delete skip_reason_;
    skip_reason_ = nullptr;
    delete build_error_;
    build_error_ = nullptr;
  }
  void SetUp() override {
    if (!skip_reason_->empty()) GTEST_SKIP() << *skip_reason_;
    ASSERT_EQ(build_error_, nullptr) << *build_error_;
  }

  cl_command_queue queue() const { return runtime_->queue(); }

  int32_t Add(cl_mem m) {
    mems_.push_back(m);
    return static_cast<int32_t>(mems_.size() - 1);
  }

  // A buffer holding `t` at element `offset` (the elements before it NaN).
  Placed Buffer(const Tensor& t, int32_t offset = 0) {
    std::vector<float> data(static_cast<size_t>(offset), kNaN);
    data.insert(data.end(), t.data<float>(), t.data<float>() + t.num_elements());
    StatusOr<cl_mem> m = runtime_->Allocate(static_cast<int64_t>(data.size() * 4));
    EXPECT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(clEnqueueWriteBuffer(queue(), *m, CL_TRUE, 0, data.size() * 4, data.data(), 0,
                                   nullptr, nullptr),
              CL_SUCCESS);
    return {.ref = {.buffer = Add(*m), .offset = offset}};
  }

  // An image of `e` plus a margin, NaN everywhere, the region at (x, y).
  Placed Image(const ir::TextureExtent& e, int32_t x = 3, int32_t y = 2) {
    const int64_t width = e.width + x + 2, height = e.height + y + 3;
    StatusOr<cl_mem> m = runtime_->AllocateImage(width, height);
    EXPECT_TRUE(m.ok()) << m.status().message();
    const std::vector<float> nan(static_cast<size_t>(width * height * 4), kNaN);
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {static_cast<size_t>(width), static_cast<size_t>(height), 1};
    EXPECT_EQ(clEnqueueWriteImage(queue(), *m, CL_TRUE, origin, region, 0, 0, nan.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    return {.ref = {.buffer = Add(*m), .x = x, .y = y}, .extent = e};
  }

  // `t` (NCHW) in an NCHW4c image, through f32_nchw_to_nchw4c.
  Placed Activation(const Tensor& t) {
    const Placed img = Image(*ir::TextureExtentOf(t.shape(), ir::Layout::kNCHW4c));
    std::vector<PendingLaunch> launches;
    AppendBufferToTexture(Buffer(t, 5).ref, t.shape(), img.ref, &launches);
    Run(launches);
    return img;
  }

  // Constant weights in a texture:weight image, packed on the host.
  Placed Weights(const Tensor& t, ir::Layout layout) {
    const Placed img = Image(*ir::TextureExtentOf(t.shape(), layout), 1, 4);
    const std::vector<float> texels = ir::PackTexels(t, layout);
    const size_t origin[3] = {static_cast<size_t>(img.ref.x), static_cast<size_t>(img.ref.y), 0};
    const size_t region[3] = {static_cast<size_t>(img.extent.width),
                              static_cast<size_t>(img.extent.height), 1};
    EXPECT_EQ(clEnqueueWriteImage(queue(), mems_[static_cast<size_t>(img.ref.buffer)], CL_TRUE,
                                  origin, region, 0, 0, texels.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    return img;
  }

  // The texels of an image's region, as floats.
  std::vector<float> ReadTexels(const Placed& img) {
    std::vector<float> texels(static_cast<size_t>(img.extent.area() * 4));
    const size_t origin[3] = {static_cast<size_t>(img.ref.x), static_cast<size_t>(img.ref.y), 0};
    const size_t region[3] = {static_cast<size_t>(img.extent.width),
                              static_cast<size_t>(img.extent.height), 1};
    EXPECT_EQ(clEnqueueReadImage(queue(), mems_[static_cast<size_t>(img.ref.buffer)], CL_TRUE,
                                 origin, region, 0, 0, texels.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    return texels;
  }

  // The NCHW tensor of `shape` in an image, through f32_nchw4c_to_nchw;
  // checks on the way that every pad lane of the region is zero.
  Tensor Read(const Placed& img, const Shape& shape) {
    const std::vector<float> texels = ReadTexels(img);
    const int64_t C = shape[1], C4 = ir::Texels(C);
    for (size_t i = 0; i < texels.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i / 4) / img.extent.width;
      const int64_t channel = (row / shape[2]) % C4 * 4 + static_cast<int64_t>(i % 4);
      if (channel >= C) {
        EXPECT_EQ(texels[i], 0.0f) << "pad lane " << i % 4 << " of texel row " << row;
        if (texels[i] != 0.0f) break;
      }
    }
    const Placed out = Buffer(Tensor(DType::kFloat32, shape), 3);
    std::vector<PendingLaunch> launches;
    AppendTextureToBuffer(img.ref, shape, out.ref, &launches);
    Run(launches);
    Tensor t(DType::kFloat32, shape);
    EXPECT_EQ(clEnqueueReadBuffer(queue(), mems_[static_cast<size_t>(out.ref.buffer)], CL_TRUE,
                                  3 * 4, static_cast<size_t>(t.num_elements()) * 4, t.data<float>(),
                                  0, nullptr, nullptr),
              CL_SUCCESS);
    return t;
  }

  // Binds and enqueues `launches` in order, then waits.
  void Run(std::vector<PendingLaunch>& launches) {
    for (PendingLaunch& p : launches) {
      kernels_used_.push_back(p.kernel_name);
      cl_int rc = CL_SUCCESS;
      cl_kernel k = clCreateKernel(program_, p.kernel_name.c_str(), &rc);
      ASSERT_EQ(rc, CL_SUCCESS) << "clCreateKernel " << p.kernel_name;
      for (const auto& [index, buffer] : p.args.tensors()) {
        p.args.SetBuffer(index, mems_[static_cast<size_t>(buffer)]);
      }
      for (const auto& [index, bytes] : p.args.tables()) {  // Resize's taps
        StatusOr<cl_mem> table = runtime_->Allocate(static_cast<int64_t>(bytes.size()));
        ASSERT_TRUE(table.ok()) << table.status().message();
        ASSERT_EQ(clEnqueueWriteBuffer(queue(), *table, CL_TRUE, 0, bytes.size(), bytes.data(), 0,
                                       nullptr, nullptr),
                  CL_SUCCESS);
        p.args.SetBuffer(index, *table);
      }
      const auto& args = p.args.args();
      for (size_t a = 0; a < args.size(); ++a) {
        ASSERT_EQ(clSetKernelArg(k, static_cast<cl_uint>(a), args[a].size(), args[a].data()),
                  CL_SUCCESS)
            << p.kernel_name << " argument " << a;
      }
      const LaunchGeometry& g = p.geometry;
      const std::array<size_t, 3> global = RoundedGlobal(g, g.local);
      const Status s = ClStatus(
          clEnqueueNDRangeKernel(queue(), k, static_cast<cl_uint>(g.dims), nullptr, global.data(),
                                 g.fixed_local() ? g.local.data() : nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel " + p.kernel_name);
      clReleaseKernel(k);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    ASSERT_EQ(clFinish(queue()), CL_SUCCESS);
  }

  // Runs `node` (its inputs from `inputs` by value, constants their own)
  // on its image kernels and on the reference, and compares.
  void ExpectMatchesReference(ir::Node& node, const std::map<const ir::Value*, Tensor>& inputs,
                              int64_t compute_units = 1, double rtol = 1e-4, double atol = 1e-5) {
    const Status inferred = ops::InferNode(node, kOpset);
    ASSERT_TRUE(inferred.ok()) << inferred.message();
    StatusOr<TextureOperands> ops = CheckTextureKernel(node, kOpset);
    ASSERT_TRUE(ops.ok()) << ops.status().message();
    std::vector<const Tensor*> in;
    std::map<const ir::Value*, Placed> placed;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::Value* v = node.input(i);
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      const Tensor& t = v->is_constant() ? v->constant : inputs.at(v);
      in.push_back(&t);
      if (placed.count(v)) continue;
      const bool image = std::find(ops->image_inputs.begin(), ops->image_inputs.end(),
                                   static_cast<int>(i)) != ops->image_inputs.end();
      if (static_cast<int>(i) == ops->weight_input) {
        placed[v] = Weights(t, ops->weight_layout);
      } else {
        placed[v] = image ? Activation(t) : Buffer(t, 7);
      }
    }
    StatusOr<std::vector<Tensor>> expected = ops::EvaluateNode(node, kOpset, in);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    const ir::Value* y = node.output(0);
    placed[y] = Image(*ir::TextureExtentOf(y->shape, ir::Layout::kNCHW4c), 2, 5);
    NodeContext ctx{node, kOpset,
                    [&](const ir::Value* v) { return v ? placed.at(v).ref : TensorRef{}; }};
    ctx.compute_units = compute_units;
    std::vector<PendingLaunch> launches;
    const Status built = BuildTextureNodeLaunches(ctx, &launches);
    ASSERT_TRUE(built.ok()) << built.message();
    for (const PendingLaunch& l : launches) EXPECT_GT(l.bytes, 0) << l.kernel_name;
    Run(launches);
    const Tensor actual = Read(placed[y], y->shape);
    const auto c = onnx_io::CompareTensors(actual, (*expected)[0], rtol, atol);
    EXPECT_TRUE(c.ok) << node.Describe() << ": " << c.problem << " max abs error "
                      << c.max_abs_error << ", " << c.mismatches << " of " << actual.num_elements()
                      << " elements off";
  }

  bool Used(const std::string& kernel) const {
    return std::find(kernels_used_.begin(), kernels_used_.end(), kernel) != kernels_used_.end();
  }

  static Runtime* runtime_;
  static cl_program program_;
  static std::string* skip_reason_;
  static std::string* build_error_;
  std::vector<cl_mem> mems_;  // by TensorRef::buffer; the runtime owns them
  std::vector<std::string> kernels_used_;
};

Runtime* TextureKernelTest::runtime_ = nullptr;
cl_program TextureKernelTest::program_ = nullptr;
std::string* TextureKernelTest::skip_reason_ = nullptr;
std::string* TextureKernelTest::build_error_ = nullptr;

TEST_F(TextureKernelTest, conversions_round_trip_at_a_corner) {
  for (const Shape& shape : {Shape{2, 5, 3, 7}, Shape{1, 4, 1, 1}, Shape{1, 1, 6, 2}}) {
    const Tensor t = RandomFloats(shape, 11);
    const Placed img = Activation(t);
    EXPECT_EQ(img.ref.x, 3);
    const Tensor back = Read(img, shape);
    const auto c = onnx_io::CompareTensors(back, t, 0, 0);
    EXPECT_TRUE(c.ok) << ShapeToString(shape) << ": " << c.mismatches << " elements off";
    // The texels are the host's packing of the same tensor.
    const std::vector<float> texels = ReadTexels(img);
    EXPECT_EQ(texels, ir::PackTexels(t, ir::Layout::kNCHW4c)) << ShapeToString(shape);
  }
}

// Conv or FusedConv as a table row.
struct ConvCase {
  Shape x;
  int64_t out_channels = 0;
  std::vector<int64_t> kernel = {3, 3};
  int64_t group = 1;  // 0: depthwise (group = C)
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::vector<int64_t> dilations = {1, 1};
  bool bias = true;
  bool residual = false;
  FusedActivation act = {};
  bool fused = true;
  std::string auto_pad;
};

std::string Describe(const ConvCase& k) {
  return "x " + ShapeToString(k.x) + " oc " + std::to_string(k.out_channels) + " k " +
         std::to_string(k.kernel[0]) + "x" + std::to_string(k.kernel[1]) + " group " +
         std::to_string(k.group) + " act " + ops::ActivationName(k.act.kind);
}

class TextureConvTest : public TextureKernelTest {
 protected:
  void Check(const ConvCase& k, int64_t compute_units = 1) {
    SCOPED_TRACE(Describe(k));
    ir::Graph g;
    g.set_opset_version(kOpset);
    const int64_t C = k.x[1];
    const int64_t group = k.group == 0 ? C : k.group;
    const int64_t oc = k.group == 0 ? C : k.out_channels;
    ir::Value* x = g.AddValue("x", DType::kFloat32, k.x, true);
    ir::Value* w = g.AddConstant("w", RandomFloats({oc, C / group, k.kernel[0], k.kernel[1]}, 21));
    ir::Value* b = k.bias ? g.AddConstant("b", RandomFloats({oc}, 22)) : nullptr;
    ir::Value* y = g.AddValue("y");
    std::vector<ir::Value*> inputs = {x, w, b};
    ir::Value* z = nullptr;
    if (k.residual) {
      z = g.AddValue("z", DType::kFloat32, {}, false);
      inputs.push_back(z);
    }
    ir::Node* node = g.AddNode(k.fused ? "FusedConv" : "Conv", "conv", inputs, {y});
    if (k.fused) node->domain = "tessel";
    node->attrs.Set("group", AttrValue(group));
    node->attrs.Set("kernel_shape", AttrValue(k.kernel));
    node->attrs.Set("strides", AttrValue(k.strides));
    node->attrs.Set("dilations", AttrValue(k.dilations));
    if (k.auto_pad.empty()) {
      node->attrs.Set("pads", AttrValue(k.pads));
    } else {
      node->attrs.Set("auto_pad", AttrValue(k.auto_pad));
    }
    if (k.fused) ops::SetFusedActivation(node->attrs, k.act);
    std::map<const ir::Value*, Tensor> values{{x, RandomFloats(k.x, 23)}};
    if (z) {
      // The residual has the output's shape: infer it first.
      node->inputs.pop_back();
      ASSERT_TRUE(ops::InferNode(*node, kOpset).ok());
      z->shape = y->shape;
      z->shape_known = true;
      node->inputs.push_back(z);
      values[z] = RandomFloats(y->shape, 24);
    }
    ExpectMatchesReference(*node, values, compute_units);
  }
};

TEST_F(TextureConvTest, general_convolutions_match_the_reference) {
  const ConvCase cases[] = {
      {.x = {1, 3, 9, 11}, .out_channels = 5, .pads = {1, 1, 1, 1}},
      {.x = {1, 17, 8, 8},
       .out_channels = 17,
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .residual = true,
       .act = ops::DefaultActivation(ActivationKind::kRelu)},
      {.x = {2, 5, 10, 7},
       .out_channels = 6,
       .pads = {2, 2, 2, 2},
       .dilations = {2, 2},
       .bias = false},
      {.x = {1, 4, 5, 5}, .out_channels = 8, .kernel = {1, 1}, .pads = {1, 1, 1, 1}},
      {.x = {1, 3, 12, 13}, .out_channels = 4, .kernel = {5, 5}, .pads = {0, 1, 2, 1}},
      {.x = {1, 6, 9, 9},
       .out_channels = 10,
       .kernel = {3, 1},
       .strides = {1, 2},
       .pads = {1, 0, 1, 0}},
      {.x = {1, 5, 7, 10}, .out_channels = 9, .strides = {2, 1}, .auto_pad = "SAME_UPPER"},
      {.x = {1, 16, 14, 14}, .out_channels = 32, .pads = {1, 1, 1, 1}, .fused = false},
      // Enough items for the 8-channel tile on one compute unit.
      {.x = {1, 16, 28, 28}, .out_channels = 28, .pads = {1, 1, 1, 1}, .residual = true},
      {.x = {1, 2, 3, 3}, .out_channels = 1, .kernel = {3, 3}},
      // Split-K over 32 slices, one of them two texels deep.
      {.x = {1, 132, 5, 6},
       .out_channels = 11,
       .pads = {1, 1, 1, 1},
       .residual = true,
       .act = ops::DefaultActivation(ActivationKind::kHardSwish)},
  };
  for (const ConvCase& k : cases) {
    Check(k, /*compute_units=*/1);
    Check(k, /*compute_units=*/1 << 20);
  }
  EXPECT_TRUE(Used("f32_conv2d_nchw4c_4w8o"));
  EXPECT_TRUE(Used("f32_conv2d_nchw4c_4w4o"));
  EXPECT_TRUE(Used("f32_conv2d_nchw4c_4w4o_splitk"));
}

TEST_F(TextureConvTest, pointwise_convolutions_match_the_reference) {
  const ConvCase cases[] = {
      {.x = {1, 8, 7, 9},
       .out_channels = 12,
       .kernel = {1, 1},
       .act = {.kind = ActivationKind::kClip, .alpha = -0.3f, .beta = 0.6f}},
      {.x = {1, 7, 6, 6}, .out_channels = 3, .kernel = {1, 1}, .strides = {2, 2}},
      {.x = {2, 17, 5, 11}, .out_channels = 21, .kernel = {1, 1}, .bias = false, .residual = true},
      {.x = {1, 64, 4, 4}, .out_channels = 64, .kernel = {1, 1}, .fused = false},
      {.x = {1, 32, 32, 30}, .out_channels = 36, .kernel = {1, 1}},
      // One input texel: no split.
      {.x = {1, 4, 6, 6}, .out_channels = 8, .kernel = {1, 1}},
      // Split-K over 64 slices (the most), the first two texels deep, and
      // two images of the batch.
      {.x = {2, 260, 3, 5},
       .out_channels = 18,
       .kernel = {1, 1},
       .residual = true,
       .act = {.kind = ActivationKind::kClip, .alpha = -0.3f, .beta = 0.6f}},
  };
  for (const ConvCase& k : cases) {
    Check(k, 1);
    Check(k, 1 << 20);
  }
  EXPECT_TRUE(Used("f32_conv2d_1x1_nchw4c_4w8o"));
  EXPECT_TRUE(Used("f32_conv2d_1x1_nchw4c_4w4o"));
  EXPECT_TRUE(Used("f32_conv2d_1x1_nchw4c_4w4o_splitk"));
}

// Launch sizes need no device: a split fills the compute units it is told
// of, and the work-group of 64 items is slices by tiles.
TEST(TextureConvLaunch, splits_input_channels_when_the_tiles_cannot_fill_the_device) {
  struct Row {
    Shape x;
    int64_t out_channels;
    int64_t compute_units;
    std::string kernel;
    std::array<size_t, 3> global, local;
  };
  const Row rows[] = {
      // MobileNetV2's 7x7 projection: 2 * 7 * 40 tiles, 240 texels deep.
      {{1, 960, 7, 7}, 160, 132, "f32_conv2d_1x1_nchw4c_4w4o_splitk", {64, 560, 1}, {64, 1, 1}},
      // Its 7x7 expansion: 40 texels deep, 32 slices fill 132 units.
      {{1, 160, 7, 7}, 960, 132, "f32_conv2d_1x1_nchw4c_4w4o_splitk", {32, 3360, 1}, {32, 2, 1}},
      // Enough tiles for one compute unit: no split.
      {{1, 160, 7, 7}, 960, 1, "f32_conv2d_1x1_nchw4c_4w8o", {2, 7, 120}, {0, 0, 0}},
      {{1, 32, 112, 112}, 64, 1, "f32_conv2d_1x1_nchw4c_4w8o", {28, 112, 8}, {0, 0, 0}},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(ShapeToString(r.x) + " to " + std::to_string(r.out_channels));
    ir::Graph g;
    ir::Value* x = g.AddValue("x", DType::kFloat32, r.x, true);
    ir::Value* w = g.AddConstant("w", Tensor(DType::kFloat32, {r.out_channels, r.x[1], 1, 1}));
    ir::Node* node = g.AddNode("Conv", "c", {x, w}, {g.AddValue("y")});
    ASSERT_TRUE(ops::InferNode(*node, kOpset).ok());
    NodeContext ctx{*node, kOpset, [](const ir::Value*) { return TensorRef{}; }};
    ctx.compute_units = r.compute_units;
    std::vector<PendingLaunch> launches;
    ASSERT_TRUE(BuildTextureNodeLaunches(ctx, &launches).ok());
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].kernel_name, r.kernel);
    EXPECT_EQ(launches[0].geometry.global, r.global);
    EXPECT_EQ(launches[0].geometry.local, r.local);
  }
}

TEST_F(TextureConvTest, depthwise_convolutions_match_the_reference) {
  const ConvCase cases[] = {
      {.x = {1, 17, 9, 10}, .group = 0, .pads = {1, 1, 1, 1}},
      {.x = {1, 8, 11, 11},
       .group = 0,
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .act = ops::DefaultActivation(ActivationKind::kRelu)},
      {.x = {1, 5, 12, 12},
       .kernel = {5, 5},
       .group = 0,
       .pads = {2, 2, 2, 2},
       .residual = true,
       .act = ops::DefaultActivation(ActivationKind::kSwish)},
      {.x = {1, 12, 9, 9}, .group = 0, .pads = {2, 2, 2, 2}, .dilations = {2, 2}, .bias = false},
      {.x = {2, 4, 7, 7},
       .kernel = {5, 5},
       .group = 0,
       .strides = {2, 2},
       .pads = {2, 2, 2, 2},
       .act = ops::DefaultActivation(ActivationKind::kHardSwish)},
      {.x = {1, 3, 6, 13}, .group = 0, .pads = {0, 1, 2, 0}, .fused = false},
      {.x = {1, 6, 8, 8}, .kernel = {3, 3}, .group = 0, .pads = {1, 3, 1, 3}, .dilations = {1, 3}},
  };
  for (const ConvCase& k : cases) Check(k);
  EXPECT_TRUE(Used("f32_conv2d_depthwise_nchw4c_4w"));
}

TEST_F(TextureConvTest, every_activation_matches_the_reference) {
  for (ActivationKind kind : ops::kActivationKinds) {
    FusedActivation act = ops::DefaultActivation(kind);
    // Bounds that clip both sides, and a pad lane (5 channels) that Clip
    // and HardSigmoid would make nonzero.
    if (kind == ActivationKind::kClip) act = {.kind = kind, .alpha = 0.1f, .beta = 0.5f};
    if (kind == ActivationKind::kLeakyRelu) act.alpha = 0.2f;
    Check(
        {.x = {1, 6, 7, 8}, .out_channels = 5, .pads = {1, 1, 1, 1}, .residual = true, .act = act});
    Check({.x = {1, 5, 7, 8}, .group = 0, .pads = {1, 1, 1, 1}, .act = act});
    Check({.x = {1, 6, 7, 8}, .out_channels = 5, .kernel = {1, 1}, .act = act});
  }
}

// A pooling node as a table row.
struct PoolCase {
  std::string op;
  Shape x;
  std::vector<int64_t> kernel = {3, 3};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::vector<int64_t> dilations = {1, 1};
  int64_t ceil_mode = 0;
  int64_t count_include_pad = 0;
};

TEST_F(TextureKernelTest, pools_match_the_reference) {
  const PoolCase cases[] = {
      {.op = "MaxPool", .x = {1, 5, 9, 9}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.op = "AveragePool", .x = {1, 5, 9, 9}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.op = "AveragePool",
       .x = {1, 5, 9, 9},
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .count_include_pad = 1},
      {.op = "MaxPool", .x = {1, 3, 10, 10}, .strides = {2, 2}, .ceil_mode = 1},
      {.op = "AveragePool",
       .x = {1, 3, 10, 10},
       .strides = {2, 2},
       .pads = {0, 0, 1, 1},
       .ceil_mode = 1,
       .count_include_pad = 1},
      {.op = "MaxPool", .x = {1, 6, 11, 11}, .dilations = {2, 2}},
      {.op = "AveragePool", .x = {1, 7, 8, 9}, .kernel = {2, 3}, .pads = {0, 1, 1, 2}},
      {.op = "MaxPool", .x = {2, 17, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}},
  };
  for (const PoolCase& k : cases) {
    SCOPED_TRACE(k.op + " " + ShapeToString(k.x));
    ir::Graph g;
    ir::Value* x = g.AddValue("x", DType::kFloat32, k.x, true);
    ir::Node* node = g.AddNode(k.op, "pool", {x}, {g.AddValue("y")});
    node->attrs.Set("kernel_shape", AttrValue(k.kernel));
    node->attrs.Set("strides", AttrValue(k.strides));
    node->attrs.Set("pads", AttrValue(k.pads));
    node->attrs.Set("ceil_mode", AttrValue(k.ceil_mode));
    if (k.op == "MaxPool") {
      node->attrs.Set("dilations", AttrValue(k.dilations));
    } else {
      node->attrs.Set("count_include_pad", AttrValue(k.count_include_pad));
    }
    ExpectMatchesReference(*node, {{x, RandomFloats(k.x, 31)}});
  }
}

TEST_F(TextureKernelTest, global_pools_match_the_reference) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (const Shape& shape : {Shape{1, 5, 7, 7}, Shape{2, 17, 3, 5}, Shape{1, 64, 56, 56}}) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(shape));
      ir::Graph g;
      ir::Value* x = g.AddValue("x", DType::kFloat32, shape, true);
      ir::Node* node = g.AddNode(op, "pool", {x}, {g.AddValue("y")});
      ExpectMatchesReference(*node, {{x, RandomFloats(shape, 41)}});
    }
  }
}

TEST_F(TextureKernelTest, resize_matches_the_reference) {
  // Nearest, linear and cubic; up and down; 6 channels (a padded texel);
  // a tf_crop_and_resize that samples outside (the extrapolation value,
  // lanes past the channels still zero).
  struct Case {
    const char* mode;
    const char* coordinates;
    std::vector<float> scales;
  };
  const Case cases[] = {{"nearest", "asymmetric", {1, 1, 2, 2}},
                        {"linear", "half_pixel", {1, 1, 2, 1.5f}},
                        {"linear", "align_corners", {1, 1, 0.5f, 0.5f}},
                        {"cubic", "half_pixel", {1, 1, 1.5f, 2}},
                        {"linear", "tf_crop_and_resize", {1, 1, 2, 2}}};
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.mode) + " " + k.coordinates);
    ir::Graph g;
    ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 6, 5, 7}, true);
    ir::Value* roi = nullptr;
    if (std::string(k.coordinates) == "tf_crop_and_resize") {
      roi = g.AddConstant("roi", ops::test_util::F32({0, 0, -0.2f, 0.1f, 1, 1, 1.1f, 0.9f}, {8}));
    }
    ir::Value* scales = g.AddConstant("scales", ops::test_util::F32(k.scales, {4}));
    ir::Node* node = g.AddNode("Resize", "r", {x, roi, scales}, {g.AddValue("y")});
    node->attrs.Set("mode", AttrValue(std::string(k.mode)));
    node->attrs.Set("coordinate_transformation_mode", AttrValue(std::string(k.coordinates)));
    node->attrs.Set("extrapolation_value", AttrValue(0.75f));
    ExpectMatchesReference(*node, {{x, RandomFloats(x->shape, 71)}});
  }
  EXPECT_TRUE(Used("f32_resize2d_nchw4c"));
}

TEST_F(TextureKernelTest, channel_concat_matches_the_reference) {
  ir::Graph g;
  ir::Value* a = g.AddValue("a", DType::kFloat32, {2, 4, 5, 6}, true);
  ir::Value* b = g.AddValue("b", DType::kFloat32, {2, 8, 5, 6}, true);
  ir::Value* c = g.AddValue("c", DType::kFloat32, {2, 3, 5, 6}, true);
  ir::Node* node = g.AddNode("Concat", "cat", {a, b, c}, {g.AddValue("y")});
  node->attrs.Set("axis", AttrValue(int64_t{-3}));
  ExpectMatchesReference(*node, {{a, RandomFloats(a->shape, 51)},
                                 {b, RandomFloats(b->shape, 52)},
                                 {c, RandomFloats(c->shape, 53)}});
}

// The checks need no device.
std::string Refusal(ir::Node& node) {
  EXPECT_TRUE(ops::InferNode(node, kOpset).ok());
  StatusOr<TextureOperands> ops = CheckTextureKernel(node, kOpset);
  EXPECT_FALSE(ops.ok());
  EXPECT_FALSE(HasTextureKernel(node, kOpset));
  return ops.ok() ? "" : ops.status().message();
}

TEST(CheckTextureKernel, names_the_operands) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 6, 6}, true);
  ir::Value* z = g.AddValue("z", DType::kFloat32, {1, 4, 6, 6}, true);
  ir::Node* conv = g.AddNode("FusedConv", "c",
                             {x, g.AddConstant("w", RandomFloats({4, 8, 1, 1}, 1)), nullptr, z},
                             {g.AddValue("y")});
  conv->domain = "tessel";
  ASSERT_TRUE(ops::InferNode(*conv, kOpset).ok());
  std::optional<TextureOperands> ops = TextureKernelOperands(*conv, kOpset);
  ASSERT_TRUE(ops.has_value());
  EXPECT_EQ(ops->image_inputs, (std::vector<int>{0, 3}));
  EXPECT_EQ(ops->weight_input, 1);
  EXPECT_EQ(ops->weight_layout, ir::Layout::kOIHW4o);
  ir::Node* dw = g.AddNode("Conv", "dw", {x, g.AddConstant("dw_w", RandomFloats({8, 1, 3, 3}, 2))},
                           {g.AddValue("dy")});
  dw->attrs.Set("group", AttrValue(int64_t{8}));
  ASSERT_TRUE(ops::InferNode(*dw, kOpset).ok());
  ops = TextureKernelOperands(*dw, kOpset);
  ASSERT_TRUE(ops.has_value());
  EXPECT_EQ(ops->weight_layout, ir::Layout::kOHW4o);
}

TEST(CheckTextureKernel, rejects_grouped_convolutions) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 6, 6}, true);
  ir::Node* node = g.AddNode("Conv", "c", {x, g.AddConstant("w", RandomFloats({4, 4, 3, 3}, 1))},
                             {g.AddValue("y")});
  node->attrs.Set("group", AttrValue(int64_t{2}));
  EXPECT_EQ(Refusal(*node),
            "Conv 'c': no OpenCL image kernel: group 2 of 8 channels; supported: 1, or depthwise "
            "(C == OC == group)");
}

TEST(CheckTextureKernel, rejects_weights_not_constant) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 8, 6, 6}, true);
  ir::Value* w = g.AddValue("w", DType::kFloat32, {4, 8, 3, 3}, true);
  ir::Node* node = g.AddNode("Conv", "c", {x, w}, {g.AddValue("y")});
  EXPECT_EQ(Refusal(*node), "Conv 'c': no OpenCL image kernel: weights 'w' are not constant");
}

TEST(CheckTextureKernel, rejects_other_dtypes_and_ranks) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat64, {1, 8, 6, 6}, true);
  ir::Node* node = g.AddNode("GlobalMaxPool", "p", {x}, {g.AddValue("y")});
  EXPECT_EQ(Refusal(*node),
            "GlobalMaxPool 'p': no OpenCL image kernel: input X 'x' has dtype float64; "
            "supported: float32");
  ir::Value* x3 = g.AddValue("x3", DType::kFloat32, {1, 8, 6}, true);
  ir::Node* pool1d = g.AddNode("GlobalAveragePool", "p1", {x3}, {g.AddValue("y3")});
  EXPECT_EQ(Refusal(*pool1d),
            "GlobalAveragePool 'p1': no OpenCL image kernel: input X 'x3' has shape 1x8x6; "
            "supported: rank 4");
}

TEST(CheckTextureKernel, leaves_elementwise_ops_to_snippets) {
  ir::Graph g;
  ir::Value* a = g.AddValue("a", DType::kFloat32, {1, 8, 4, 4}, true);
  ir::Node* node = g.AddNode("Mul", "m", {a, a}, {g.AddValue("y")});
  EXPECT_EQ(Refusal(*node), "Mul 'm': no OpenCL image kernel: not an op the image kernels run");
}

TEST(CheckTextureKernel, rejects_concat_of_unaligned_channels) {
  ir::Graph g;
  ir::Value* a = g.AddValue("a", DType::kFloat32, {1, 3, 4, 4}, true);
  ir::Value* b = g.AddValue("b", DType::kFloat32, {1, 4, 4, 4}, true);
  ir::Node* node = g.AddNode("Concat", "cat", {a, b}, {g.AddValue("y")});
  node->attrs.Set("axis", AttrValue(int64_t{1}));
  EXPECT_EQ(Refusal(*node),
            "Concat 'cat': no OpenCL image kernel: input 'a' has 3 channels; supported: a "
            "multiple of 4 but for the last");
}

TEST(CheckTextureKernel, rejects_images_past_the_minimum_extent) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 4, 2, 20000}, true);
  ir::Node* node = g.AddNode("MaxPool", "p", {x}, {g.AddValue("y")});
  node->attrs.Set("kernel_shape", AttrValue(std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Refusal(*node),
            "MaxPool 'p': no OpenCL image kernel: 'x' needs a 20000x2 NCHW4c image; images are "
            "at most 16384 texels a side");
}

}  // namespace
}  // namespace tessel::opencl
