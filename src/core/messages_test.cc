#include "core/messages.h"

#include <gtest/gtest.h>

#include "core/resources.h"

namespace tessel {
namespace {

TEST(EscapeForMessage, Escapes_control_and_non_ascii_bytes_and_cuts_long_text) {
  EXPECT_EQ(EscapeForMessage("plain name_1.onnx"), "plain name_1.onnx");
  EXPECT_EQ(EscapeForMessage(std::string("a\nb\tc\x01\x7f\xff", 8)), "a\\nb\\tc\\x01\\x7f\\xff");
  EXPECT_EQ(EscapeForMessage(std::string("\0z", 2)), "\\x00z");
  EXPECT_EQ(EscapeForMessage(std::string(300, 'a'), 4), "aaaa...");
}

TEST(OneLine, Folds_line_breaks_and_their_indentation) {
  EXPECT_EQ(OneLine("first\n  second\r\n\tthird\n"), "first / second / third");
  EXPECT_EQ(OneLine("no breaks"), "no breaks");
  EXPECT_EQ(OneLine("bell\x07"), "bell\\x07");
  EXPECT_EQ(OneLine("\n\nlead"), "lead");
}

TEST(FormatByteSize, Names_the_unit) {
  EXPECT_EQ(FormatByteSize(512), "512 B");
  EXPECT_EQ(FormatByteSize(1536), "1.5 KiB");
  EXPECT_EQ(FormatByteSize(int64_t{4} << 40), "4.0 TiB");
  EXPECT_GT(PhysicalMemoryBytes(), 0);
}

}  // namespace
}  // namespace tessel
