#include "onnx/model_builder.h"

#include "core/file_io.h"
#include "onnx/tensor_io.h"

namespace tessel::onnx_io {

ModelBuilder::ModelBuilder(int opset, int ir_version) {
  model_.set_ir_version(ir_version);
  model_.set_producer_name("tessel");
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  model_.mutable_graph()->set_name("built");
}

void ModelBuilder::Input(const std::string& name, DType dtype, const Shape& shape) {
  auto* info = model_.mutable_graph()->add_input();
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(dtype));
  auto* s = tt->mutable_shape();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      s->add_dim()->set_dim_param("N" + std::to_string(i));
    } else {
      s->add_dim()->set_dim_value(shape[i]);
    }
  }
}

void ModelBuilder::Output(const std::string& name, DType dtype) {
  auto* info = model_.mutable_graph()->add_output();
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(dtype));
  // The ONNX checker wants a shape field; tessel infers output shapes itself
  // and ignores this one.
  tt->mutable_shape();
}

void ModelBuilder::Initializer(const std::string& name, const Tensor& t, TensorEncoding encoding) {
  onnx::TensorProto* p = model_.mutable_graph()->add_initializer();
  TensorToProto(t, name, p);
  if (encoding == TensorEncoding::kRaw) return;
  if (encoding == TensorEncoding::kExternal) {
    p->clear_raw_data();
    p->set_data_location(onnx::TensorProto::EXTERNAL);
    const std::string file = name + ".bin";
    auto* kv = p->add_external_data();
    kv->set_key("location");
    kv->set_value(file);
    external_.push_back({file, t});
    return;
  }
  p->clear_raw_data();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DType::kFloat32:
        p->add_float_data(static_cast<float>(t.GetAsDouble(i)));
        break;
      case DType::kFloat64:
        p->add_double_data(t.GetAsDouble(i));
        break;
      case DType::kInt64:
        p->add_int64_data(t.GetAsInt64(i));
        break;
      case DType::kUInt32:
      case DType::kUInt64:
        p->add_uint64_data(static_cast<uint64_t>(t.GetAsInt64(i)));
        break;
      case DType::kFloat16:
      case DType::kBFloat16:
        p->add_int32_data(static_cast<const uint16_t*>(t.raw_data())[i]);
        break;
      default:
        p->add_int32_data(static_cast<int32_t>(t.GetAsInt64(i)));
        break;
    }
  }
}

onnx::NodeProto& ModelBuilder::Node(const std::string& op_type,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    const std::string& name) {
  onnx::NodeProto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

namespace {
onnx::AttributeProto* NewAttr(onnx::NodeProto& n, const std::string& name,
                              onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name, float v) {
  NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name,
                           const std::vector<int64_t>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name,
                           const std::vector<float>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
void ModelBuilder::SetAttr(onnx::NodeProto& n, const std::string& name, const Tensor& v) {
  TensorToProto(v, "", NewAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t());
}

Status ModelBuilder::Save(const std::filesystem::path& path) const {
  for (const External& e : external_) {
    const auto& t = e.tensor;
    TESSEL_RETURN_IF_ERROR(
        WriteFileAtomically(path.parent_path() / e.file,
                            std::string(static_cast<const char*>(t.raw_data()), t.size_bytes())));
  }
  return WriteFileAtomically(path, model_.SerializeAsString());
}

}  // namespace tessel::onnx_io
