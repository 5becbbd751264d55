// The calling convention of a snippet kernel, shared by the x86 code and the
// interpreter: one call walks `rows` rows of `inner` elements.
//
//   for each of `rows` rows:
//     for each of `inner` elements:   (vector tile, then scalar tail tile)
//       read every input at ptr[k], write every output at ptr[k];
//       advance ptr[k] by one element, unless argument k is broadcast along
//       the innermost dimension
//     ptr[k] += row_advance_bytes[k]
#pragma once

#include <cstddef>
#include <cstdint>

#include "snippets/kernel_ir.h"

namespace tessel::snippets {

struct KernelCall {
  const void* ptr[kMaxKernelArgs];
  int64_t row_advance_bytes[kMaxKernelArgs];
  int64_t inner;
  int64_t rows;
};

inline constexpr int32_t kCallPtrOffset = static_cast<int32_t>(offsetof(KernelCall, ptr));
inline constexpr int32_t kCallAdvanceOffset =
    static_cast<int32_t>(offsetof(KernelCall, row_advance_bytes));
inline constexpr int32_t kCallInnerOffset = static_cast<int32_t>(offsetof(KernelCall, inner));
inline constexpr int32_t kCallRowsOffset = static_cast<int32_t>(offsetof(KernelCall, rows));

}  // namespace tessel::snippets
