// Recurrent layers: RNN, GRU and LSTM, one layer each, run forward, reverse or
// bidirectional over a whole sequence.
//
// Gates (rows of W, R and B, hidden_size each, per direction):
//   RNN  i          Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi)
//   GRU  z, r, h    Ht = (1 - zt) ht + zt Ht-1
//   LSTM i, o, f, c Ct = ft Ct-1 + it ct,  Ht = ot h(Ct)
// Every step is computed in double whatever the element type, so the
// reference is at least as accurate as any target it checks.
//
// The forms of opsets 1-6 (an output_sequence attribute, GRU without
// linear_before_reset) compute the same thing: outputs are present or not as
// the node lists them, and linear_before_reset defaults to 0.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

// ---------------------------------------------------------------------------
// Activations

enum class ActKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

// The activations the recurrent ops accept. An activation that uses alpha
// (beta) takes the next unused value of activation_alpha (activation_beta),
// or its default when the list has run out, as onnxruntime reads them.
struct ActSpec {
  const char* name;
  ActKind kind;
  bool uses_alpha, uses_beta;
  float default_alpha, default_beta;
};
constexpr ActSpec kActivations[] = {
    {"Relu", ActKind::kRelu, false, false, 0, 0},
    {"Tanh", ActKind::kTanh, false, false, 0, 0},
    {"Sigmoid", ActKind::kSigmoid, false, false, 0, 0},
    {"Affine", ActKind::kAffine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", ActKind::kLeakyRelu, true, false, 0.01f, 0},
    {"ThresholdedRelu", ActKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"ScaledTanh", ActKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", ActKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", ActKind::kElu, true, false, 1.0f, 0},
    {"Softsign", ActKind::kSoftsign, false, false, 0, 0},
    {"Softplus", ActKind::kSoftplus, false, false, 0, 0},
};

struct Activation {
  ActKind kind = ActKind::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case ActKind::kRelu:
        return x > 0 ? x : 0;
      case ActKind::kTanh:
        return std::tanh(x);
      // Split at 0 so exp never overflows.
      case ActKind::kSigmoid:
        return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
      case ActKind::kAffine:
        return alpha * x + beta;
      case ActKind::kLeakyRelu:
        return x >= 0 ? x : alpha * x;
      case ActKind::kThresholdedRelu:
        return x >= alpha ? x : 0;
      case ActKind::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case ActKind::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case ActKind::kElu:
        return x >= 0 ? x : alpha * std::expm1(x);
      case ActKind::kSoftsign:
        return x / (1 + std::abs(x));
      case ActKind::kSoftplus:
        return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }
};

