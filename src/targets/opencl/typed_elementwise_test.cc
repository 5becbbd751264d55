// The typed elementwise kernels against the reference executor: every dtype
// a buffer holds (int8..uint64, float16, bfloat16, float64 where the device
// has it, bool), broadcasting, each op family, with edge values (NaN, ±inf,
// zero divisors, integer limits), and what the path refuses. Without an
// OpenCL device the device tests skip, saying why.
#include "targets/opencl/typed_elementwise.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "onnx/test_data.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/launch_plan.h"
#include "targets/opencl/test_env.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

using onnx_io::ModelBuilder;

constexpr DType kInts[] = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                           DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
constexpr DType kFloats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat64};
constexpr DType kAll[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                          DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
                          DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64,
                          DType::kBool};

// ONNX TensorProto.DataType codes, for Cast's `to`.
int64_t OnnxCode(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 1;
    case DType::kUInt8:
      return 2;
    case DType::kInt8:
      return 3;
    case DType::kUInt16:
      return 4;
    case DType::kInt16:
      return 5;
    case DType::kInt32:
      return 6;
    case DType::kInt64:
      return 7;
    case DType::kBool:
      return 9;
    case DType::kFloat16:
      return 10;
    case DType::kFloat64:
      return 11;
    case DType::kUInt32:
      return 12;
    case DType::kUInt64:
      return 13;
    case DType::kBFloat16:
      return 16;
    default:
      return 0;
  }
}

// Which values the inputs take.
enum class Values {
  kEdge,      // integer limits, NaN, ±inf, huge and tiny floats, halfway cases
  kModerate,  // |x| <= 10 and NaN, ±inf: where float functions agree within rtol
  kFinite,    // kModerate's finite values
};

// Element i of an input, cycling through the values of `v` from `seed`.
Tensor Fill(DType t, const Shape& shape, int seed, Values v) {
  static const double kEdgeFloats[] = {
      0.0,     -0.0, 1.0,     -1.0,    2.5,     -2.5,     0.3,       -7.75,         3.0,   100.5,
      -1000.0, 1e-3, 65519.0, 65520.0, 70000.0, 3e38,     -3e38,     1e-40,         1e10,  -1e10,
      1.5,     -0.5, 4.0,     2.0,     NAN,     INFINITY, -INFINITY, 1.00048828125, 255.9, 300.0};
  static const double kModerateFloats[] = {
      0.0,  -0.0,  1.0, -1.0, 2.5, -2.5,     0.3,       -0.3, 0.75, -7.75, 3.0,   9.5,
      -9.0, 0.001, 4.0, 2.0,  NAN, INFINITY, -INFINITY, 1.5,  -0.5, 0.999, -0.999};
  static const int64_t kEdgeInts[] = {0,
                                      1,
                                      -1,
                                      2,
                                      -3,
                                      7,
                                      100,
                                      -128,
                                      127,
                                      255,
                                      5,
                                      -6,
                                      32767,
                                      -32768,
                                      65535,
                                      std::numeric_limits<int32_t>::max(),
                                      std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min(),
                                      3,
                                      -2,
                                      63,
                                      8,
                                      31};
  Tensor out(t, shape);
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i * 7 + seed * 5);
    if (IsFloat(t)) {
      const double x = v == Values::kEdge     ? kEdgeFloats[k % std::size(kEdgeFloats)]
                       : v == Values::kFinite ? kModerateFloats[k % 16]
                                              : kModerateFloats[k % std::size(kModerateFloats)];
      out.SetFromDouble(i, x);
    } else if (t == DType::kBool) {
      out.data<bool>()[i] = (k % 3) == 0;
    } else {
      // The low bytes: integers wrap into the narrower types.
      const int64_t x = kEdgeInts[k % std::size(kEdgeInts)];
      std::memcpy(static_cast<char*>(out.raw_data()) + i * static_cast<int64_t>(DTypeSize(t)), &x,
                  DTypeSize(t));
    }
  }
  return out;
}

