#include "core/sealed_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace tessel {
namespace {

TEST(SealBlob, Round_trips_any_payload_under_its_key) {
  for (const std::string& payload : {std::string(), std::string("x"), std::string(1000, '\0'),
                                     std::string("binary\xff\x00\x01", 9)}) {
    StatusOr<std::string> back = UnsealBlob(SealBlob("device\0driver", payload), "device\0driver");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, payload);
  }
}

TEST(SealBlob, Refuses_every_kind_of_damage_saying_which) {
  const std::string good = SealBlob("key", "the program binary");
  auto reason = [](std::string_view bytes, std::string_view key) {
    StatusOr<std::string> r = UnsealBlob(bytes, key);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(reason("", "key"), "not a sealed tessel cache file");
  EXPECT_EQ(reason(good.substr(0, 20), "key"), "not a sealed tessel cache file");
  EXPECT_EQ(reason("TSLCLB01" + good.substr(8), "key"), "not a sealed tessel cache file");
  EXPECT_EQ(reason(good, "another key"), "written for another key");
  EXPECT_EQ(reason(good.substr(0, good.size() - 1), "key"), "claims 18 bytes, holds 17");
  EXPECT_EQ(reason(good + "!", "key"), "claims 18 bytes, holds 19");
  std::string flipped = good;
  flipped.back() ^= 1;
  EXPECT_EQ(reason(flipped, "key"), "checksum mismatch");
  // A size claim near 2^64 must not wrap into a small one.
  std::string huge = good;
  for (int i = 16; i < 24; ++i) huge[i] = '\xff';
  EXPECT_EQ(reason(huge, "key").find("claims 18446744073709551615 bytes"), 0u);
}

class SealedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessel_sealed_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SealedFile, Writes_the_folder_and_reads_back_only_under_limits) {
  const auto path = dir_ / "sub" / "entry.bin";
  ASSERT_TRUE(WriteSealedFile(path, "k", std::string(4096, 'p')));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp." + std::to_string(::getpid())));
  StatusOr<std::string> back = ReadSealedFile(path, "k", 4096);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, std::string(4096, 'p'));

  StatusOr<std::string> too_big = ReadSealedFile(path, "k", 4095);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("more than a cache entry may hold"), std::string::npos);

  StatusOr<std::string> missing = ReadSealedFile(dir_ / "none.bin", "k", 4096);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  std::filesystem::resize_file(path, 100);
  StatusOr<std::string> cut = ReadSealedFile(path, "k", 4096);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("entry.bin: claims 4096 bytes, holds 68"),
            std::string::npos)
      << cut.status().message();
}

TEST_F(SealedFile, A_folder_in_the_way_is_a_failed_write_not_a_crash) {
  std::filesystem::create_directories(dir_ / "entry.bin");
  EXPECT_FALSE(WriteSealedFile(dir_ / "entry.bin", "k", "payload"));
  EXPECT_EQ(ReadSealedFile(dir_ / "entry.bin", "k", 100).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessel
