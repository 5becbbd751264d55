#include "snippets/interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/check.h"

namespace tessel::snippets {

namespace {

constexpr int64_t kBlock = 64;

// As src/ops: NaN in a wins, then NaN in b, then the larger (smaller).
float Max(float a, float b) { return std::isnan(a) ? a : (std::isnan(b) || b > a) ? b : a; }
float Min(float a, float b) { return std::isnan(a) ? a : (std::isnan(b) || b < a) ? b : a; }
float Sigmoid(float x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

float Unary(const Instr& in, float x) {
  const float a0 = in.attr[0];
  const float a1 = in.attr[1];
  switch (in.op) {
    case KOp::kCopy:
    case KOp::kBroadcastMove:
      return x;
    case KOp::kClampLow:
      return std::max(x, a0);
    case KOp::kClampHigh:
      return std::min(x, a0);
    case KOp::kAbs:
      return std::abs(x);
    case KOp::kNeg:
      return 0.0f - x;
    case KOp::kSqrt:
      return std::sqrt(x);
    case KOp::kReciprocal:
      return 1 / x;
    case KOp::kFloor:
      return std::floor(x);
    case KOp::kCeil:
      return std::ceil(x);
    case KOp::kRound:
      return std::nearbyint(x);
    case KOp::kPowerStatic:
      return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(a0)));
    case KOp::kLeakyRelu:
      return x < 0 ? a0 * x : x;
    case KOp::kElu:
      return x < 0 ? a0 * std::expm1(x) : x;
    case KOp::kSelu:
      return x > 0 ? a0 * x : a1 * std::expm1(x);
    case KOp::kExp:
      return std::exp(x);
    case KOp::kLog:
      return std::log(x);
    case KOp::kErf:
      return std::erf(x);
    case KOp::kTanh:
      return std::tanh(x);
    case KOp::kSigmoid:
      return Sigmoid(x);
    default:
      break;
  }
  TESSEL_CHECK_MSG(false, GetOpInfo(in.op).name);
  return 0;
}

float Binary(KOp op, float a, float b) {
  switch (op) {
    case KOp::kAdd:
      return a + b;
    case KOp::kSub:
      return a - b;
    case KOp::kMul:
      return a * b;
    case KOp::kDiv:
      return a / b;
    case KOp::kMax:
      return Max(a, b);
    case KOp::kMin:
      return Min(a, b);
    case KOp::kCmpEq:
      return a == b ? 1.0f : 0.0f;
    case KOp::kCmpNe:
      return a != b ? 1.0f : 0.0f;
    case KOp::kCmpLt:
      return a < b ? 1.0f : 0.0f;
    case KOp::kCmpLe:
      return a <= b ? 1.0f : 0.0f;
    case KOp::kCmpGt:
      return a > b ? 1.0f : 0.0f;
    case KOp::kCmpGe:
      return a >= b ? 1.0f : 0.0f;
    case KOp::kPRelu:
      return a < 0 ? a * b : a;
    default:
      break;
  }
  TESSEL_CHECK_MSG(false, GetOpInfo(op).name);
  return 0;
}

}  // namespace

void Interpret(const KernelIR& ir, const KernelCall& call) {
  const size_t nv = static_cast<size_t>(ir.num_values);
  std::vector<float> regs(nv * kBlock);
  auto reg = [&](int v) { return regs.data() + static_cast<size_t>(v) * kBlock; };
  for (const Instr& in : ir.body) {
    if (in.op == KOp::kScalar) std::fill_n(reg(in.dst), kBlock, in.attr[0]);
  }
  std::vector<char*> ptr(ir.args.size());
  for (size_t k = 0; k < ir.args.size(); ++k) {
    ptr[k] = static_cast<char*>(const_cast<void*>(call.ptr[k]));
  }
  for (int64_t row = 0; row < call.rows; ++row) {
    for (int64_t begin = 0; begin < call.inner; begin += kBlock) {
      const int64_t n = std::min(kBlock, call.inner - begin);
      for (const Instr& in : ir.body) {
        switch (in.op) {
          case KOp::kScalar:
            break;
          case KOp::kLoad:
          case KOp::kBroadcastLoad: {
            const KernelArg& a = ir.args[static_cast<size_t>(in.arg)];
            const char* p = ptr[static_cast<size_t>(in.arg)];
            const int64_t step = a.broadcast_inner() ? 0 : 1;
            float* d = reg(in.dst);
            for (int64_t l = 0; l < n; ++l) {
              const int64_t i = (begin + l) * step;
              if (a.dtype == DType::kBool) {
                // Read as a byte: any nonzero byte is true.
                d[l] = reinterpret_cast<const uint8_t*>(p)[i] != 0 ? 1.0f : 0.0f;
              } else {
                std::memcpy(&d[l], p + i * 4, 4);
              }
            }
            break;
          }
          case KOp::kStore: {
            const KernelArg& a = ir.args[static_cast<size_t>(in.arg)];
            char* p = ptr[static_cast<size_t>(in.arg)];
            const float* s = reg(in.srcs[0]);
            for (int64_t l = 0; l < n; ++l) {
              if (a.dtype == DType::kBool) {
                reinterpret_cast<bool*>(p)[begin + l] = s[l] != 0;
              } else {
                std::memcpy(p + (begin + l) * 4, &s[l], 4);
              }
            }
            break;
          }
          case KOp::kSelect: {
            const float* c = reg(in.srcs[0]);
            const float* x = reg(in.srcs[1]);
            const float* y = reg(in.srcs[2]);
            float* d = reg(in.dst);
            for (int64_t l = 0; l < n; ++l) d[l] = c[l] != 0 ? x[l] : y[l];
            break;
          }
          default: {
            float* d = reg(in.dst);
            if (in.srcs.size() == 2) {
              const float* a = reg(in.srcs[0]);
              const float* b = reg(in.srcs[1]);
              for (int64_t l = 0; l < n; ++l) d[l] = Binary(in.op, a[l], b[l]);
            } else {
              const float* x = reg(in.srcs[0]);
              for (int64_t l = 0; l < n; ++l) d[l] = Unary(in, x[l]);
            }
            break;
          }
        }
      }
    }
    for (size_t k = 0; k < ir.args.size(); ++k) {
      const KernelArg& a = ir.args[k];
      const int64_t walked =
          a.broadcast_inner() ? 0 : call.inner * static_cast<int64_t>(DTypeSize(a.dtype));
      ptr[k] += walked + call.row_advance_bytes[k];
    }
  }
}

}  // namespace tessel::snippets