// Byte equality for integers and bool; for floats, within atol + rtol * |e|
// (0: the same value, NaN matching NaN).
::testing::AssertionResult Same(const Tensor& actual, const Tensor& expected, double rtol,
                                double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure() << "dtype or shape differs";
  }
  if (!IsFloat(actual.dtype())) {
    if (std::memcmp(actual.raw_data(), expected.raw_data(), actual.size_bytes()) != 0) {
      for (int64_t i = 0; i < actual.num_elements(); ++i) {
        if (std::memcmp(
                static_cast<const char*>(actual.raw_data()) + i * DTypeSize(actual.dtype()),
                static_cast<const char*>(expected.raw_data()) + i * DTypeSize(actual.dtype()),
                DTypeSize(actual.dtype())) != 0) {
          return ::testing::AssertionFailure() << "element " << i << ": " << actual.GetAsDouble(i)
                                               << ", expected " << expected.GetAsDouble(i);
        }
      }
    }
    return ::testing::AssertionSuccess();
  }
  const onnx_io::Comparison c = onnx_io::CompareTensors(actual, expected, rtol, atol);
  if (c.ok) return ::testing::AssertionSuccess();
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (a == e || (!std::isinf(e) && std::fabs(a - e) <= atol + rtol * std::fabs(e))) continue;
    return ::testing::AssertionFailure()
           << c.mismatches << " elements off; element " << i << ": " << a << ", expected " << e;
  }
  return ::testing::AssertionFailure() << c.problem;
}

