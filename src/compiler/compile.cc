#include "compiler/compile.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "ir/verifier.h"
#include "memory/texture_plan.h"
#include "model/model_file.h"
#include "model/prepare.h"
#include "passes/decompose_activations.h"
#include "passes/eliminate_dead_nodes.h"
#include "passes/fold_batch_norm.h"
#include "passes/fold_transposes.h"
#include "passes/fuse_attention.h"
#include "passes/fuse_channel_shuffle.h"
#include "passes/fuse_conv_activation.h"
#include "passes/fuse_layer_norm.h"
#include "passes/fuse_matmul_bias.h"
#include "passes/fuse_rotary.h"
#include "passes/infer_shapes.h"
#include "passes/prune_conv_taps.h"
#include "passes/reparameterize_branches.h"
#include "snippets/tokenize.h"

namespace tessel {

const std::vector<std::string>& StageNames() {
  // One per line: the order the stages run in.
  static const std::vector<std::string> names = {"import",                //
                                                 "infer-shapes",          //
                                                 "eliminate-dead-nodes",  //
                                                 "decompose",             //
                                                 "merge-mixed-convs",     //
                                                 "fold-batchnorm",        //
                                                 "reparameterize",        //
                                                 "prune-conv-taps",       //
                                                 "fuse-layernorm",        //
                                                 "fuse-rotary",           //
                                                 "fuse-attention",        //
                                                 "fuse-conv",             //
                                                 "fuse-matmul",           //
                                                 "fuse-shuffle",          //
                                                 "tokenize-snippets",     //
                                                 "select-kernels",        //
                                                 "plan-memory"};
  return names;
}

namespace {

// Writes what the target decided into the graph: what the .tsl records.
void RecordDecisions(const targets::KernelDecisions& decisions, ir::Graph& graph) {
  for (size_t i = 0; i < decisions.nodes.size(); ++i) {
    graph.nodes()[i]->kernel = decisions.nodes[i].kernel;
  }
  for (const auto& v : graph.values()) {
    const targets::ValuePlacement& p = decisions.values[static_cast<size_t>(v->id)];
    v->layout = p.layout;
    v->scope = p.scope;
  }
}

}  // namespace

StatusOr<CompiledModel> Compile(const std::filesystem::path& onnx_path,
                                const targets::Target& target, const CompilerOptions& options) {
  CompiledModel model;
  model.source = onnx_path.string();
  model.target = target.spec();
  auto finish_stage = [&](const std::string& stage, bool typed) -> Status {
    if (options.verify_each_stage) {
      Status s = ir::VerifyGraph(*model.graph, typed);
      if (!s.ok()) return Internal("after stage '" + stage + "': " + s.message());
    }
    if (options.after_stage) options.after_stage(stage, *model.graph);
    return Status::Ok();
  };

  // 1. ONNX -> IR: parse, check, convert; graph inputs typed, nodes sorted.
  TESSEL_ASSIGN_OR_RETURN(model.graph, onnx_io::ImportModel(onnx_path, options.import));
  TESSEL_RETURN_IF_ERROR(finish_stage("import", /*typed=*/false));

  // 2. Static shapes for every value; constants folded.
  passes::InferShapesOptions infer;
  infer.max_tensor_bytes = options.limits.max_tensor_bytes;
  TESSEL_RETURN_IF_ERROR(passes::InferShapes(*model.graph, infer));
  TESSEL_RETURN_IF_ERROR(finish_stage("infer-shapes", true));

  // 3. Drop folded and unused nodes: what remains is the schedule.
  passes::EliminateDeadNodes(*model.graph);
  // Two Transposes with a view between -> one (MobileViT's patches).
  if (options.fusion) passes::FoldTransposes(*model.graph);
  TESSEL_RETURN_IF_ERROR(finish_stage("eliminate-dead-nodes", true));

  // 3b. Gelu and Swish -> the elementwise ops they are made of, which the
  // snippets fuse and every target runs.
  TESSEL_RETURN_IF_ERROR(passes::DecomposeActivations(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("decompose", true));

  // 3'. Split -> a Conv per part -> Concat (MixNet's mixed kernels) -> one
  // grouped Conv, before the BatchNormalization after it folds in.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::MergeMixedConvs(*model.graph).status());
  TESSEL_RETURN_IF_ERROR(finish_stage("merge-mixed-convs", true));

  // 4. Conv -> BatchNormalization (inference) -> one Conv with the
  // normalization folded into its weights and bias; any other inference
  // BatchNormalization -> per-channel Sub, Mul, Add (for the snippets).
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FoldBatchNorm(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("fold-batchnorm", true));

  // 4'. Parallel convolutions of one input summed with an identity branch
  // (RepVGG, MobileOne and RepViT blocks as trained) -> one Conv.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::ReparameterizeBranches(*model.graph).status());
  TESSEL_RETURN_IF_ERROR(finish_stage("reparameterize", true));

  // 4a. Kernel taps that only ever read padding (atrous convs dilated past
  // the feature map) -> dropped, with the pads.
  TESSEL_RETURN_IF_ERROR(passes::PruneConvTaps(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("prune-conv-taps", true));

  // 4b. Layer normalization written out in elementwise ops (exports before
  // opset 17) -> one LayerNormalization node.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseLayerNorm(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-layernorm", true));

  // 4c. Rotary position embeddings written out (Slices, Neg, Concat, Mul,
  // Add) -> one Rotary node.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseRotary(*model.graph).status());
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-rotary", true));

  // 4d. Scaled dot-product attention written out (MatMul, scale, mask Add,
  // Softmax, MatMul) -> one FusedAttention node, its K^T transposed back and
  // grouped-query attention's repeated heads read as they are.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseAttention(*model.graph).status());
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-attention", true));

  // 5. Conv + residual Add + activation (Relu, Clip, LeakyRelu, Sigmoid,
  // HardSigmoid, HardSwish, Swish) -> FusedConv, whose kernel applies the
  // Add and the activation as post-ops.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseConvActivation(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-conv", true));

  // 6. MatMul by constant weights + bias Add + residual Add -> FusedMatMul.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseMatMulBias(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-matmul", true));

  // 7. Concat -> Reshape -> Transpose -> Reshape -> Slices (ShuffleNet's
  // channel shuffle) -> one ChannelShuffle node: one copy instead of four.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(passes::FuseChannelShuffle(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("fuse-shuffle", true));

  // 8. Elementwise regions -> Subgraph nodes, one fused kernel each.
  if (options.fusion) TESSEL_RETURN_IF_ERROR(snippets::TokenizeSnippets(*model.graph));
  TESSEL_RETURN_IF_ERROR(finish_stage("tokenize-snippets", true));

  // 9. The target picks every node's kernel (and with it the layouts
  // adjacent kernels exchange and the scratch each needs) and where each
  // value is stored.
  TESSEL_ASSIGN_OR_RETURN(targets::KernelDecisions decisions, target.SelectKernels(*model.graph));
  RecordDecisions(decisions, *model.graph);
  if (decisions.resolved_spec) model.target = *decisions.resolved_spec;
  model.built_kernels = std::move(decisions.built);
  const std::vector<targets::NodeKernel>& kernels = decisions.nodes;
  TESSEL_RETURN_IF_ERROR(finish_stage("select-kernels", true));

  // 10. Every buffer (tensors between and inside nodes, the kernels'
  // scratch, constants) gets a pool and an offset, and every value in a
  // texture an image and a corner, from the schedule above.
  MemoryOptions memory = options.memory;
  memory.planner.verify = memory.planner.verify || options.verify_each_stage;
  TESSEL_ASSIGN_OR_RETURN(model.memory, PlanMemory(*model.graph, kernels, memory));
  TESSEL_RETURN_IF_ERROR(finish_stage("plan-memory", true));
  int64_t total = 0;
  std::string pools;
  for (const ir::MemoryPool& pool : model.memory.pools) {
    total += pool.size_bytes;
    pools += (pools.empty() ? "" : ", ") + pool.name + " " + FormatByteSize(pool.size_bytes);
  }
  for (const ir::TexturePool& image : model.memory.textures) {
    const int64_t bytes = image.width * image.height * memory::kTexelBytes;
    total += bytes;
    pools += (pools.empty() ? "" : ", ") + image.name + " " + FormatByteSize(bytes);
  }
  const int64_t limit = options.limits.max_memory_bytes > 0 ? options.limits.max_memory_bytes
                                                            : target.memory_limit_bytes();
  if (total > limit) {
    return ResourceExhausted("the model needs " + FormatByteSize(total) + " (" + pools +
                             "), over the memory limit of " + FormatByteSize(limit) +
                             " (--max-memory)");
  }
  model.planned_here = true;

#if defined(__GLIBC__)
  // The ONNX protobuf and the stages' temporaries are gone; hand the freed
  // heap back to the system rather than keep it resident for the whole run.
  malloc_trim(0);
#endif
  return model;
}

StatusOr<CompiledModel> LoadOrCompile(const std::filesystem::path& path,
                                      const targets::Target& target,
                                      const CompilerOptions& options) {
  TESSEL_ASSIGN_OR_RETURN(bool compiled, IsCompiledModelFile(path));
  if (compiled) return ReadCompiledModel(path);
  return Compile(path, target, options);
}

}  // namespace tessel
