#include "ir/attribute.h"

#include <sstream>

namespace tessel {

int64_t AttributeMap::Int(const std::string& name, int64_t fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return fallback;
  if (auto* i = std::get_if<int64_t>(&it->second)) return *i;
  if (auto* f = std::get_if<float>(&it->second)) return FromDouble<int64_t>(*f);
  return fallback;
}

float AttributeMap::Float(const std::string& name, float fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return fallback;
  if (auto* f = std::get_if<float>(&it->second)) return *f;
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  return fallback;
}

std::string AttributeMap::String(const std::string& name, const std::string& fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return fallback;
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  return fallback;
}

std::vector<int64_t> AttributeMap::Ints(const std::string& name,
                                        const std::vector<int64_t>& fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return fallback;
}

std::vector<float> AttributeMap::Floats(const std::string& name,
                                        const std::vector<float>& fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<float>>(&it->second)) return *v;
  return fallback;
}

std::vector<std::string> AttributeMap::Strings(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return {};
  if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
  return {};
}

const Tensor* AttributeMap::TensorAttr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return nullptr;
  return std::get_if<Tensor>(&it->second);
}

namespace {
template <typename T>
void PrintList(std::ostringstream& os, const std::vector<T>& v) {
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) os << ',';
    if (i == 16) {
      os << "... (" << v.size() << ")";
      break;
    }
    os << v[i];
  }
  os << ']';
}
}  // namespace

std::string AttrValueToString(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor>) {
          os << "tensor<" << DTypeName(x.dtype()) << ' ' << ShapeToString(x.shape()) << '>';
        } else if constexpr (std::is_same_v<X, std::string>) {
          os << '"' << x << '"';
        } else if constexpr (std::is_same_v<X, int64_t> || std::is_same_v<X, float>) {
          os << x;
        } else {
          PrintList(os, x);
        }
      },
      v);
  return os.str();
}

}  // namespace tessel