class TypedElementwiseTest : public OpenClDeviceTest {
 protected:
  StatusOr<CompiledModel> CompileModel(ModelBuilder& b) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tessel_typed_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "m.onnx";
    TESSEL_RETURN_IF_ERROR(b.Save(path));
    CompilerOptions options;
    options.fusion = false;
    StatusOr<CompiledModel> model = Compile(path, targets::testing::Reference(), options);
    std::filesystem::remove_all(dir);
    return model;
  }

  // Compiles `b`, runs it on the reference target and on OpenCL with the
  // same inputs (Fill), and compares every output (Same); `typed`: how many
  // launches must run typed kernels.
  // `given`: the inputs, instead of Fill's.
  void ExpectMatchesReference(ModelBuilder& b, size_t typed, double rtol = 0,
                              Values values = Values::kEdge, std::vector<Tensor> given = {},
                              double atol = 0) {
    StatusOr<CompiledModel> model = CompileModel(b);
    ASSERT_TRUE(model.ok()) << model.status().message();
    std::vector<Tensor> inputs = std::move(given);
    int seed = 0;
    for (const ir::Value* v : model->graph->inputs()) {
      if (inputs.size() < model->graph->inputs().size()) {
        inputs.push_back(Fill(v->dtype, v->shape, seed++, values));
      }
    }
    StatusOr<std::unique_ptr<targets::Executable>> reference =
        Prepare(*model, targets::testing::Reference());
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    StatusOr<std::vector<Tensor>> expected = (*reference)->Run(inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<std::unique_ptr<OpenClExecutor>> exec =
        OpenClExecutor::Create(*model->graph, model->memory, *runtime_);
    ASSERT_TRUE(exec.ok()) << exec.status().message();
    StatusOr<std::vector<Tensor>> actual = (*exec)->Run(inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    ASSERT_EQ(actual->size(), expected->size());
    const auto& outputs = model->graph->outputs();
    for (size_t k = 0; k < actual->size(); ++k) {
      EXPECT_TRUE(Same((*actual)[k], (*expected)[k], rtol, atol))
          << "output '" << outputs[k]->name << "'";
    }
    size_t ran = 0;
    std::string kernels;
    for (const Launch& l : (*exec)->launches()) {
      kernels += " " + l.kernel_name;
      if (l.kernel_name.find("snippet") == std::string::npos &&
          l.kernel_name.find("__opencl") != std::string::npos) {
        ++ran;
      }
    }
    EXPECT_EQ(ran, typed) << "kernels:" << kernels;
  }

  // The plan's status for `b` (no device needed).
  Status Plan(ModelBuilder& b) {
    StatusOr<CompiledModel> model = CompileModel(b);
    if (!model.ok()) return model.status();
    return PlanLaunches(*model->graph, ir::MemoryLayout{}, {}).status();
  }
};

std::string Name(DType t) { return DTypeName(t); }

TEST_F(TypedElementwiseTest, CastsBetweenEveryPairOfDtypes) {
  ModelBuilder b(13);
  size_t typed = 0;
  for (DType from : kAll) {
    b.Input("x_" + Name(from), from, {3, 10});
    for (DType to : kAll) {
      const std::string y = "y_" + Name(from) + "_" + Name(to);
      auto& n = b.Node("Cast", {"x_" + Name(from)}, {y});
      ModelBuilder::SetAttr(n, "to", OnnxCode(to));
      b.Output(y, to);
      // The op library's own casts: float32, int32, int64, uint8 and bool.
      const auto lib = [](DType t) {
        return t == DType::kFloat32 || t == DType::kInt32 || t == DType::kInt64 ||
               t == DType::kUInt8 || t == DType::kBool;
      };
      if (!(lib(from) && lib(to))) ++typed;
    }
  }
  ExpectMatchesReference(b, typed);
}

TEST_F(TypedElementwiseTest, CastLikeTakesTheSecondInputsDtype) {
  ModelBuilder b(15);
  size_t typed = 0;
  for (DType from : {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kUInt64}) {
    b.Input("x_" + Name(from), from, {2, 6});
    for (DType to : {DType::kBFloat16, DType::kFloat64, DType::kInt16, DType::kFloat32}) {
      const std::string like = "like_" + Name(from) + "_" + Name(to);
      b.Input(like, to, {1});
      const std::string y = "y_" + Name(from) + "_" + Name(to);
      b.Node("CastLike", {"x_" + Name(from), like}, {y});
      b.Output(y, to);
      ++typed;
    }
  }
  ExpectMatchesReference(b, typed);
}

// Add, Sub, Mul, Div, Mod (both kinds), Max, Min and the comparisons on
// every integer dtype, B broadcast along rows.
TEST_F(TypedElementwiseTest, IntegerArithmeticAndComparisonsBroadcast) {
  for (DType t : kInts) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(13);
    b.Input("a", t, {4, 6});
    b.Input("b", t, {6});
    size_t typed = 0;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      b.Node(op, {"a", "b"}, {std::string("y_") + op});
      b.Output(std::string("y_") + op, t);
      ++typed;
    }
    for (int64_t fmod : {0, 1}) {
      auto& n = b.Node("Mod", {"a", "b"}, {"mod" + std::to_string(fmod)});
      ModelBuilder::SetAttr(n, "fmod", fmod);
      b.Output("mod" + std::to_string(fmod), t);
      ++typed;
    }
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
      b.Node(op, {"a", "b"}, {std::string("c_") + op});
      b.Output(std::string("c_") + op, DType::kBool);
      ++typed;
    }
    ExpectMatchesReference(b, typed);
  }
}

