#include "memory/instance_csv.h"

#include <gtest/gtest.h>

#include "memory/planner.h"

namespace tessel::memory {
namespace {

TEST(InstanceCsv, Parses_the_published_format) {
  StatusOr<Instance> inst =
      ParseInstanceCsv("id,lower,upper,size\nb0,0,3,4\r\nb1,3,9,4\n\n b2 , 0 , 9 , 4\n", "x.csv");
  ASSERT_TRUE(inst.ok()) << inst.status().message();
  ASSERT_EQ(inst->problem.buffers.size(), 3u);
  EXPECT_EQ(inst->problem.buffers[2].name, "b2");
  EXPECT_EQ(inst->problem.buffers[1].live.first_use, 3);
  EXPECT_EQ(inst->problem.buffers[1].live.last_use, 9);
  EXPECT_EQ(inst->problem.buffers[0].size_bytes, 4);
  EXPECT_EQ(inst->problem.pools.size(), 1u);
}

TEST(InstanceCsv, Reads_alignment_and_pinned_offsets) {
  StatusOr<Instance> inst = ParseInstanceCsv(
      "id,lower,upper,size,alignment,offset\na,0,2,10,8,16\nb,0,2,10,4,\n", "y.csv");
  ASSERT_TRUE(inst.ok()) << inst.status().message();
  EXPECT_EQ(inst->problem.buffers[0].alignment, 8);
  EXPECT_EQ(inst->problem.buffers[0].fixed_offset_bytes, 16);
  EXPECT_FALSE(inst->problem.buffers[1].fixed_offset_bytes.has_value());
}

TEST(InstanceCsv, Capacity_is_the_number_before_csv) {
  EXPECT_EQ(CapacityFromFileName("dir/guillotine_00_40.1048576.csv"), 1048576);
  EXPECT_EQ(CapacityFromFileName("input.12.csv"), 12);
  EXPECT_FALSE(CapacityFromFileName("plain.csv").has_value());
  EXPECT_FALSE(CapacityFromFileName("a.b.csv").has_value());
}

TEST(InstanceCsv, Writes_the_plan_back_with_offsets) {
  StatusOr<Instance> inst =
      ParseInstanceCsv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n", "z");
  ASSERT_TRUE(inst.ok());
  StatusOr<Plan> plan = MakePlan(inst->problem, "optimal");
  ASSERT_TRUE(plan.ok());
  const std::string csv = FormatInstanceCsv(inst->problem, *plan);
  EXPECT_EQ(csv.rfind("id,lower,upper,size,offset\n", 0), 0u) << csv;
  StatusOr<Instance> back = ParseInstanceCsv(csv, "back");
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->problem.buffers[i].fixed_offset_bytes, plan->placements[i].offset_bytes);
  }
}

TEST(InstanceCsv, rejects_bad_files_naming_file_and_line) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "instance 'f.csv' is empty"},
      {"id,lower,size\n", "line 1: the header lacks column 'upper'"},
      {"id,lower,upper,size,colour\n", "line 1: unknown column 'colour'"},
      {"id,lower,upper,size\nb0,0,3\n", "line 2: expected 4 columns, found 3"},
      {"id,lower,upper,size\nb0,0,3,4\nb1,x,3,4\n",
       "line 3: column 'lower' holds 'x', not an integer"},
      {"id,lower,upper,size\nb0,5,3,4\n", "line 2: lower 5 is not below upper 3"},
      {"id,lower,upper,size\nb0,0,3,-4\n", "line 2: size -4 is negative"},
      {"id,lower,upper,size\nb0,0,3,4\n\nb0,1,3,4\n", "line 4: id 'b0' repeats line 2"},
      {"id,lower,upper,size,alignment\nb0,0,3,4,3\n", "line 2: alignment 3 is not a power of two"},
      // Bounds that keep a planner's offsets from overflowing.
      {"id,lower,upper,size\nb0,0,3,9223372036854775758\n", "line 2: size or lifetime beyond 2^48"},
      {"id,lower,upper,size\nb0,0,281474976710657,4\n", "line 2: size or lifetime beyond 2^48"},
      {"id,lower,upper,size,alignment\nb0,0,3,4,2147483648\n", "up to 2^30"},
      {"id,lower,upper,size,offset\nb0,0,3,4,281474976710660\n", "line 2: offset beyond 2^48"},
  };
  for (const Case& c : cases) {
    StatusOr<Instance> inst = ParseInstanceCsv(c.text, "f.csv");
    ASSERT_FALSE(inst.ok()) << c.text;
    EXPECT_NE(inst.status().message().find(c.message), std::string::npos)
        << inst.status().message();
    EXPECT_NE(inst.status().message().find("'f.csv'"), std::string::npos);
  }
  EXPECT_EQ(ReadInstanceCsv("/nonexistent/a.1.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessel::memory
