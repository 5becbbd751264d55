#include "tuning/cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tessel::tuning {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TuneEntry Entry(std::string kernel, double ms, std::string device = "NVIDIA H100",
                std::string driver = "560.3") {
  TuneEntry e;
  e.key.platform = "NVIDIA CUDA";
  e.key.device = std::move(device);
  e.key.driver = std::move(driver);
  e.key.kernel = std::move(kernel);
  e.key.source_hash = HashHex("__kernel void k() {}");
  e.key.storage = "buffer";
  e.key.args_hash = HashHex("56,56,64");
  e.key.dims = 3;
  e.key.global = {56, 56, 64};
  e.local = {8, 8, 4};
  e.ms = ms;
  e.default_ms = 2 * ms;
  e.strategy = "race";
  e.launches = 41;
  return e;
}

// One entry as Save writes it, for tests to damage.
json EntryJson() {
  return json::parse(R"({"platform": "NVIDIA CUDA", "device": "NVIDIA H100", "driver": "560.3",
      "kernel": "f32_conv2d_direct", "source_hash": "9f3c000000000000", "storage": "buffer",
      "args_hash": "51aa000000000000", "global": [56, 56, 64], "local": [8, 8, 4],
      "ms": 0.0123, "default_ms": 0.015, "strategy": "race", "launches": 41})");
}

std::string CacheText(const json& entries) {
  return json{{"format", "tessel-tuning-cache"}, {"version", 1}, {"entries", entries}}.dump();
}

class TuningCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_tuning_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string Slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST(HashHex, Is_16_lowercase_hex_digits_of_fnv1a_64) {
  EXPECT_EQ(HashHex(""), "cbf29ce484222325");
  EXPECT_EQ(HashHex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(HashHex(std::string_view("a\0b", 3)).size(), 16u);
  EXPECT_NE(HashHex(std::string_view("a\0b", 3)), HashHex("a"));
}

TEST_F(TuningCacheFile, Save_then_Read_round_trips_every_field) {
  TuningCache cache;
  TuneEntry a = Entry("f32_conv2d_direct", 0.1 + 0.2);  // 0.30000000000000004
  a.default_ms = std::nextafter(1.0, 2.0);
  TuneEntry b = Entry("f32_snippet", 1e-300);
  b.key.dims = 1;
  b.key.global = {size_t{1} << 40, 1, 1};
  b.local = {256, 1, 1};
  b.default_ms = 0;
  b.key.storage = "image2d";
  b.strategy = "exhaustive";
  b.launches = int64_t{1} << 40;
  TuneEntry c = Entry("f32_matmul", 3.0, "Intel(R) UHD \"Graphics\" 630", "31.0.101");
  c.key.dims = 2;
  c.key.global = {7, 3, 1};
  c.local = {7, 1, 1};
  for (const TuneEntry& e : {a, b, c}) cache.Put(e);

  const fs::path path = dir_ / "tune.json";
  ASSERT_TRUE(cache.Save(path).ok());
  StatusOr<TuningCache> back = TuningCache::Read(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 3u);
  for (const TuneEntry& e : {a, b, c}) {
    const TuneEntry* found = back->Find(e.key);
    ASSERT_NE(found, nullptr) << e.key.kernel;
    EXPECT_EQ(found->local, e.local);
    EXPECT_EQ(found->ms, e.ms);  // exactly: doubles round-trip
    EXPECT_EQ(found->default_ms, e.default_ms);
    EXPECT_EQ(found->strategy, e.strategy);
    EXPECT_EQ(found->launches, e.launches);
  }
}

TEST_F(TuningCacheFile, Save_writes_the_same_bytes_whatever_the_order_of_Put) {
  TuningCache forward, backward;
  const std::vector<TuneEntry> entries = {Entry("a", 1), Entry("b", 2), Entry("c", 3),
                                          Entry("a", 4, "other device")};
  for (size_t i = 0; i < entries.size(); ++i) {
    forward.Put(entries[i]);
    backward.Put(entries[entries.size() - 1 - i]);
  }
  ASSERT_TRUE(forward.Save(dir_ / "f.json").ok());
  ASSERT_TRUE(backward.Save(dir_ / "b.json").ok());
  const std::string text = Slurp(dir_ / "f.json");
  EXPECT_EQ(text, Slurp(dir_ / "b.json"));
  // One entry a line, in the header's field order.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3 + 4);  // header, "entries", "]}"
  EXPECT_NE(text.find("{\"platform\":\"NVIDIA CUDA\",\"device\":\"NVIDIA H100\",\"driver\""),
            std::string::npos)
      << text;
}

TEST_F(TuningCacheFile, Put_replaces_the_entry_of_its_key_and_Find_misses_other_keys) {
  TuningCache cache;
  EXPECT_TRUE(cache.empty());
  cache.Put(Entry("k", 2.0));
  TuneEntry faster = Entry("k", 1.0);
  faster.local = {4, 4, 4};
  cache.Put(faster);
  ASSERT_EQ(cache.size(), 1u);
  ASSERT_NE(cache.Find(faster.key), nullptr);
  EXPECT_EQ(cache.Find(faster.key)->local, faster.local);

  TuneKey other = faster.key;
  other.global = {56, 56, 32};
  EXPECT_EQ(cache.Find(other), nullptr);
  other = faster.key;
  other.args_hash = HashHex("another shape");
  EXPECT_EQ(cache.Find(other), nullptr);
}

TEST(TuningCacheDeathTest, Put_rejects_an_entry_that_Read_would_refuse) {
  TuningCache cache;
  TuneEntry e = Entry("k", 1.0);
  e.local = {8, 0, 4};
  EXPECT_DEATH(cache.Put(e), "zero size in global");
  e = Entry("k", NAN);
  EXPECT_DEATH(cache.Put(e), "ms nan is not a time");
  e = Entry("k", 1.0);
  e.key.dims = 2;  // global[2] is 64
  EXPECT_DEATH(cache.Put(e), "sizes past dimension 2 must be 1");
}

TEST_F(TuningCacheFile, Read_of_a_missing_file_is_NotFound_and_LoadOrEmpty_is_silent) {
  StatusOr<TuningCache> r = TuningCache::Read(dir_ / "none.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("none.json"), std::string::npos);
  std::vector<std::string> notes;
  EXPECT_TRUE(TuningCache::LoadOrEmpty(dir_ / "none.json", &notes).empty());
  EXPECT_TRUE(notes.empty());
}

TEST_F(TuningCacheFile, Read_rejects_every_kind_of_corrupt_file_naming_the_file_and_the_fault) {
  TuningCache good;
  good.Put(Entry("a", 1.0));
  good.Put(Entry("b", 1.0));
  ASSERT_TRUE(good.Save(dir_ / "good.json").ok());
  const std::string saved = Slurp(dir_ / "good.json");

  auto entry_with = [](const std::function<void(json&)>& damage) {
    json e = EntryJson();
    damage(e);
    return CacheText(json::array({e}));
  };
  json other = EntryJson();
  other["kernel"] = "f32_other";
  json slower = EntryJson();
  slower["ms"] = 1.0;
  // JSON cannot spell infinity; the nearest thing is a number no double holds.
  std::string infinite_ms = entry_with([](json& e) { e["ms"] = 0.5; });
  infinite_ms.replace(infinite_ms.find("0.5"), 3, "1e400");
  struct Case {
    const char* name;
    std::string text;
    const char* message;  // a part of the message after "FILE: "
  };
  const std::vector<Case> cases = {
      {"truncated", saved.substr(0, saved.size() / 2), "not JSON: "},
      {"empty", "", "not JSON: "},
      {"not_json", "tessel tuning cache\n", "not JSON: "},
      {"array", "[1, 2]", "is a JSON array, not a tessel-tuning-cache object"},
      {"wrong_format", R"({"format": "other", "version": 1, "entries": []})",
       R"("format" is "other", not "tessel-tuning-cache")"},
      {"no_format", R"({"version": 1, "entries": []})", R"("format" is missing)"},
      {"wrong_version", R"({"format": "tessel-tuning-cache", "version": 2, "entries": []})",
       R"("version" is 2; this tessel reads version 1)"},
      {"no_entries", R"({"format": "tessel-tuning-cache", "version": 1})",
       R"("entries" is missing, not an array)"},
      {"entry_not_object", CacheText(json::array({1})), "entries[0]: is number, not an object"},
      {"missing_local", entry_with([](json& e) { e.erase("local"); }),
       R"(entries[0]: "local" is missing)"},
      {"missing_launches", entry_with([](json& e) { e.erase("launches"); }),
       R"(entries[0]: "launches" is missing)"},
      {"dims_4", entry_with([](json& e) {
         e["global"] = {1, 2, 3, 4};
         e["local"] = {1, 1, 1, 1};
       }),
       R"(entries[0]: "global" has 4 dimensions, not 1 to 3)"},
      {"dims_0", entry_with([](json& e) { e["global"] = json::array(); }),
       R"("global" has 0 dimensions, not 1 to 3)"},
      {"dims_differ", entry_with([](json& e) {
         e["local"] = {8, 8};
       }),
       "global [56, 56, 64] and local [8, 8] differ in dimensions"},
      {"zero_size", entry_with([](json& e) {
         e["global"] = {56, 0, 64};
       }),
       R"("global" [56,0,64] is not a list of positive integers)"},
      {"negative_size", entry_with([](json& e) {
         e["local"] = {8, -8, 4};
       }),
       R"("local" [8,-8,4] is not a list of positive integers)"},
      {"fractional_size", entry_with([](json& e) {
         e["local"] = {8, 8.5, 4};
       }),
       R"("local" [8,8.5,4] is not a list of positive integers)"},
      {"string_ms", entry_with([](json& e) { e["ms"] = "0.5"; }),
       R"(entries[0]: "ms" is string "0.5", not a number)"},
      {"number_kernel", entry_with([](json& e) { e["kernel"] = 7; }),
       R"("kernel" is number 7, not a string)"},
      {"negative_ms", entry_with([](json& e) { e["ms"] = -1.0; }),
       "entries[0]: ms -1 is not a time"},
      {"infinite_ms", infinite_ms, "not JSON: number overflow parsing '1e400'"},
      {"negative_launches", entry_with([](json& e) { e["launches"] = -1; }),
       "launches -1 is negative"},
      {"fractional_launches", entry_with([](json& e) { e["launches"] = 4.5; }),
       R"("launches" is number 4.5, not an integer)"},
      {"empty_entry", CacheText(json::array({EntryJson(), json::object()})),
       R"(entries[1]: "platform" is missing)"},
      {"duplicate_key", CacheText(json::array({EntryJson(), other, slower})),
       "entries[0] and entries[2] have one key (kernel 'f32_conv2d_direct' on 'NVIDIA H100')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path path = Write(std::string(c.name) + ".json", c.text);
    StatusOr<TuningCache> r = TuningCache::Read(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    const std::string& m = r.status().message();
    EXPECT_EQ(m.find(path.string() + ": "), 0u) << m;
    EXPECT_NE(m.find(c.message), std::string::npos) << m;

    std::vector<std::string> notes = {"an earlier note"};
    TuningCache loaded = TuningCache::LoadOrEmpty(path, &notes);
    EXPECT_TRUE(loaded.empty());
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[1].find("tuning cache " + path.string() + " ignored: "), 0u) << notes[1];
    EXPECT_NE(notes[1].find(c.message), std::string::npos) << notes[1];
  }
}

TEST_F(TuningCacheFile, Read_rejects_a_file_over_256_MiB_without_reading_it) {
  const fs::path path = Write("huge.json", "");
  fs::resize_file(path, (uintmax_t{256} << 20) + 1);  // sparse: no disk used
  StatusOr<TuningCache> r = TuningCache::Read(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(),
            path.string() + ": 268435457 bytes, more than the 256 MiB a tuning cache may hold");
}

TEST_F(TuningCacheFile, Read_rejects_a_folder_where_the_file_should_be) {
  fs::create_directories(dir_ / "tune.json");
  StatusOr<TuningCache> r = TuningCache::Read(dir_ / "tune.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  std::vector<std::string> notes;
  EXPECT_TRUE(TuningCache::LoadOrEmpty(dir_ / "tune.json", &notes).empty());
  EXPECT_EQ(notes.size(), 1u);
}

TEST(TuningCache, Invalidate_drops_only_this_device_under_another_driver) {
  TuningCache cache;
  cache.Put(Entry("a", 1, "NVIDIA H100", "550.1"));
  cache.Put(Entry("b", 1, "NVIDIA H100", "550.1"));
  cache.Put(Entry("c", 1, "NVIDIA H100", "560.3"));  // tuned under today's driver
  cache.Put(Entry("a", 1, "NVIDIA A100", "550.1"));  // another device
  TuneEntry other_platform = Entry("a", 1, "NVIDIA H100", "550.1");
  other_platform.key.platform = "Portable Computing Language";
  cache.Put(other_platform);

  std::vector<std::string> notes;
  EXPECT_EQ(cache.Invalidate("NVIDIA CUDA", "NVIDIA H100", "560.3", &notes), 2);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "tuning cache: 2 entries for NVIDIA H100 were tuned under driver 550.1 (now 560.3); "
            "ignored until tuned again (tessel tune, or --tune online)");
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.Find(Entry("c", 1, "NVIDIA H100", "560.3").key), nullptr);
  EXPECT_NE(cache.Find(Entry("a", 1, "NVIDIA A100", "550.1").key), nullptr);
  EXPECT_NE(cache.Find(other_platform.key), nullptr);
  EXPECT_EQ(cache.Find(Entry("a", 1, "NVIDIA H100", "550.1").key), nullptr);

  // Nothing left to drop: no note.
  EXPECT_EQ(cache.Invalidate("NVIDIA CUDA", "NVIDIA H100", "560.3", &notes), 0);
  EXPECT_EQ(notes.size(), 1u);
}

TEST(TuningCache, Invalidate_names_every_old_driver_and_counts_in_words) {
  TuningCache cache;
  cache.Put(Entry("a", 1, "GPU", "1.0"));
  std::vector<std::string> notes;
  EXPECT_EQ(cache.Invalidate("NVIDIA CUDA", "GPU", "2.0", &notes), 1);
  cache.Put(Entry("a", 1, "GPU", "1.0"));
  cache.Put(Entry("b", 1, "GPU", "1.5"));
  EXPECT_EQ(cache.Invalidate("NVIDIA CUDA", "GPU", "2.0", &notes), 2);
  EXPECT_TRUE(cache.empty());
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "tuning cache: 1 entry for GPU was tuned under driver 1.0 (now 2.0); "
                       "ignored until tuned again (tessel tune, or --tune online)",
                       "tuning cache: 2 entries for GPU were tuned under drivers 1.0, 1.5 (now "
                       "2.0); ignored until tuned again (tessel tune, or --tune online)"}));
}