TEST_F(TypedElementwiseTest, FloatArithmeticOn16And64BitFloats) {
  for (DType t : kFloats) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(13);
    b.Input("a", t, {2, 3, 5});
    b.Input("b", t, {3, 1});
    size_t typed = 0;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"}) {
      b.Node(op, {"a", "b"}, {std::string("y_") + op});
      b.Output(std::string("y_") + op, t);
      ++typed;
    }
    auto& n = b.Node("Mod", {"a", "b"}, {"fmod"});
    ModelBuilder::SetAttr(n, "fmod", int64_t{1});
    b.Output("fmod", t);
    for (const char* op : {"Equal", "Less", "GreaterOrEqual"}) {
      b.Node(op, {"a", "b"}, {std::string("c_") + op});
      b.Output(std::string("c_") + op, DType::kBool);
      ++typed;
    }
    // OpenCL C's float32 division may be 2.5 ulp off, which can move a
    // 16-bit float by one ulp.
    ExpectMatchesReference(b, typed + 1, t == DType::kFloat64 ? 1e-15 : 1e-2);
  }
}

TEST_F(TypedElementwiseTest, VariadicMaxMinFoldThreeBroadcastInputsPropagatingNaN) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kUInt8}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(13);
    b.Input("a", t, {2, 1, 4});
    b.Input("b", t, {3, 1});
    b.Input("c", t, {2, 3, 4});
    b.Node("Max", {"a", "b", "c"}, {"max"});
    b.Node("Min", {"a", "b", "c"}, {"min"});
    b.Output("max", t);
    b.Output("min", t);
    // float32 Max and Min run as snippets.
    ExpectMatchesReference(b, t == DType::kFloat32 ? 0 : 2);
  }
}

TEST_F(TypedElementwiseTest, ModOnFloatsTruncatesOrFloorsFromOpset28) {
  // Mod-28 defines fmod=0 for floats (the divisor's sign); the reference
  // refuses it before.
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(28);
    b.Input("a", t, {4, 6});
    b.Input("b", t, {6});
    for (int64_t fmod : {0, 1}) {
      auto& n = b.Node("Mod", {"a", "b"}, {"y" + std::to_string(fmod)});
      ModelBuilder::SetAttr(n, "fmod", fmod);
      b.Output("y" + std::to_string(fmod), t);
    }
    ExpectMatchesReference(b, 2);
  }
}

