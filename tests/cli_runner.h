// Runs the tessel binary for the cross-component suites.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

namespace tessel::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `tessel ARGS` (ARGS is passed to the shell as is), after `env`
// ("NAME=VALUE " assignments) when given.
inline CliResult RunTessel(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const auto base = std::filesystem::temp_directory_path() /
                    ("tessel_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const std::string out = base.string() + ".out", err = base.string() + ".err";
  const std::string cmd = env + std::string(TESSEL_BINARY) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadAll(out);
  r.err = ReadAll(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A rejected command: exit code 2 and one line on stderr, "tessel: error: ...",
// containing every piece of `culprit`.
inline void ExpectRejected(const CliResult& r, std::initializer_list<std::string> culprit) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("tessel: error: ", 0), 0u) << r.err;
  for (const std::string& c : culprit) EXPECT_NE(r.err.find(c), std::string::npos) << r.err;
}

}  // namespace tessel::testing