TEST(TuningCache, Merge_keeps_the_faster_entry_and_counts_what_changed) {
  TuningCache mine;
  mine.Put(Entry("a", 1.0));
  mine.Put(Entry("b", 5.0));
  mine.Put(Entry("c", 3.0));
  TuningCache theirs;
  TuneEntry b = Entry("b", 4.0);
  b.local = {4, 4, 4};
  theirs.Put(b);                // faster: replaces
  theirs.Put(Entry("a", 2.0));  // slower: stays out
  theirs.Put(Entry("c", 3.0));  // a tie: the one already there stays
  theirs.Put(Entry("d", 9.0));  // new
  EXPECT_EQ(mine.Merge(theirs), 2);
  EXPECT_EQ(mine.size(), 4u);
  EXPECT_EQ(mine.Find(b.key)->ms, 4.0);
  EXPECT_EQ(mine.Find(b.key)->local, b.local);
  EXPECT_EQ(mine.Find(Entry("a", 0).key)->ms, 1.0);
  EXPECT_NE(mine.Find(Entry("d", 0).key), nullptr);
  EXPECT_EQ(mine.Merge(theirs), 0);
  EXPECT_EQ(mine.Merge(TuningCache()), 0);
}

TEST_F(TuningCacheFile, Save_replaces_the_file_whole_and_leaves_no_temporary_file) {
  const fs::path path = dir_ / "tune.json";
  TuningCache cache;
  cache.Put(Entry("a", 1.0));
  cache.Put(Entry("b", 1.0));
  ASSERT_TRUE(cache.Save(path).ok());
  TuningCache smaller;
  smaller.Put(Entry("c", 1.0));
  ASSERT_TRUE(smaller.Save(path).ok());

  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"tune.json"});
  StatusOr<TuningCache> back = TuningCache::Read(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->entries()[0].key.kernel, "c");
}