bool SameNameIgnoringCase(const std::string& a, const char* b) {
  const std::string bs(b);
  return a.size() == bs.size() && std::equal(a.begin(), a.end(), bs.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// ---------------------------------------------------------------------------
// The three cells

enum class CellKind { kRnn, kGru, kLstm };

struct CellInfo {
  CellKind kind;
  int64_t gates;           // rows of W per direction, in hidden_size units
  size_t num_activations;  // per direction
  const char* default_acts[3];
};
constexpr CellInfo kRnnCell = {CellKind::kRnn, 1, 1, {"Tanh"}};
constexpr CellInfo kGruCell = {CellKind::kGru, 3, 2, {"Sigmoid", "Tanh"}};
constexpr CellInfo kLstmCell = {CellKind::kLstm, 4, 3, {"Sigmoid", "Tanh", "Tanh"}};

const CellInfo& InfoOf(const ir::Node& node) {
  if (node.op_type == "GRU") return kGruCell;
  if (node.op_type == "LSTM") return kLstmCell;
  return kRnnCell;
}

// Inputs by position: X, W, R, B, sequence_lens, initial_h, then for LSTM
// initial_c and P. Outputs: Y, Y_h, and for LSTM Y_c.
enum RnnInput : size_t { kX = 0, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };

// Everything a run needs from the attributes and the input shapes.
struct RnnPlan {
  const CellInfo* cell = nullptr;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t directions = 1;
  bool reverse = false;          // direction=reverse: one direction, walked backwards
  bool batch_major = false;      // layout=1: X is batch x seq x input
  std::vector<Activation> acts;  // cell->num_activations per direction
  double clip = 0;               // 0: no clipping
  bool linear_before_reset = false;
  bool input_forget = false;
};

Status RnnError(const ir::Node& node, const std::string& msg) {
  return InvalidArgument(node.Describe() + ": " + msg);
}

StatusOr<std::vector<Activation>> ReadActivations(const ir::Node& node, const CellInfo& cell,
                                                  int64_t directions) {
  std::vector<std::string> names = node.attrs.Strings("activations");
  const size_t expected = cell.num_activations * static_cast<size_t>(directions);
  if (!node.attrs.Has("activations")) {
    for (int64_t d = 0; d < directions; ++d) {
      for (size_t k = 0; k < cell.num_activations; ++k) names.push_back(cell.default_acts[k]);
    }
  } else if (names.size() != expected) {
    return RnnError(node, "activations lists " + std::to_string(names.size()) +
                              " functions; expected " + std::to_string(expected) + " (" +
                              std::to_string(cell.num_activations) + " per direction)");
  }
  const std::vector<float> alphas = node.attrs.Floats("activation_alpha");
  const std::vector<float> betas = node.attrs.Floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& name : names) {
    const ActSpec* spec = nullptr;
    for (const ActSpec& s : kActivations) {
      if (SameNameIgnoringCase(name, s.name)) spec = &s;
    }
    if (!spec) {
      return RnnError(node, "activation '" + name +
                                "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                                "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, "
                                "Softplus");
    }
    Activation a{spec->kind, spec->default_alpha, spec->default_beta};
    if (spec->uses_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (spec->uses_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    acts.push_back(a);
  }
  return acts;
}

// Reads the attributes and the shapes of X, W and R; validates those.
StatusOr<RnnPlan> PlanRnn(const ir::Node& node, const Shape& x, const Shape& w, const Shape& r) {
  RnnPlan p;
  p.cell = &InfoOf(node);
  const int64_t layout = node.attrs.Int("layout", 0);
  if (layout != 0 && layout != 1) {
    return RnnError(node, "layout " + std::to_string(layout) + " must be 0 or 1");
  }
  p.batch_major = layout == 1;
  const std::string direction = node.attrs.String("direction", "forward");
  if (direction == "bidirectional") {
    p.directions = 2;
  } else if (direction == "reverse") {
    p.reverse = true;
  } else if (direction != "forward") {
    return RnnError(node,
                    "direction '" + direction + "' must be forward, reverse or bidirectional");
  }
  const std::pair<const Shape*, const char*> operands[] = {{&x, "X"}, {&w, "W"}, {&r, "R"}};
  for (const auto& [shape, name] : operands) {
    if (shape->size() != 3) {
      return RnnError(node, std::string("input ") + name + " has shape " + ShapeToString(*shape) +
                                "; expected rank 3");
    }
  }
  p.seq = p.batch_major ? x[1] : x[0];
  p.batch = p.batch_major ? x[0] : x[1];
  p.input = x[2];
  p.hidden = r[2];
  if (node.attrs.Has("hidden_size") && node.attrs.Int("hidden_size", 0) != p.hidden) {
    return RnnError(node, "hidden_size=" + std::to_string(node.attrs.Int("hidden_size", 0)) +
                              " but R has shape " + ShapeToString(r) + " (hidden size " +
                              std::to_string(p.hidden) + ")");
  }
  const int64_t rows = p.cell->gates * p.hidden;
  const std::string gates = std::to_string(p.cell->gates);
  if (w != Shape{p.directions, rows, p.input}) {
    return RnnError(node, "W has shape " + ShapeToString(w) + "; expected " +
                              ShapeToString({p.directions, rows, p.input}) + " (directions x " +
                              gates + "*hidden_size x input_size)");
  }
  if (r != Shape{p.directions, rows, p.hidden}) {
    return RnnError(node, "R has shape " + ShapeToString(r) + "; expected " +
                              ShapeToString({p.directions, rows, p.hidden}) + " (directions x " +
                              gates + "*hidden_size x hidden_size)");
  }
  TESSEL_ASSIGN_OR_RETURN(p.acts, ReadActivations(node, *p.cell, p.directions));
  if (node.attrs.Has("clip")) {
    p.clip = node.attrs.Float("clip", 0);
    if (!(p.clip > 0) || std::isinf(p.clip)) {
      return RnnError(node, "clip " + std::to_string(p.clip) + " must be a finite value > 0");
    }
  }
  const int64_t lbr = node.attrs.Int("linear_before_reset", 0);
  const int64_t input_forget = node.attrs.Int("input_forget", 0);
  if ((lbr != 0 && lbr != 1) || (input_forget != 0 && input_forget != 1)) {
    return RnnError(node, "linear_before_reset and input_forget must be 0 or 1");
  }
  p.linear_before_reset = lbr == 1;
  p.input_forget = input_forget == 1;
  return p;
}

// The shape of Y_h, Y_c, initial_h and initial_c.
Shape StateShape(const RnnPlan& p) {
  return p.batch_major ? Shape{p.batch, p.directions, p.hidden}
                       : Shape{p.directions, p.batch, p.hidden};
}

Status RequireInputShape(const ir::Node& node, size_t i, const char* role, const Shape& expected) {
  const ir::Value* v = node.input(i);
  if (!v || v->shape == expected) return Status::Ok();
  return RnnError(node, std::string(role) + " '" + v->name + "' has shape " +
                            ShapeToString(v->shape) + "; expected " + ShapeToString(expected));
}

// Sequence lengths must lie in [0, seq]; a shorter sequence leaves zeros in Y
// past its end.
Status CheckSequenceLengths(const ir::Node& node, const Tensor& lens, int64_t seq) {
  for (int64_t b = 0; b < lens.num_elements(); ++b) {
    const int64_t len = lens.GetAsInt64(b);
    if (len < 0 || len > seq) {
      return RnnError(node, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                                " is outside [0, " + std::to_string(seq) + "]");
    }
  }
  return Status::Ok();
}

Status InferRnn(ir::Node& node, int opset) {
  const CellInfo& cell = InfoOf(node);
  TESSEL_RETURN_IF_ERROR(RequireDType(node, kX, kFloatTypes));
  TESSEL_RETURN_IF_ERROR(RequireSameDType(node, {kX, kW, kR, kB, kInitialH, kInitialC, kP}));
  TESSEL_ASSIGN_OR_RETURN(const RnnPlan p, PlanRnn(node, node.input(kX)->shape,
                                                   node.input(kW)->shape, node.input(kR)->shape));
  const int64_t h = p.hidden, d = p.directions;
  TESSEL_RETURN_IF_ERROR(RequireInputShape(node, kB, "B", {d, 2 * cell.gates * h}));
  TESSEL_RETURN_IF_ERROR(RequireInputShape(node, kInitialH, "initial_h", StateShape(p)));
  if (cell.kind == CellKind::kLstm) {
    TESSEL_RETURN_IF_ERROR(RequireInputShape(node, kInitialC, "initial_c", StateShape(p)));
    TESSEL_RETURN_IF_ERROR(RequireInputShape(node, kP, "P", {d, 3 * h}));
  }
  if (node.input(kSeqLens)) {
    TESSEL_RETURN_IF_ERROR(RequireDType(node, kSeqLens, {DType::kInt32}));
    TESSEL_RETURN_IF_ERROR(RequireInputShape(node, kSeqLens, "sequence_lens", {p.batch}));
    // A constant is checked once here; one fed at run time, by the kernel.
    const ir::Value* lens = node.input(kSeqLens);
    if (lens->is_constant()) {
      TESSEL_RETURN_IF_ERROR(CheckSequenceLengths(node, lens->constant, p.seq));
    }
  }
  const DType dtype = node.input(kX)->dtype;
  SetOutput(node, 0, dtype,
            p.batch_major ? Shape{p.batch, p.seq, d, h} : Shape{p.seq, d, p.batch, h});
  SetOutput(node, 1, dtype, StateShape(p));
  SetOutput(node, 2, dtype, StateShape(p));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Kernel

std::vector<double> ReadAll(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.GetAsDouble(i);
  return v;
}

void WriteAll(const std::vector<double>& v, Tensor& t) {
  DispatchDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(t.raw_data());
    for (size_t i = 0; i < v.size(); ++i) out[i] = FromDouble<T>(v[i]);
  });
}

// One direction's weights, rows of `cols` doubles: y[j] = sum_k m[j][k] v[k].
void MatVec(const double* m, int64_t rows, int64_t cols, const double* v, double* y) {
  for (int64_t j = 0; j < rows; ++j) {
    double acc = 0;
    for (int64_t k = 0; k < cols; ++k) acc += m[j * cols + k] * v[k];
    y[j] = acc;
  }
}

// The inputs of a run as doubles; absent optional inputs are zeros.
struct RnnData {
  std::vector<double> x, w, r, b, h0, c0, p;
  std::vector<int64_t> lens;
};

class RnnRunner {
 public:
  RnnRunner(const RnnPlan& plan, const RnnData& data) : p_(plan), in_(data) {
    const size_t state = static_cast<size_t>(p_.directions * p_.batch * p_.hidden);
    y_.assign(static_cast<size_t>(p_.seq) * state, 0.0);
    y_h_.assign(state, 0.0);
    y_c_.assign(state, 0.0);
  }

  void Run() {
    for (int64_t d = 0; d < p_.directions; ++d) {
      for (int64_t b = 0; b < p_.batch; ++b) RunSequence(d, b);
    }
  }

  const std::vector<double>& y() const { return y_; }
  const std::vector<double>& y_h() const { return y_h_; }
  const std::vector<double>& y_c() const { return y_c_; }

 private:
  // Element offsets of (t, b) in X, of (t, d, b) in Y and of (d, b) in the
  // state tensors, for either layout.
  int64_t XAt(int64_t t, int64_t b) const {
    return (p_.batch_major ? b * p_.seq + t : t * p_.batch + b) * p_.input;
  }
  int64_t YAt(int64_t t, int64_t d, int64_t b) const {
    return (p_.batch_major ? (b * p_.seq + t) * p_.directions + d
                           : (t * p_.directions + d) * p_.batch + b) *
           p_.hidden;
  }
  int64_t StateAt(int64_t d, int64_t b) const {
    return (p_.batch_major ? b * p_.directions + d : d * p_.batch + b) * p_.hidden;
  }
  double Clip(double v) const { return p_.clip > 0 ? std::clamp(v, -p_.clip, p_.clip) : v; }
  const Activation& Act(int64_t d, size_t k) const {
    return p_.acts[static_cast<size_t>(d) * p_.cell->num_activations + k];
  }

  void RunSequence(int64_t d, int64_t b) {
    const int64_t hs = p_.hidden, rows = p_.cell->gates * hs;
    const bool backwards = p_.reverse || d == 1;
    const int64_t len = in_.lens.empty() ? p_.seq : in_.lens[b];
    const double* w = in_.w.data() + d * rows * p_.input;
    const double* r = in_.r.data() + d * rows * hs;
    const double* wb = in_.b.data() + d * 2 * rows;
    const double* rb = wb + rows;
    std::vector<double> h(in_.h0.begin() + StateAt(d, b), in_.h0.begin() + StateAt(d, b) + hs);
    std::vector<double> c(in_.c0.begin() + StateAt(d, b), in_.c0.begin() + StateAt(d, b) + hs);
    std::vector<double> xw(rows), hr(rows), next(hs);
    for (int64_t step = 0; step < len; ++step) {
      const int64_t t = backwards ? len - 1 - step : step;
      MatVec(w, rows, p_.input, in_.x.data() + XAt(t, b), xw.data());
      for (int64_t j = 0; j < rows; ++j) xw[j] += wb[j];
      switch (p_.cell->kind) {
        case CellKind::kRnn:
          StepRnn(d, r, rb, xw, h, hr, next);
          break;
        case CellKind::kGru:
          StepGru(d, r, rb, xw, h, hr, next);
          break;
        case CellKind::kLstm:
          StepLstm(d, r, rb, xw, h, c, hr, next);
          break;
      }
      h.swap(next);
      std::copy(h.begin(), h.end(), y_.begin() + YAt(t, d, b));
    }
    // An empty sequence ends in zero state, as onnxruntime defines it.
    if (len > 0) {
      std::copy(h.begin(), h.end(), y_h_.begin() + StateAt(d, b));
      std::copy(c.begin(), c.end(), y_c_.begin() + StateAt(d, b));
    }
  }

  void StepRnn(int64_t d, const double* r, const double* rb, const std::vector<double>& xw,
               const std::vector<double>& h, std::vector<double>& hr, std::vector<double>& next) {
    MatVec(r, p_.hidden, p_.hidden, h.data(), hr.data());
    for (int64_t j = 0; j < p_.hidden; ++j) next[j] = Act(d, 0)(Clip(xw[j] + hr[j] + rb[j]));
  }

  // Gates z, r, h. With linear_before_reset the reset gate scales R_h Ht-1 + Rb_h;
  // without, it scales Ht-1 before R_h.
  void StepGru(int64_t d, const double* r, const double* rb, const std::vector<double>& xw,
               const std::vector<double>& h, std::vector<double>& hr, std::vector<double>& next) {
    const int64_t hs = p_.hidden;
    MatVec(r, 2 * hs, hs, h.data(), hr.data());
    std::vector<double> z(hs), reset(hs), candidate(hs);
    for (int64_t j = 0; j < hs; ++j) {
      z[j] = Act(d, 0)(Clip(xw[j] + hr[j] + rb[j]));
      reset[j] = Act(d, 0)(Clip(xw[hs + j] + hr[hs + j] + rb[hs + j]));
    }
    const double* rh = r + 2 * hs * hs;
    if (p_.linear_before_reset) {
      MatVec(rh, hs, hs, h.data(), candidate.data());
      for (int64_t j = 0; j < hs; ++j) candidate[j] = reset[j] * (candidate[j] + rb[2 * hs + j]);
    } else {
      std::vector<double> gated(hs);
      for (int64_t j = 0; j < hs; ++j) gated[j] = reset[j] * h[j];
      MatVec(rh, hs, hs, gated.data(), candidate.data());
      for (int64_t j = 0; j < hs; ++j) candidate[j] += rb[2 * hs + j];
    }
    for (int64_t j = 0; j < hs; ++j) {
      const double ht = Act(d, 1)(Clip(xw[2 * hs + j] + candidate[j]));
      next[j] = (1 - z[j]) * ht + z[j] * h[j];
    }
  }

  // Gates i, o, f, c; peepholes P hold i, o, f. The output gate peeks at the
  // new cell state, the input and forget gates at the old one.
  void StepLstm(int64_t d, const double* r, const double* rb, const std::vector<double>& xw,
                const std::vector<double>& h, std::vector<double>& c, std::vector<double>& hr,
                std::vector<double>& next) {
    const int64_t hs = p_.hidden;
    MatVec(r, 4 * hs, hs, h.data(), hr.data());
    const double* peep = in_.p.data() + d * 3 * hs;
    auto pre = [&](int64_t gate, int64_t j) {
      return xw[gate * hs + j] + hr[gate * hs + j] + rb[gate * hs + j];
    };
    for (int64_t j = 0; j < hs; ++j) {
      const double i = Act(d, 0)(Clip(pre(0, j) + peep[j] * c[j]));
      const double f =
          p_.input_forget ? 1 - i : Act(d, 0)(Clip(pre(2, j) + peep[2 * hs + j] * c[j]));
      const double cell = Act(d, 1)(Clip(pre(3, j)));
      c[j] = f * c[j] + i * cell;
      const double o = Act(d, 0)(Clip(pre(1, j) + peep[hs + j] * c[j]));
      next[j] = o * Act(d, 2)(c[j]);
    }
  }

  const RnnPlan& p_;
  const RnnData& in_;
  std::vector<double> y_, y_h_, y_c_;
};

Status RunRnn(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(const RnnPlan p, PlanRnn(ctx.node, ctx.in(kX).shape(), ctx.in(kW).shape(),
                                                   ctx.in(kR).shape()));
  const size_t state = static_cast<size_t>(p.directions * p.batch * p.hidden);
  const int64_t rows = p.cell->gates * p.hidden;
  auto read_or_zeros = [&](size_t i, size_t n) {
    return ctx.has_in(i) ? ReadAll(ctx.in(i)) : std::vector<double>(n, 0.0);
  };
  RnnData data;
  data.x = ReadAll(ctx.in(kX));
  data.w = ReadAll(ctx.in(kW));
  data.r = ReadAll(ctx.in(kR));
  data.b = read_or_zeros(kB, static_cast<size_t>(p.directions * 2 * rows));
  data.h0 = read_or_zeros(kInitialH, state);
  const bool lstm = p.cell->kind == CellKind::kLstm;
  data.c0 = lstm ? read_or_zeros(kInitialC, state) : std::vector<double>(state, 0.0);
  data.p = lstm ? read_or_zeros(kP, static_cast<size_t>(p.directions * 3 * p.hidden))
                : std::vector<double>();
  if (ctx.has_in(kSeqLens)) {
    TESSEL_RETURN_IF_ERROR(CheckSequenceLengths(ctx.node, ctx.in(kSeqLens), p.seq));
    data.lens = ctx.in(kSeqLens).ToInt64Vector();
  }
  RnnRunner runner(p, data);
  runner.Run();
  if (ctx.has_out(0)) WriteAll(runner.y(), ctx.out(0));
  if (ctx.has_out(1)) WriteAll(runner.y_h(), ctx.out(1));
  if (ctx.has_out(2)) WriteAll(runner.y_c(), ctx.out(2));
  return Status::Ok();
}

}  // namespace

void RegisterRnnOps(OpRegistry& r) {
  r.Register({.op_type = "RNN",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 6,
              .max_outputs = 2,
              .infer = InferRnn,
              .run = RunRnn});
  r.Register({.op_type = "GRU",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 6,
              .max_outputs = 2,
              .infer = InferRnn,
              .run = RunRnn});
  r.Register({.op_type = "LSTM",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .min_inputs = 3,
              .max_inputs = 8,
              .max_outputs = 3,
              .infer = InferRnn,
              .run = RunRnn});
}

}  // namespace tessel::ops
