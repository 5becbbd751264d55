// Bare planning instances in the CSV format published solvers use
// (../shared/planning/README.md):
//
//   id,lower,upper,size[,alignment][,offset]
//   b0,0,236544,235520
//
// Each row is a buffer live over [lower, upper) with `size` bytes; `alignment`
// (default 1) constrains its offset, `offset` pins it. The capacity is the
// number before ".csv" in the file name ("guillotine_00_40.1048576.csv"). A
// plan is written back as the same columns with `offset` filled in.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/status.h"
#include "memory/problem.h"

namespace tessel::memory {

struct Instance {
  // One unbounded pool, "memory", that every buffer may use.
  Problem problem;
  // From the file name, when it has one.
  std::optional<int64_t> capacity_bytes;
};

// Errors name the file and the line: "instance 'x.csv' line 7: ...".
StatusOr<Instance> ReadInstanceCsv(const std::filesystem::path& path);
StatusOr<Instance> ParseInstanceCsv(const std::string& text, const std::string& source);

// "a.1048576.csv" -> 1048576; nullopt when the name has no such number.
std::optional<int64_t> CapacityFromFileName(const std::filesystem::path& path);

// The instance with the plan's offsets (an `offset` column), or, without a
// plan, the bare instance.
std::string FormatInstanceCsv(const Problem& problem, const Plan* plan);
std::string FormatInstanceCsv(const Problem& problem, const Plan& plan);

}  // namespace tessel::memory