TEST_F(TuningCacheFile, Save_creates_the_folders_of_its_path) {
  const fs::path path = dir_ / "a" / "b" / "tune.json";
  TuningCache cache;
  cache.Put(Entry("a", 1.0));
  ASSERT_TRUE(cache.Save(path).ok());
  EXPECT_TRUE(TuningCache::Read(path).ok());
}

TEST_F(TuningCacheFile, Save_rejects_a_path_it_cannot_write_naming_it) {
  TuningCache cache;
  cache.Put(Entry("a", 1.0));
  const fs::path file = Write("plain_file", "x");
  const Status under_file = cache.Save(file / "tune.json");
  ASSERT_FALSE(under_file.ok());
  EXPECT_NE(under_file.message().find(file.string()), std::string::npos) << under_file.message();

  fs::create_directories(dir_ / "folder.json");
  const Status over_folder = cache.Save(dir_ / "folder.json");
  ASSERT_FALSE(over_folder.ok());
  EXPECT_NE(over_folder.message().find("folder.json"), std::string::npos) << over_folder.message();
  // The failed rename took its temporary file with it.
  int files = 0;
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 2);
}

TEST_F(TuningCacheFile, Save_rejects_text_that_is_not_utf8_without_throwing) {
  TuningCache cache;
  cache.Put(Entry("a", 1.0, "GPU \xff"));
  const Status s = cache.Save(dir_ / "tune.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tune.json"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir_ / "tune.json"));
}

}  // namespace
}  // namespace tessel::tuning
