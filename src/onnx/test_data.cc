#include "onnx/test_data.h"

#include <algorithm>
#include <cmath>

#include "onnx/tensor_io.h"

namespace tessel::onnx_io {

namespace fs = std::filesystem;

namespace {

// input_0.pb, input_1.pb, ... until one is missing.
StatusOr<std::vector<NamedTensor>> ReadSeries(const fs::path& dir, const std::string& prefix) {
  std::vector<NamedTensor> series;
  for (int k = 0;; ++k) {
    const fs::path p = dir / (prefix + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) break;
    NamedTensor nt;
    TESSEL_ASSIGN_OR_RETURN(nt.tensor, ReadTensorFile(p, &nt.name));
    series.push_back(std::move(nt));
  }
  return series;
}

}  // namespace

StatusOr<std::vector<TestDataSet>> ReadTestDataSets(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("'" + dir.string() + "' is not a directory");
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "test_data_set_";
    if (entry.is_directory() && name.rfind(prefix, 0) == 0) {
      found.emplace_back(std::atoi(name.c_str() + prefix.size()), entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<TestDataSet> sets;
  for (auto& [index, path] : found) {
    TestDataSet set;
    set.dir = path;
    TESSEL_ASSIGN_OR_RETURN(set.inputs, ReadSeries(path, "input_"));
    TESSEL_ASSIGN_OR_RETURN(set.outputs, ReadSeries(path, "output_"));
    sets.push_back(std::move(set));
  }
  return sets;
}

Comparison CompareTensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  Comparison c;
  if (actual.dtype() != expected.dtype()) {
    c.problem = std::string("dtype ") + DTypeName(actual.dtype()) + ", expected " +
                DTypeName(expected.dtype());
    return c;
  }
  if (actual.shape() != expected.shape()) {
    c.problem =
        "shape " + ShapeToString(actual.shape()) + ", expected " + ShapeToString(expected.shape());
    return c;
  }
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) ++c.mismatches;
      continue;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a != e) ++c.mismatches;
      continue;
    }
    const double abs_err = std::fabs(a - e);
    c.max_abs_error = std::max(c.max_abs_error, abs_err);
    if (e != 0) c.max_rel_error = std::max(c.max_rel_error, abs_err / std::fabs(e));
    if (abs_err > atol + rtol * std::fabs(e)) ++c.mismatches;
  }
  c.ok = c.mismatches == 0;
  return c;
}

}  // namespace tessel::onnx_io