TEST_F(TypedElementwiseTest, BitShiftsBothWaysOnUnsignedInts) {
  for (DType t : {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(11);
    b.Input("a", t, {3, 8});
    b.Input("s", t, {8});
    for (const char* d : {"LEFT", "RIGHT"}) {
      auto& n = b.Node("BitShift", {"a", "s"}, {std::string("y_") + d});
      ModelBuilder::SetAttr(n, "direction", std::string(d));
      b.Output(std::string("y_") + d, t);
    }
    ExpectMatchesReference(b, 2);
  }
}

TEST_F(TypedElementwiseTest, PowOnIntegerAndFloatBasesAndExponents) {
  ModelBuilder b(15);
  const std::pair<DType, DType> pairs[] = {
      {DType::kInt32, DType::kInt32},     {DType::kInt64, DType::kInt8},
      {DType::kInt64, DType::kUInt16},    {DType::kInt32, DType::kFloat32},
      {DType::kFloat32, DType::kInt64},   {DType::kFloat32, DType::kFloat32},
      {DType::kFloat16, DType::kFloat32}, {DType::kFloat64, DType::kInt32}};
  int k = 0;
  for (const auto& [base, e] : pairs) {
    const std::string s = std::to_string(k++);
    b.Input("b" + s, base, {2, 5});
    b.Input("e" + s, e, {5});
    b.Node("Pow", {"b" + s, "e" + s}, {"y" + s});
    b.Output("y" + s, base);
  }
  ExpectMatchesReference(b, std::size(pairs), 1e-6, Values::kModerate);
}

TEST_F(TypedElementwiseTest, ClipsIntegersToBoundInputsAndFloatsToAttributes) {
  {
    ModelBuilder b(13);
    b.Input("x", DType::kInt32, {3, 7});
    b.Input("lo", DType::kInt32, {});
    b.Initializer("hi", Tensor::FromVector<int32_t>({50}, {}));
    b.Node("Clip", {"x", "lo", "hi"}, {"both"});
    b.Node("Clip", {"x", "", "hi"}, {"max_only"});
    b.Node("Clip", {"x", "lo"}, {"min_only"});
    b.Output("both", DType::kInt32);
    b.Output("max_only", DType::kInt32);
    b.Output("min_only", DType::kInt32);
    ExpectMatchesReference(b, 3);
  }
  {
    ModelBuilder b(6);
    b.Input("x", DType::kFloat16, {3, 7});
    auto& n = b.Node("Clip", {"x"}, {"y"});
    ModelBuilder::SetAttr(n, "min", -2.0f);
    ModelBuilder::SetAttr(n, "max", 3.5f);
    b.Output("y", DType::kFloat16);
    ExpectMatchesReference(b, 1);
  }
}

TEST_F(TypedElementwiseTest, WhereSelectsAnyDtypeWithBroadcast) {
  for (DType t : {DType::kInt64, DType::kFloat16, DType::kUInt8, DType::kFloat64}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(13);
    b.Input("c", DType::kBool, {2, 1, 5});
    b.Input("x", t, {3, 5});
    b.Input("y", t, {2, 3, 1});
    b.Node("Where", {"c", "x", "y"}, {"z"});
    b.Output("z", t);
    ExpectMatchesReference(b, 1);
  }
}

TEST_F(TypedElementwiseTest, IntegerUnaryOps) {
  for (DType t : kInts) {
    SCOPED_TRACE(Name(t));
    const bool is_signed =
        t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
    ModelBuilder b(13);
    b.Input("x", t, {4, 6});
    std::vector<std::string> ops = {"Abs", "Sign"};
    if (is_signed) {
      ops.push_back("Neg");
      ops.push_back("Relu");
    }
    for (const std::string& op : ops) {
      b.Node(op, {"x"}, {"y_" + op});
      b.Output("y_" + op, t);
    }
    auto& n = b.Node("Shrink", {"x"}, {"shrink"});
    ModelBuilder::SetAttr(n, "lambd", 1.5f);
    ModelBuilder::SetAttr(n, "bias", 1.0f);
    b.Output("shrink", t);
    ExpectMatchesReference(b, ops.size() + 1);
  }
}

// The float functions the snippets lack, on float32, and every float
// function on the 16- and 64-bit floats.
TEST_F(TypedElementwiseTest, FloatFunctions) {
  const char* kOps[] = {"Sin",   "Cos",        "Tan",   "Asin",      "Acos",     "Atan",
                        "Sinh",  "Cosh",       "Asinh", "Acosh",     "Atanh",    "Softplus",
                        "Mish",  "Sign",       "Exp",   "Log",       "Sqrt",     "Erf",
                        "Tanh",  "Sigmoid",    "Abs",   "Neg",       "Floor",    "Ceil",
                        "Round", "Reciprocal", "Relu",  "HardSwish", "Softsign", "Gelu"};
  // Float32 ops that run as snippets (Gelu decomposed into them).
  const std::string kSnippetOps =
      " Exp Log Sqrt Erf Tanh Sigmoid Abs Neg Floor Ceil Round "
      "Reciprocal Relu HardSwish Softsign Gelu ";
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(24);  // Swish's
    b.Input("x", t, {3, 8});
    size_t typed = 0;
    for (const std::string op : kOps) {
      b.Node(op, {"x"}, {"y_" + op});
      b.Output("y_" + op, t);
      if (t != DType::kFloat32 || kSnippetOps.find(" " + op + " ") == std::string::npos) ++typed;
    }
    auto attr = [&](const char* op, const char* name, float v) {
      auto& n = b.Node(op, {"x"}, {std::string("a_") + op});
      ModelBuilder::SetAttr(n, name, v);
      b.Output(std::string("a_") + op, t);
    };
    attr("Celu", "alpha", 0.7f);
    attr("Swish", "alpha", 1.3f);
    attr("HardSigmoid", "alpha", 0.3f);
    attr("LeakyRelu", "alpha", 0.2f);
    attr("Elu", "alpha", 0.9f);
    attr("Selu", "gamma", 1.1f);
    attr("ThresholdedRelu", "alpha", 0.4f);
    // Celu has no snippet; float32 Gelu and Swish are decomposed into
    // snippet ops before kernels are chosen.
    typed += t == DType::kFloat32 ? 1 : 7;
    for (const char* op : {"IsNaN", "IsInf"}) {
      b.Node(op, {"x"}, {std::string("p_") + op});
      b.Output(std::string("p_") + op, DType::kBool);
      if (t != DType::kFloat32 || std::string(op) == "IsInf") ++typed;
    }
    auto& inf = b.Node("IsInf", {"x"}, {"neg_inf"});
    ModelBuilder::SetAttr(inf, "detect_positive", int64_t{0});
    b.Output("neg_inf", DType::kBool);
    ++typed;
    auto& shrink = b.Node("Shrink", {"x"}, {"shrink"});
    ModelBuilder::SetAttr(shrink, "lambd", 0.7f);
    ModelBuilder::SetAttr(shrink, "bias", 0.25f);
    b.Output("shrink", t);
    ++typed;
    // OpenCL C's float functions are within a few ulp of the C library's
    // (of 1 where Gelu's 1 + tanh cancels).
    const double rtol = t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-5 : 1e-2;
    ExpectMatchesReference(b, typed, rtol, Values::kModerate, {},
                           t == DType::kFloat64 ? 1e-15 : 1e-6);
  }
}

