// The ONNX test format: DIR/model.onnx and DIR/test_data_set_N/{input,output}_K.pb.
// Also the comparison every check uses (numpy.allclose semantics).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"

namespace tessel::onnx_io {

struct NamedTensor {
  std::string name;  // the TensorProto's name; may be empty
  Tensor tensor;
};

struct TestDataSet {
  std::filesystem::path dir;
  std::vector<NamedTensor> inputs;   // input_0.pb, input_1.pb, ...
  std::vector<NamedTensor> outputs;  // output_0.pb, ...
};

// Every test_data_set_* under `dir`, in numeric order.
StatusOr<std::vector<TestDataSet>> ReadTestDataSets(const std::filesystem::path& dir);

struct Comparison {
  bool ok = false;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatches = 0;  // elements outside the tolerance
  std::string problem;     // dtype or shape mismatch, when there is one
};

// |actual - expected| <= atol + rtol * |expected| for every element (NaN equals
// NaN; infinities must match exactly). Dtypes and shapes must agree.
Comparison CompareTensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace tessel::onnx_io
