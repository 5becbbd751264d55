#include "snippets/normalize_domain.h"

#include <algorithm>

namespace tessel::snippets {

Status NormalizeDomain(KernelIR& ir) {
  Shape domain;
  for (const KernelArg& a : ir.args) {
    if (a.is_output && a.shape.size() > domain.size()) domain = a.shape;
  }
  for (const KernelArg& a : ir.args) {
    if (!a.is_output) continue;
    if (a.shape != domain) {
      return Unsupported("snippet '" + ir.name + "': output '" + a.name + "' has shape " +
                         ShapeToString(a.shape) + ", not the domain " + ShapeToString(domain) +
                         " every output must span");
    }
  }
  if (domain.size() > static_cast<size_t>(kDomainRank)) {
    return Unsupported("snippet '" + ir.name + "': rank " + std::to_string(domain.size()) +
                       " exceeds the 6D domain");
  }
  ir.output_shape = domain;
  // Right-align into 6D.
  std::array<int64_t, kDomainRank> dims;
  dims.fill(1);
  std::copy(domain.begin(), domain.end(), dims.end() - static_cast<std::ptrdiff_t>(domain.size()));
  std::vector<std::array<int64_t, kDomainRank>> strides(ir.args.size());
  for (size_t k = 0; k < ir.args.size(); ++k) {
    const Shape& s = ir.args[k].shape;
    if (s.size() > domain.size()) {
      return InvalidArgument("snippet '" + ir.name + "': input '" + ir.args[k].name + "' shape " +
                             ShapeToString(s) + " does not broadcast to " + ShapeToString(domain));
    }
    std::array<int64_t, kDomainRank> arg_dims;
    arg_dims.fill(1);
    std::copy(s.begin(), s.end(), arg_dims.end() - static_cast<std::ptrdiff_t>(s.size()));
    int64_t stride = 1;
    for (int d = kDomainRank - 1; d >= 0; --d) {
      if (arg_dims[d] != 1 && arg_dims[d] != dims[d]) {
        return InvalidArgument("snippet '" + ir.name + "': input '" + ir.args[k].name + "' shape " +
                               ShapeToString(s) + " does not broadcast to " +
                               ShapeToString(domain));
      }
      strides[k][d] = arg_dims[d] == 1 ? 0 : stride;
      stride *= arg_dims[d];
    }
  }
  // Merge from the innermost dimension outwards; size-1 dimensions vanish.
  std::vector<int64_t> merged_dims;
  std::vector<std::vector<int64_t>> merged_strides(ir.args.size());
  for (int d = kDomainRank - 1; d >= 0; --d) {
    if (dims[d] == 1) continue;
    bool can_merge = !merged_dims.empty();
    for (size_t k = 0; k < ir.args.size() && can_merge; ++k) {
      can_merge = strides[k][d] == merged_strides[k].back() * merged_dims.back();
    }
    if (can_merge) {
      merged_dims.back() *= dims[d];
      continue;
    }
    merged_dims.push_back(dims[d]);
    for (size_t k = 0; k < ir.args.size(); ++k) merged_strides[k].push_back(strides[k][d]);
  }
  ir.domain.fill(1);
  for (KernelArg& a : ir.args) a.strides.fill(0);
  for (size_t i = 0; i < merged_dims.size(); ++i) {
    const size_t d = kDomainRank - 1 - i;
    ir.domain[d] = merged_dims[i];
    for (size_t k = 0; k < ir.args.size(); ++k) ir.args[k].strides[d] = merged_strides[k][i];
  }
  return Status::Ok();
}

}  // namespace tessel::snippets