// Gelu's tanh form on finite values: at -inf, 1 + tanh(-inf) is 0 in the
// reference (NaN), but PoCL's tanh(-inf) is -0.99999994.
TEST_F(TypedElementwiseTest, GeluTanhOnFiniteValues) {
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(Name(t));
    ModelBuilder b(20);
    b.Input("x", t, {3, 8});
    auto& g = b.Node("Gelu", {"x"}, {"y"});
    ModelBuilder::SetAttr(g, "approximate", std::string("tanh"));
    b.Output("y", t);
    ExpectMatchesReference(b, 1, t == DType::kFloat64 ? 1e-12 : 1e-2, Values::kFinite, {},
                           t == DType::kFloat64 ? 1e-15 : 1e-6);
  }
}

TEST_F(TypedElementwiseTest, SixteenBitFloatsRoundToNearestEven) {
  // 1 + 2^-11 is halfway between two halves: even wins; 65520 rounds to
  // inf in half; bfloat16 keeps float's range.
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {10});
  for (DType to : {DType::kFloat16, DType::kBFloat16}) {
    auto& n = b.Node("Cast", {"x"}, {"y_" + Name(to)});
    ModelBuilder::SetAttr(n, "to", OnnxCode(to));
    b.Output("y_" + Name(to), to);
  }
  std::vector<Tensor> x;
  x.push_back(Tensor::FromVector<float>({1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65520.0f, 65519.0f,
                                         1e-8f, -3e-5f, 1.00390625f, 1.01171875f, 3e38f, -NAN},
                                        {10}));
  ExpectMatchesReference(b, 2, 0, Values::kEdge, std::move(x));
}

TEST_F(TypedElementwiseTest, RanksBeyondTheSnippetsAfterMerging) {
  // Rank 9 with two broadcast patterns merges to few axes.
  ModelBuilder b(13);
  b.Input("a", DType::kInt16, {2, 1, 2, 2, 1, 2, 2, 1, 3});
  b.Input("b", DType::kInt16, {1, 3, 1, 1, 2, 1, 1, 2, 3});
  b.Node("Add", {"a", "b"}, {"y"});
  b.Output("y", DType::kInt16);
  ExpectMatchesReference(b, 1);
}

