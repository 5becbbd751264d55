// A deployment that only runs: loads a .tsl, makes the target it records,
// runs it once on zero inputs and prints each output's name and element
// count. Linked with tessel_runtime alone, so that
// tests/runtime/check_runtime_links.sh can show that the runtime carries
// neither the ONNX importer nor protobuf.
//
//   run_tsl MODEL.tsl
#include <cstdio>

#include "model/model_file.h"
#include "model/prepare.h"
#include "targets/registry.h"

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_tsl MODEL.tsl\n");
    return 2;
  }
  StatusOr<CompiledModel> model = ReadCompiledModel(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "run_tsl: error: %s\n", model.status().message().c_str());
    return 2;
  }
  auto target = targets::MakeTarget(model->target);
  if (!target.ok()) {
    std::fprintf(stderr, "run_tsl: error: %s\n", target.status().message().c_str());
    return 2;
  }
  std::vector<Tensor> inputs;
  for (const ir::Value* v : model->graph->inputs()) {
    if (v->is_constant()) continue;
    inputs.emplace_back(v->dtype, v->shape);
  }
  auto exe = Prepare(*model, **target);
  if (!exe.ok()) {
    std::fprintf(stderr, "run_tsl: error: %s\n", exe.status().message().c_str());
    return 2;
  }
  auto outputs = (*exe)->Run(inputs);
  if (!outputs.ok()) {
    std::fprintf(stderr, "run_tsl: error: %s\n", outputs.status().message().c_str());
    return 2;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    std::printf("%s %lld\n", model->graph->outputs()[i]->name.c_str(),
                static_cast<long long>((*outputs)[i].num_elements()));
  }
  return 0;
}
