#include "memory/pool_spec.h"

#include <gtest/gtest.h>

namespace tessel::memory {
namespace {

TEST(ParsePoolSpec, Reads_every_key) {
  StatusOr<PoolInfo> p = ParsePoolSpec("name=sram,size=256KiB,access=rw,targets=cpu+c");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "sram");
  EXPECT_EQ(p->size_limit_bytes, 256 * 1024);
  EXPECT_FALSE(p->read_only);
  EXPECT_EQ(p->targets, (std::vector<std::string>{"cpu", "c"}));
  StatusOr<PoolInfo> q = ParsePoolSpec("name=flash,access=ro");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->read_only);
  EXPECT_FALSE(q->size_limit_bytes.has_value());
}

TEST(ParseByteCount, Units) {
  struct Case {
    const char* text;
    int64_t bytes;
  } cases[] = {{"0", 0},       {"65536", 65536},  {"12B", 12},
               {"3KiB", 3072}, {"2MiB", 2 << 20}, {"1GiB", 1 << 30},
               {"5KB", 5000},  {"7MB", 7000000},  {"2GB", 2000000000}};
  for (const Case& c : cases) {
    StatusOr<int64_t> v = ParseByteCount(c.text);
    ASSERT_TRUE(v.ok()) << c.text;
    EXPECT_EQ(*v, c.bytes) << c.text;
  }
}

TEST(ParsePoolSpec, rejects_bad_specs_quoting_them) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {"size=1KiB", "name=NAME is required"},
      {"name=a,size=12Q", "size '12Q' is not a byte count"},
      {"name=a,size=-5", "size '-5' is not a byte count"},
      {"name=a,size=99999999999GiB", "too large"},
      {"name=a,colour=red", "unknown key 'colour'"},
      {"name=a,access=rx", "access 'rx' is not rw or ro"},
      {"name=a,name=b", "key 'name' repeats"},
      {"name=a,,size=1", "expected KEY=VALUE, found ''"},
      {"name=", "the name is empty"},
      {"name=a,targets=cpu++c", "a target name is empty"},
  };
  for (const Case& c : cases) {
    StatusOr<PoolInfo> p = ParsePoolSpec(c.spec);
    ASSERT_FALSE(p.ok()) << c.spec;
    EXPECT_NE(p.status().message().find(c.message), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find(std::string("--pool '") + c.spec + "'"), std::string::npos)
        << p.status().message();
  }
}

}  // namespace
}  // namespace tessel::memory
