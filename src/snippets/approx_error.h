// Accuracy of the JIT's transcendental approximations over float inputs,
// against the exact function evaluated in double. Shared by the accuracy
// test (a dense sample of bit patterns) and bench/snippets/approx_error (all
// 2^32 of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "snippets/isa.h"
#include "snippets/snippet_kernel.h"

namespace tessel::snippets {

struct ApproxError {
  std::string function;
  double max_ulp = 0;              // |got - exact| / ulp(exact), over normal results
  float max_ulp_at = 0;            // an input where max_ulp occurs
  double max_rel_eps = 0;          // |got - exact| / |exact| / FLT_EPSILON, normal results
  double max_abs_subnormal = 0;    // |got - exact| where |exact| < FLT_MIN
  int64_t special_mismatches = 0;  // NaN or infinity where the exact result is not (or vice versa)
  int64_t inputs = 0;
};

// The functions measured: "exp", "log", "erf", "tanh", "sigmoid", "expm1"
// (Elu with alpha 1, on negative inputs).
const std::vector<std::string>& ApproxFunctions();

// Measures `function` on the float inputs whose bit patterns are
// first, first + stride, ... below 2^32 (NaN inputs skipped), with code path
// `isa`, running chunks through `parallel_for`.
ApproxError MeasureApproxError(const std::string& function, Isa isa, uint64_t stride,
                               uint64_t first = 0, const ParallelFor& parallel_for = nullptr);

}  // namespace tessel::snippets
