// Node attributes: a small typed map. Attribute types are validated against
// the op's schema at import (onnx/importer), so an op reading an attribute
// may rely on its type; the range of its value is the op's to check, in
// shape inference.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace tessel {

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

class AttributeMap {
 public:
  bool Has(const std::string& name) const { return attrs_.count(name) != 0; }
  void Set(const std::string& name, AttrValue value) { attrs_[name] = std::move(value); }
  void Erase(const std::string& name) { attrs_.erase(name); }

  // Typed getters: the value if present with that type, else `fallback`.
  // An int attribute read as float (and vice versa) converts.
  int64_t Int(const std::string& name, int64_t fallback) const;
  float Float(const std::string& name, float fallback) const;
  std::string String(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& name,
                            const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> Floats(const std::string& name, const std::vector<float>& fallback = {}) const;
  std::vector<std::string> Strings(const std::string& name) const;
  const Tensor* TensorAttr(const std::string& name) const;  // nullptr if absent

  const std::map<std::string, AttrValue>& all() const { return attrs_; }

 private:
  std::map<std::string, AttrValue> attrs_;
};

// "alpha=0.2", "pads=[1,1,1,1]", "value=tensor<float32 3x4>".
std::string AttrValueToString(const AttrValue& v);

}  // namespace tessel
