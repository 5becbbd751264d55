#include "memory/instance_csv.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace tessel::memory {

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 48;
constexpr int64_t kMaxTime = int64_t{1} << 48;
constexpr int64_t kMaxTotalBytes = int64_t{1} << 56;
constexpr int64_t kMaxAlignment = int64_t{1} << 30;

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

std::vector<std::string> SplitCommas(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.push_back(Trim(std::string_view(line).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

bool ParseInt(const std::string& s, int64_t* v) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *v);
  return ec == std::errc() && p == end && !s.empty();
}

}  // namespace

std::optional<int64_t> CapacityFromFileName(const std::filesystem::path& path) {
  const std::string stem = path.stem().string();  // "guillotine_00_40.1048576"
  const size_t dot = stem.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  int64_t capacity = 0;
  if (!ParseInt(stem.substr(dot + 1), &capacity) || capacity < 0) return std::nullopt;
  return capacity;
}

StatusOr<Instance> ParseInstanceCsv(const std::string& text, const std::string& source) {
  Instance inst;
  int64_t total_bytes = 0;
  inst.problem.pools.push_back({.name = "memory"});
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto error = [&](const std::string& what) {
    return InvalidArgument("instance '" + source + "' line " + std::to_string(line_no) + ": " +
                           what);
  };
  // Column name -> index in a row.
  std::map<std::string, size_t> column;
  std::map<std::string, int> line_of_id;
  const std::vector<std::string> known = {"id", "lower", "upper", "size", "alignment", "offset"};
  while (std::getline(in, line)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::vector<std::string> cells = SplitCommas(line);
    if (column.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) {
        if (std::find(known.begin(), known.end(), cells[i]) == known.end()) {
          return error("unknown column '" + cells[i] +
                       "' (columns: id, lower, upper, size, alignment, offset)");
        }
        if (!column.emplace(cells[i], i).second) return error("column '" + cells[i] + "' repeats");
      }
      for (const char* required : {"id", "lower", "upper", "size"}) {
        if (!column.count(required)) {
          return error(std::string("the header lacks column '") + required + "'");
        }
      }
      continue;
    }
    if (cells.size() != column.size()) {
      return error("expected " + std::to_string(column.size()) + " columns, found " +
                   std::to_string(cells.size()));
    }
    BufferInfo b;
    b.name = cells[column["id"]];
    if (b.name.empty()) return error("the id is empty");
    if (auto [it, fresh] = line_of_id.emplace(b.name, line_no); !fresh) {
      return error("id '" + b.name + "' repeats line " + std::to_string(it->second));
    }
    int64_t lower = 0, upper = 0;
    auto number = [&](const char* name, int64_t* v) -> Status {
      const std::string& cell = cells[column[name]];
      if (!ParseInt(cell, v)) {
        return error(std::string("column '") + name + "' holds '" + cell + "', not an integer");
      }
      return Status::Ok();
    };
    TESSEL_RETURN_IF_ERROR(number("lower", &lower));
    TESSEL_RETURN_IF_ERROR(number("upper", &upper));
    TESSEL_RETURN_IF_ERROR(number("size", &b.size_bytes));
    if (lower >= upper) {
      return error("lower " + std::to_string(lower) + " is not below upper " +
                   std::to_string(upper));
    }
    if (b.size_bytes < 0) return error("size " + std::to_string(b.size_bytes) + " is negative");
    // Bounds that keep every offset a planner computes (sums of sizes and
    // alignment padding) far from overflow.
    if (b.size_bytes > kMaxBytes || std::abs(lower) > kMaxTime || std::abs(upper) > kMaxTime) {
      return error("size or lifetime beyond 2^48");
    }
    total_bytes += b.size_bytes;
    if (total_bytes > kMaxTotalBytes) return error("sizes add up beyond 2^56 bytes");
    if (column.count("alignment")) {
      TESSEL_RETURN_IF_ERROR(number("alignment", &b.alignment));
      if (b.alignment < 1 || (b.alignment & (b.alignment - 1)) != 0 ||
          b.alignment > kMaxAlignment) {
        return error("alignment " + std::to_string(b.alignment) +
                     " is not a power of two up to 2^30");
      }
    }
    if (column.count("offset") && !cells[column["offset"]].empty()) {
      int64_t offset = 0;
      TESSEL_RETURN_IF_ERROR(number("offset", &offset));
      if (offset > kMaxBytes) return error("offset beyond 2^48");
      if (offset < 0 || offset % b.alignment != 0) {
        return error("offset " + std::to_string(offset) +
                     " is not a non-negative multiple of the alignment");
      }
      b.fixed_offset_bytes = offset;
    }
    b.live = {lower, upper};
    b.pool_candidates = {0};
    inst.problem.buffers.push_back(std::move(b));
  }
  if (column.empty()) {
    return InvalidArgument("instance '" + source + "' is empty: expected a header line " +
                           "'id,lower,upper,size'");
  }
  return inst;
}

StatusOr<Instance> ReadInstanceCsv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("instance '" + path.string() + "': cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  TESSEL_ASSIGN_OR_RETURN(Instance inst, ParseInstanceCsv(ss.str(), path.string()));
  inst.capacity_bytes = CapacityFromFileName(path);
  return inst;
}

std::string FormatInstanceCsv(const Problem& problem, const Plan* plan) {
  bool aligned = false;
  for (const BufferInfo& b : problem.buffers) aligned = aligned || b.alignment != 1;
  std::string out = std::string("id,lower,upper,size") + (aligned ? ",alignment" : "") +
                    (plan ? ",offset" : "") + "\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const BufferInfo& b = problem.buffers[i];
    out += b.name + "," + std::to_string(b.live.first_use) + "," + std::to_string(b.live.last_use) +
           "," + std::to_string(b.size_bytes);
    if (aligned) out += "," + std::to_string(b.alignment);
    if (plan) out += "," + std::to_string(plan->placements[i].offset_bytes);
    out += "\n";
  }
  return out;
}

std::string FormatInstanceCsv(const Problem& problem, const Plan& plan) {
  return FormatInstanceCsv(problem, &plan);
}

}  // namespace tessel::memory
