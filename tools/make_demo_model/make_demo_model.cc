// Writes the demo model: a MobileNetV2-style network (width 0.5, 160x160
// input, 1000 classes) with seeded weights, as ONNX opset 13. It exercises
// what the demo should show: conv, depthwise conv, batch norm, Clip (ReLU6),
// residual Add, global average pooling and Gemm. Generated at build time;
// nothing is downloaded.
//
//   make_demo_model OUT.onnx [--width W] [--size S] [--classes N]
//
// The options make smaller variants of the same network, such as the
// microcontroller's (--width 0.25 --size 96 --classes 100, under 1 MB of
// weights). Without them the output is the demo model, byte for byte.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace {

class Builder {
 public:
  explicit Builder(onnx::GraphProto* g) : g_(g), rng_(20261122) {}

  std::string Name(const std::string& base) { return base + "_" + std::to_string(counter_++); }

  std::string Initializer(const std::string& base, const std::vector<int64_t>& dims,
                          const std::vector<float>& values) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(Name(base));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return t->name();
  }

  std::vector<float> Normal(size_t n, float stddev) {
    std::normal_distribution<float> dist(0.0f, stddev);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng_);
    return v;
  }

  std::vector<float> Uniform(size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng_);
    return v;
  }

  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                        std::string* output) {
    onnx::NodeProto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(Name(op));
    for (const auto& in : inputs) n->add_input(in);
    *output = n->name() + "_out";
    n->add_output(*output);
    return n;
  }

  static void Ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  // Conv (no bias) + BatchNormalization (+ Clip(0, 6) if relu6).
  std::string ConvBn(const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                     int64_t group, bool relu6) {
    const float fan_in = static_cast<float>(cin / group * k * k);
    std::string w = Initializer(
        "w", {cout, cin / group, k, k},
        Normal(static_cast<size_t>(cout * (cin / group) * k * k), std::sqrt(2.0f / fan_in)));
    std::string y;
    onnx::NodeProto* conv = Node("Conv", {x, w}, &y);
    Ints(conv, "kernel_shape", {k, k});
    Ints(conv, "strides", {stride, stride});
    Ints(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
    Int(conv, "group", group);
    const size_t c = static_cast<size_t>(cout);
    std::string scale = Initializer("bn_scale", {cout}, Uniform(c, 0.5f, 1.0f));
    std::string bias = Initializer("bn_bias", {cout}, Uniform(c, -0.1f, 0.1f));
    std::string mean = Initializer("bn_mean", {cout}, Uniform(c, -0.1f, 0.1f));
    std::string var = Initializer("bn_var", {cout}, Uniform(c, 0.5f, 1.5f));
    std::string z;
    Node("BatchNormalization", {y, scale, bias, mean, var}, &z);
    if (!relu6) return z;
    std::string out;
    Node("Clip", {z, clip_min_, clip_max_}, &out);
    return out;
  }

  void MakeClipBounds() {
    clip_min_ = Initializer("clip_min", {}, {0.0f});
    clip_max_ = Initializer("clip_max", {}, {6.0f});
  }

 private:
  onnx::GraphProto* g_;
  std::mt19937 rng_;
  int counter_ = 0;
  std::string clip_min_, clip_max_;
};

void AddTensorInfo(onnx::ValueInfoProto* info, const std::string& name,
                   const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// The network's shape. The defaults are the demo model's.
struct Options {
  std::string out_path;
  double width = 0.5;      // channel multiplier of MobileNetV2's channel counts
  int64_t size = 160;      // input height and width, pixels
  int64_t classes = 1000;  // outputs of the final Gemm
};

constexpr char kUsage[] = "usage: make_demo_model OUT.onnx [--width W] [--size S] [--classes N]";

// Parses the command line into `options`; on bad input, says what was wrong
// and returns false.
bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!options->out_path.empty()) {
        std::fprintf(stderr, "make_demo_model: a second output path '%s'\n", arg.c_str());
        return false;
      }
      options->out_path = arg;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "make_demo_model: %s needs a value\n", arg.c_str());
      return false;
    }
    const std::string value = argv[++i];
    char* end = nullptr;
    if (arg == "--width") {
      options->width = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options->width > 0.0 && options->width <= 4.0)) {
        std::fprintf(stderr, "make_demo_model: --width %s; expected a number in (0, 4]\n",
                     value.c_str());
        return false;
      }
    } else if (arg == "--size" || arg == "--classes") {
      const long long n = std::strtoll(value.c_str(), &end, 10);
      const long long lo = arg == "--size" ? 32 : 1, hi = arg == "--size" ? 4096 : 100000;
      if (*end != '\0' || n < lo || n > hi) {
        std::fprintf(stderr, "make_demo_model: %s %s; expected an integer in [%lld, %lld]\n",
                     arg.c_str(), value.c_str(), lo, hi);
        return false;
      }
      (arg == "--size" ? options->size : options->classes) = n;
    } else {
      std::fprintf(stderr, "make_demo_model: unknown option %s\n", arg.c_str());
      return false;
    }
  }
  if (options->out_path.empty()) {
    std::fprintf(stderr, "make_demo_model: no output path\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr, "%s\n", kUsage);
    return 2;
  }
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("tessel make_demo_model");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("mobilenet_v2_demo");
  Builder b(g);
  b.MakeClipBounds();

  const int64_t size = options.size, classes = options.classes;
  AddTensorInfo(g->add_input(), "image", {1, 3, size, size});
  // MobileNetV2's channel count c at this width, at least 8.
  auto ch = [&options](int64_t c) {
    return std::max<int64_t>(8, static_cast<int64_t>(static_cast<double>(c) * options.width));
  };

  std::string x = b.ConvBn("image", 3, ch(32), 3, 2, 1, true);
  int64_t c = ch(32);
  // MobileNetV2's inverted residual blocks: expansion t, channels, repeats, stride.
  const int64_t blocks[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& [t, channels, repeats, first_stride] : blocks) {
    const int64_t out = ch(channels);
    for (int64_t r = 0; r < repeats; ++r) {
      const int64_t stride = r == 0 ? first_stride : 1;
      const int64_t hidden = c * t;
      std::string y = x;
      if (t != 1) y = b.ConvBn(y, c, hidden, 1, 1, 1, true);
      y = b.ConvBn(y, hidden, hidden, 3, stride, hidden, true);  // depthwise
      y = b.ConvBn(y, hidden, out, 1, 1, 1, false);              // linear bottleneck
      if (stride == 1 && c == out) {
        std::string sum;
        b.Node("Add", {x, y}, &sum);
        y = sum;
      }
      x = y;
      c = out;
    }
  }
  const int64_t features = ch(1280);
  x = b.ConvBn(x, c, features, 1, 1, 1, true);
  std::string pooled, flat, logits;
  b.Node("GlobalAveragePool", {x}, &pooled);
  b.Node("Flatten", {pooled}, &flat);
  std::string w = b.Initializer("fc_w", {classes, features},
                                b.Normal(static_cast<size_t>(classes * features), 0.04f));
  std::string bias =
      b.Initializer("fc_b", {classes}, b.Uniform(static_cast<size_t>(classes), -0.01f, 0.01f));
  onnx::NodeProto* gemm = b.Node("Gemm", {flat, w, bias}, &logits);
  Builder::Int(gemm, "transB", 1);
  g->mutable_node(g->node_size() - 1)->set_output(0, "logits");
  AddTensorInfo(g->add_output(), "logits", {1, classes});

  std::ofstream out(options.out_path, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out)) {
    std::fprintf(stderr, "make_demo_model: cannot write %s\n", options.out_path.c_str());
    return 1;
  }
  return 0;
}
