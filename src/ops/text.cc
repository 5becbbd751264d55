// Text feature extraction: TfIdfVectorizer over integer token ids (string
// pools are not supported: tessel runs numeric tensors only).
//
// Counting follows onnxruntime, whose semantics the ONNX reference copies:
// n-grams are walked through a trie of the pool, with skip distances 1 ..
// max_skip_count + 1 between their items, and unigrams counted only once.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops {
namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

// A trie of the pool's n-grams: the node a path of tokens reaches holds the
// 1-based id of that n-gram in the pool, 0 when the path is only a prefix.
struct TrieNode {
  int64_t id = 0;
  std::map<int64_t, std::unique_ptr<TrieNode>> next;
};

struct TfIdfPlan {
  Weighting weighting = Weighting::kTf;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  std::vector<int64_t> ngram_indexes;  // output position of pool n-gram id - 1
  std::vector<float> weights;          // per output position; empty: all 1
  int64_t output_size = 0;
  std::unique_ptr<TrieNode> trie;
};

std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

StatusOr<TfIdfPlan> PlanTfIdf(const ir::Node& node) {
  const std::string where = node.Describe() + ": ";
  if (node.attrs.Has("pool_strings")) {
    return Unsupported(where + "pool_strings is not supported; tessel runs numeric tensors only");
  }
  TfIdfPlan p;
  const std::string mode = node.attrs.String("mode", "");
  if (mode == "TF") {
    p.weighting = Weighting::kTf;
  } else if (mode == "IDF") {
    p.weighting = Weighting::kIdf;
  } else if (mode == "TFIDF") {
    p.weighting = Weighting::kTfIdf;
  } else {
    return InvalidArgument(where + "mode '" + mode + "' is not one of TF, IDF, TFIDF");
  }
  p.min_gram = node.attrs.Int("min_gram_length", 0);
  p.max_gram = node.attrs.Int("max_gram_length", 0);
  p.max_skip = node.attrs.Int("max_skip_count", 0);
  if (p.min_gram < 1 || p.max_gram < p.min_gram || p.max_skip < 0) {
    return InvalidArgument(where + "min_gram_length " + std::to_string(p.min_gram) +
                           ", max_gram_length " + std::to_string(p.max_gram) +
                           " and max_skip_count " + std::to_string(p.max_skip) +
                           " must satisfy 1 <= min <= max and skips >= 0");
  }
  const std::vector<int64_t> pool = node.attrs.Ints("pool_int64s");
  const std::vector<int64_t> counts = node.attrs.Ints("ngram_counts");
  p.ngram_indexes = node.attrs.Ints("ngram_indexes");
  p.weights = node.attrs.Floats("weights");
  const int64_t pool_size = static_cast<int64_t>(pool.size());
  // Level n (1-based) holds n-grams of n tokens in pool[counts[n-1],
  // counts[n]), the last level up to the end of the pool.
  p.trie = std::make_unique<TrieNode>();
  int64_t id = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
      return InvalidArgument(where + "ngram_counts " + ListString(counts) +
                             " do not split the pool of " + std::to_string(pool_size) +
                             " tokens into whole n-grams");
    }
    for (int64_t at = begin; at < end; at += n) {
      TrieNode* t = p.trie.get();
      for (int64_t k = 0; k < n; ++k) {
        std::unique_ptr<TrieNode>& child = t->next[pool[at + k]];
        if (!child) child = std::make_unique<TrieNode>();
        t = child.get();
      }
      t->id = ++id;
    }
  }
  if (static_cast<int64_t>(p.ngram_indexes.size()) != id) {
    return InvalidArgument(where + "ngram_indexes has " + std::to_string(p.ngram_indexes.size()) +
                           " values; the pool holds " + std::to_string(id) + " n-grams");
  }
  for (int64_t i : p.ngram_indexes) {
    if (i < 0 || i > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument(where + "ngram_indexes " + ListString(p.ngram_indexes) +
                             " must be in [0, 2147483647]");
    }
    p.output_size = std::max(p.output_size, i + 1);
  }
  if (!p.weights.empty() && static_cast<int64_t>(p.weights.size()) < p.output_size) {
    return InvalidArgument(where + "weights has " + std::to_string(p.weights.size()) +
                           " values; expected " + std::to_string(p.output_size) +
                           " (one per output position)");
  }
  return p;
}

// Input: token ids, C or N x C. Output float32 counts (or weights), O or
// N x O, O = max(ngram_indexes) + 1.
Status InferTfIdf(ir::Node& node, int opset) {
  TESSEL_RETURN_IF_ERROR(RequireDType(node, 0, {DType::kInt32, DType::kInt64}));
  TESSEL_ASSIGN_OR_RETURN(TfIdfPlan p, PlanTfIdf(node));
  const Shape& x = node.input(0)->shape;
  if (x.empty() || x.size() > 2) {
    return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(x) +
                           " must be C or N x C");
  }
  SetOutput(node, 0, DType::kFloat32,
            x.size() == 1 ? Shape{p.output_size} : Shape{x[0], p.output_size});
  return Status::Ok();
}

// Adds the n-grams of one row (tokens[0, size)) to `freq` (output_size).
void CountRow(const TfIdfPlan& p, const Tensor& x, int64_t base, int64_t size,
              std::vector<int64_t>& freq) {
  int64_t start_gram = p.min_gram;
  for (int64_t skip = 1; skip <= p.max_skip + 1; ++skip) {
    for (int64_t start = 0; start < size; ++start) {
      // No n-gram of the smallest counted size fits past here.
      if (start + skip * (start_gram - 1) >= size) break;
      const TrieNode* t = p.trie.get();
      for (int64_t n = 1, item = start; !t->next.empty() && n <= p.max_gram && item < size;
           ++n, item += skip) {
        auto hit = t->next.find(x.GetAsInt64(base + item));
        if (hit == t->next.end()) break;
        t = hit->second.get();
        if (n >= start_gram && t->id != 0) ++freq[p.ngram_indexes[t->id - 1]];
      }
    }
    // Unigrams do not depend on the skip distance: count them once.
    if (start_gram == 1) {
      if (++start_gram > p.max_gram) break;
    }
  }
}

Status RunTfIdf(KernelContext& ctx) {
  TESSEL_ASSIGN_OR_RETURN(TfIdfPlan p, PlanTfIdf(ctx.node));
  const Tensor& x = ctx.in(0);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t size = x.dim(x.rank() - 1);
  float* y = ctx.out(0).data<float>();
  std::vector<int64_t> freq(static_cast<size_t>(p.output_size));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(freq.begin(), freq.end(), 0);
    CountRow(p, x, r * size, size, freq);
    for (int64_t i = 0; i < p.output_size; ++i) {
      const float w = p.weights.empty() ? 1.0f : p.weights[i];
      const float f = static_cast<float>(freq[i]);
      float v = f;
      if (p.weighting == Weighting::kIdf) v = freq[i] > 0 ? w : 0.0f;
      if (p.weighting == Weighting::kTfIdf) v = f * w;
      y[r * p.output_size + i] = v;
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterTextOps(OpRegistry& r) {
  r.Register({.op_type = "TfIdfVectorizer",
              .domain = "",
              .op_class = OpClass::kOpaque,
              .infer = InferTfIdf,
              .run = RunTfIdf});
}

}  // namespace tessel::ops