TEST_F(TypedElementwiseTest, EmptyOutputLaunchesNothing) {
  ModelBuilder b(13);
  b.Input("a", DType::kInt32, {0, 4});
  b.Input("b", DType::kInt32, {4});
  b.Node("Add", {"a", "b"}, {"y"});
  b.Output("y", DType::kInt32);
  ExpectMatchesReference(b, 0);
}

TEST_F(TypedElementwiseTest, RejectsTooManyBroadcastAxes) {
  // Ten alternating broadcast axes merge into none.
  ModelBuilder b(13);
  b.Input("a", DType::kInt32, {2, 1, 2, 1, 2, 1, 2, 1, 2, 1});
  b.Input("b", DType::kInt32, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  b.Node("Add", {"a", "b"}, {"y"}, "wide_add");
  b.Output("y", DType::kInt32);
  const Status s = Plan(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("Add 'wide_add'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at most 8 broadcast axes"), std::string::npos) << s.message();
}

TEST_F(TypedElementwiseTest, RejectsMoreThanEightVariadicInputs) {
  ModelBuilder b(13);
  std::vector<std::string> ins;
  for (int i = 0; i < 9; ++i) {
    ins.push_back("x" + std::to_string(i));
    b.Input(ins.back(), DType::kInt32, {2});
  }
  b.Node("Max", ins, {"y"}, "max9");
  b.Output("y", DType::kInt32);
  const Status s = Plan(b);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("Max 'max9'"), std::string::npos) << s.message();
}

// Without a device: what the planner decides and emits.
TEST(TypedElementwisePlanTest, MergesAxesAndNamesTheKernel) {
  ir::Graph g;
  ir::Value* a = g.AddValue("a", DType::kInt8, {4, 5, 6}, true);
  ir::Value* b = g.AddValue("b", DType::kInt8, {5, 6}, true);
  ir::Value* y = g.AddValue("y", DType::kInt8, {4, 5, 6}, true);
  ir::Node node;
  node.op_type = "Add";
  node.name = "add";
  node.inputs = {a, b};
  node.outputs = {y};
  StatusOr<std::optional<TypedElementwise>> k = PlanTypedElementwise(node, 13);
  ASSERT_TRUE(k.ok()) << k.status().message();
  ASSERT_TRUE(k->has_value());
  const TypedElementwise& t = **k;
  EXPECT_EQ(t.dims, (std::vector<int64_t>{4, 30}));
  EXPECT_EQ(t.strides[0], (std::vector<int64_t>{30, 1}));
  EXPECT_EQ(t.strides[1], (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(t.needs_fp64);
  EXPECT_EQ(TypedKernelName(t, 3), "i8_add_3__opencl");
  const std::string src = EmitTypedElementwise(t, "k");
  EXPECT_NE(src.find("(char)((uint)a0 + (uint)a1)"), std::string::npos) << src;
}

TEST(TypedElementwisePlanTest, LeavesOtherOpsAndRejectsUnknownDtypesPerOp) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kInt32, {3}, true);
  ir::Value* y = g.AddValue("y", DType::kInt32, {3}, true);
  ir::Node node;
  node.name = "n";
  node.inputs = {x};
  node.outputs = {y};
  node.op_type = "Conv";
  StatusOr<std::optional<TypedElementwise>> k = PlanTypedElementwise(node, 13);
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(k->has_value());
  // Sin takes floats only.
  node.op_type = "Sin";
  k = PlanTypedElementwise(node, 13);
  EXPECT_EQ(k.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(k.status().message().find("Sin 'n'"), std::string::npos) << k.status().message();
  // A float64 kernel says it needs cl_khr_fp64.
  x->dtype = y->dtype = DType::kFloat64;
  k = PlanTypedElementwise(node, 13);
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_TRUE((*k)->needs_fp64);
  EXPECT_NE(EmitTypedElementwise(**k, "k").find("#if defined(cl_khr_fp64)"), std::string::npos);
}

}  // namespace
}  // namespace tessel::opencl
