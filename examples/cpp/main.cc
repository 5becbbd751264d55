// tessel from C++: compile an ONNX model (or load a .tsl), run it on an
// input of ones, and print the outputs' largest values.
//   tessel_example model.onnx [model.tsl]
#include <tessel/tessel.h>

#include <algorithm>
#include <cstdio>
#include <string>

int main(int argc, char** argv) try {
  if (argc < 2)
    return std::fprintf(stderr, "usage: %s MODEL.onnx|MODEL.tsl [OUT.tsl]\n", argv[0]), 2;
  const std::string path = argv[1];
  tessel::Model model = path.ends_with(".tsl") ? tessel::Load(path) : tessel::Compile(path);
  if (argc > 2) model.Save(argv[2]);
  tessel::Session session = model.Prepare();
  tessel::NamedArrays inputs;
  for (const tessel::TensorInfo& in : model.inputs()) {
    tessel::Array a = tessel::Array::Allocate(in.type, in.shape);
    if (in.type == tessel::ElementType::kFloat32)
      std::fill_n(a.data<float>(), a.element_count(), 1.0f);
    inputs.emplace(in.name, a);
  }
  for (const auto& [name, out] : session.Run(inputs)) {
    const float* v = out.data<float>();
    const auto best = std::max_element(v, v + out.element_count()) - v;
    std::printf("%s: %lld values, largest %.6g at %lld (%s)\n", name.c_str(),
                static_cast<long long>(out.element_count()), v[best], static_cast<long long>(best),
                session.Describe().c_str());
  }
  return 0;
} catch (const tessel::Error& e) {
  std::fprintf(stderr, "tessel_example: %s: %s\n", tessel::ErrorCodeName(e.code()), e.what());
  return 2;
}
