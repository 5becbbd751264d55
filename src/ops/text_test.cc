// TfIdfVectorizer on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

// Pool: unigrams 2 and 3, then the bigram (2, 3); output positions 0, 1, 2.
AttributeMap Pool(const char* mode, int64_t min_gram, int64_t max_gram, int64_t max_skip,
                  std::vector<int64_t> indexes = {0, 1, 2}) {
  return Attrs({{"mode", std::string(mode)},
                {"min_gram_length", min_gram},
                {"max_gram_length", max_gram},
                {"max_skip_count", max_skip},
                {"pool_int64s", std::vector<int64_t>{2, 3, 2, 3}},
                {"ngram_counts", std::vector<int64_t>{0, 2}},
                {"ngram_indexes", std::move(indexes)}});
}

Tensor Tokens() { return I64({2, 3, 2, 3, 4}, {5}); }

TEST(TfIdfVectorizer, Counts_unigrams_and_bigrams) {
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", Pool("TF", 1, 2, 0), {Tokens()})),
              ElementsAre(2, 2, 2));
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", Pool("TF", 2, 2, 0), {Tokens()})),
              ElementsAre(0, 0, 2));
  // Skips do not count unigrams again.
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", Pool("TF", 1, 2, 1), {Tokens()})),
              ElementsAre(2, 2, 2));
}

TEST(TfIdfVectorizer, Skips_join_distant_tokens) {
  Tensor x = I32({2, 5, 3}, {3});
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", Pool("TF", 2, 2, 0), {x})), ElementsAre(0, 0, 0));
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", Pool("TF", 2, 2, 1), {x})), ElementsAre(0, 0, 1));
}

TEST(TfIdfVectorizer, Weightings_batches_and_output_positions) {
  AttributeMap idf = Pool("IDF", 1, 2, 0);
  idf.Set("weights", std::vector<float>{0.5f, 2, 3});
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", idf, {Tokens()})), ElementsAre(0.5, 2, 3));
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", idf, {I64({4, 4, 2}, {3})})), ElementsAre(0.5, 0, 0));
  AttributeMap tfidf = Pool("TFIDF", 1, 2, 0);
  tfidf.Set("weights", std::vector<float>{0.5f, 2, 3});
  EXPECT_THAT(Doubles(Run1("TfIdfVectorizer", tfidf, {Tokens()})), ElementsAre(1, 4, 6));
  Tensor rows = Run1("TfIdfVectorizer", Pool("TF", 1, 2, 0), {I64({2, 3, 4, 3, 3, 3}, {2, 3})});
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_THAT(Doubles(rows), ElementsAre(1, 1, 1, 0, 3, 0));
  // ngram_indexes place unigram 2 at 2, unigram 3 at 0 and the bigram at 1.
  EXPECT_THAT(
      Doubles(Run1("TfIdfVectorizer", Pool("TF", 1, 2, 0, {2, 0, 1}), {I64({2, 3, 3}, {3})})),
      ElementsAre(2, 1, 1));
}

TEST(TfIdfVectorizer, TfIdfVectorizer_rejects_inconsistent_pools) {
  AttributeMap a = Pool("TF", 1, 2, 0);
  a.Set("pool_int64s", std::vector<int64_t>{2, 3, 2});
  Status s = RunError("TfIdfVectorizer", a, {Tokens()});
  EXPECT_EQ(s.message(),
            "TfIdfVectorizer 'node': ngram_counts [0,2] do not split the pool of 3 tokens into "
            "whole n-grams");
  s = RunError("TfIdfVectorizer", Pool("TF", 1, 2, 0, {0, 1}), {Tokens()});
  EXPECT_EQ(s.message(),
            "TfIdfVectorizer 'node': ngram_indexes has 2 values; the pool holds 3 n-grams");
  s = RunError("TfIdfVectorizer", Pool("BM25", 1, 2, 0), {Tokens()});
  EXPECT_EQ(s.message(), "TfIdfVectorizer 'node': mode 'BM25' is not one of TF, IDF, TFIDF");
  a = Pool("TF", 1, 2, 0);
  a.Set("pool_strings", std::vector<std::string>{"a"});
  s = RunError("TfIdfVectorizer", a, {Tokens()});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("pool_strings is not supported"));
}

}  // namespace
}  // namespace tessel::ops
