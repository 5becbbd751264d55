#include "tuning/cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <tuple>

#include "core/check.h"
#include "core/hash.h"
#include "core/messages.h"

namespace tessel::tuning {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kFormat[] = "tessel-tuning-cache";
constexpr int kVersion = 1;
// Far more than any device's launches; a larger file is not one we wrote.
constexpr uintmax_t kMaxFileBytes = uintmax_t{256} << 20;

auto KeyTie(const TuneKey& k) {
  return std::tie(k.platform, k.device, k.driver, k.kernel, k.source_hash, k.storage, k.args_hash,
                  k.dims, k.global);
}

bool KeyLess(const TuneEntry& a, const TuneKey& b) { return KeyTie(a.key) < KeyTie(b); }

std::string SizesText(const std::array<size_t, 3>& sizes, int dims) {
  std::string text = "[";
  for (int d = 0; d < dims; ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

std::string NumberText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// What is wrong with `e`, or "". Read refuses such an entry and Put checks
// for one, so that Save never writes a file that Read would refuse for it.
std::string Problem(const TuneEntry& e) {
  const int dims = e.key.dims;
  if (dims < 1 || dims > 3) return "dims " + std::to_string(dims) + " is outside 1..3";
  for (int d = 0; d < 3; ++d) {
    if (d >= dims && (e.key.global[d] != 1 || e.local[d] != 1))
      return "sizes past dimension " + std::to_string(dims) + " must be 1";
    if (d < dims && (e.key.global[d] == 0 || e.local[d] == 0))
      return "zero size in global " + SizesText(e.key.global, dims) + " or local " +
             SizesText(e.local, dims);
  }
  // NaN and infinities have no JSON spelling: nlohmann would write null.
  if (!std::isfinite(e.ms) || e.ms < 0) return "ms " + NumberText(e.ms) + " is not a time";
  if (!std::isfinite(e.default_ms) || e.default_ms < 0)
    return "default_ms " + NumberText(e.default_ms) + " is not a time";
  if (e.launches < 0) return "launches " + std::to_string(e.launches) + " is negative";
  return "";
}

// The member `name` of `entry`, which must be of `type` ("string", ...).
StatusOr<const json*> Member(const json& entry, const char* name, const char* type,
                             bool (json::*is_type)() const noexcept) {
  auto it = entry.find(name);
  if (it == entry.end()) return DataLoss(std::string("\"") + name + "\" is missing");
  if (!((*it).*is_type)())
    return DataLoss(std::string("\"") + name + "\" is " + it->type_name() + " " +
                    EscapeForMessage(it->dump(), 64) + ", not " + type);
  return &*it;
}

Status GetString(const json& entry, const char* name, std::string* out) {
  TESSEL_ASSIGN_OR_RETURN(const json* j, Member(entry, name, "a string", &json::is_string));
  *out = j->get<std::string>();
  return Status::Ok();
}

Status GetNumber(const json& entry, const char* name, double* out) {
  TESSEL_ASSIGN_OR_RETURN(const json* j, Member(entry, name, "a number", &json::is_number));
  *out = j->get<double>();
  return Status::Ok();
}

// 1 to 3 positive integers; `dims` is their count.
Status GetSizes(const json& entry, const char* name, std::array<size_t, 3>* out, int* dims) {
  TESSEL_ASSIGN_OR_RETURN(const json* j, Member(entry, name, "an array", &json::is_array));
  if (j->empty() || j->size() > 3)
    return DataLoss(std::string("\"") + name + "\" has " + std::to_string(j->size()) +
                    " dimensions, not 1 to 3");
  *out = {1, 1, 1};
  for (size_t d = 0; d < j->size(); ++d) {
    const json& v = (*j)[d];
    // nlohmann parses every non-negative integer as unsigned: this refuses
    // negative numbers, fractions and 1e3 alike.
    if (!v.is_number_unsigned() || v.get<uint64_t>() == 0)
      return DataLoss(std::string("\"") + name + "\" " + EscapeForMessage(j->dump(), 64) +
                      " is not a list of positive integers");
    (*out)[d] = v.get<uint64_t>();
  }
  *dims = static_cast<int>(j->size());
  return Status::Ok();
}

StatusOr<TuneEntry> ParseEntry(const json& j) {
  if (!j.is_object()) return DataLoss(std::string("is ") + j.type_name() + ", not an object");
  TuneEntry e;
  TuneKey& k = e.key;
  for (const auto& [name, field] :
       {std::pair{"platform", &k.platform}, std::pair{"device", &k.device},
        std::pair{"driver", &k.driver}, std::pair{"kernel", &k.kernel},
        std::pair{"source_hash", &k.source_hash}, std::pair{"storage", &k.storage},
        std::pair{"strategy", &e.strategy}}) {
    TESSEL_RETURN_IF_ERROR(GetString(j, name, field));
  }
  int local_dims = 0;
  TESSEL_RETURN_IF_ERROR(GetSizes(j, "global", &k.global, &k.dims));
  TESSEL_RETURN_IF_ERROR(GetSizes(j, "local", &e.local, &local_dims));
  if (local_dims != k.dims)
    return DataLoss("global " + SizesText(k.global, k.dims) + " and local " +
                    SizesText(e.local, local_dims) + " differ in dimensions");
  TESSEL_RETURN_IF_ERROR(GetString(j, "args_hash", &k.args_hash));
  TESSEL_RETURN_IF_ERROR(GetNumber(j, "ms", &e.ms));
  TESSEL_RETURN_IF_ERROR(GetNumber(j, "default_ms", &e.default_ms));
  TESSEL_ASSIGN_OR_RETURN(const json* launches,
                          Member(j, "launches", "an integer", &json::is_number_integer));
  if (launches->is_number_unsigned() &&
      launches->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return DataLoss("\"launches\" " + launches->dump() + " is too large");
  e.launches = launches->get<int64_t>();
  if (std::string problem = Problem(e); !problem.empty()) return DataLoss(problem);
  return e;
}

// The entries of `text`, sorted by key; messages do not name the file.
StatusOr<std::vector<TuneEntry>> ParseCache(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // Drop "[json.exception.parse_error.101] ": the rest says where and what.
    std::string what = e.what();
    if (size_t end = what.find("] "); what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    return DataLoss("not JSON: " + what);
  }
  if (!doc.is_object())
    return DataLoss(std::string("is a JSON ") + doc.type_name() + ", not a " + kFormat + " object");
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || *format != kFormat)
    return DataLoss("\"format\" is " +
                    (format == doc.end() ? "missing" : EscapeForMessage(format->dump(), 64)) +
                    ", not \"" + kFormat + "\"");
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || *version != kVersion)
    return DataLoss("\"version\" is " +
                    (version == doc.end() ? "missing" : EscapeForMessage(version->dump(), 64)) +
                    "; this tessel reads version " + std::to_string(kVersion));
  auto list = doc.find("entries");
  if (list == doc.end() || !list->is_array())
    return DataLoss("\"entries\" is " +
                    std::string(list == doc.end() ? "missing" : list->type_name()) +
                    ", not an array");

  std::vector<TuneEntry> entries;
  entries.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    StatusOr<TuneEntry> e = ParseEntry((*list)[i]);
    if (!e.ok()) return e.status().WithContext("entries[" + std::to_string(i) + "]");
    entries.push_back(std::move(*e));
  }
  // Sorted through indices, so that a duplicate names both places in the file.
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return KeyTie(entries[a].key) < KeyTie(entries[b].key);
  });
  std::vector<TuneEntry> sorted;
  sorted.reserve(entries.size());
  for (size_t n = 0; n < order.size(); ++n) {
    const TuneEntry& e = entries[order[n]];
    if (n > 0 && sorted.back().key == e.key)
      return DataLoss("entries[" + std::to_string(order[n - 1]) + "] and entries[" +
                      std::to_string(order[n]) + "] have one key (kernel '" +
                      EscapeForMessage(e.key.kernel) + "' on '" + EscapeForMessage(e.key.device) +
                      "')");
    sorted.push_back(e);
  }
  return sorted;
}

// Read, with messages that do not name the file (LoadOrEmpty names it its way).
StatusOr<std::vector<TuneEntry>> ReadEntries(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return NotFound("no such file");
  if (ec) return Internal(ec.message());
  if (!fs::is_regular_file(st)) return DataLoss("not a regular file");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Internal(ec.message());
  if (size > kMaxFileBytes)
    return DataLoss(std::to_string(size) + " bytes, more than the " +
                    std::to_string(kMaxFileBytes >> 20) + " MiB a tuning cache may hold");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Internal(std::string("cannot open: ") + std::strerror(errno));
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)) ||
      in.peek() != std::char_traits<char>::eof())
    return DataLoss("changed while being read");
  try {
    return ParseCache(text);
  } catch (const json::exception& e) {  // every access is checked first; this is a backstop
    return DataLoss(e.what());
  }
}

// Save's text: one entry a line, so that a diff shows which launches changed.
std::string FormatCache(const std::vector<TuneEntry>& entries) {
  std::string out = std::string("{\"format\": \"") + kFormat +
                    "\", \"version\": " + std::to_string(kVersion) + ",\n \"entries\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    const TuneEntry& e = entries[i];
    const TuneKey& k = e.key;
    nlohmann::ordered_json j;
    j["platform"] = k.platform;
    j["device"] = k.device;
    j["driver"] = k.driver;
    j["kernel"] = k.kernel;
    j["source_hash"] = k.source_hash;
    j["storage"] = k.storage;
    j["args_hash"] = k.args_hash;
    j["global"] = std::vector<size_t>(k.global.begin(), k.global.begin() + k.dims);
    j["local"] = std::vector<size_t>(e.local.begin(), e.local.begin() + k.dims);
    j["ms"] = e.ms;  // nlohmann writes the shortest text that reads back exactly
    j["default_ms"] = e.default_ms;
    j["strategy"] = e.strategy;
    j["launches"] = e.launches;
    // Throws on text that is not UTF-8: Save reports it.
    out += (i ? ",\n  " : "\n  ") + j.dump();
  }
  return out + "\n]}\n";
}

}  // namespace

std::string HashHex(std::string_view bytes) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(bytes.data(), bytes.size())));
  return hex;
}

StatusOr<TuningCache> TuningCache::Read(const fs::path& path) {
  StatusOr<std::vector<TuneEntry>> entries = ReadEntries(path);
  if (!entries.ok()) return entries.status().WithContext(path.string());
  TuningCache cache;
  cache.entries_ = std::move(*entries);
  return cache;
}

TuningCache TuningCache::LoadOrEmpty(const fs::path& path, std::vector<std::string>* notes) {
  StatusOr<std::vector<TuneEntry>> entries = ReadEntries(path);
  TuningCache cache;
  if (entries.ok()) {
    cache.entries_ = std::move(*entries);
  } else if (entries.status().code() != StatusCode::kNotFound && notes != nullptr) {
    notes->push_back("tuning cache " + path.string() +
                     " ignored: " + OneLine(entries.status().message()));
  }
  return cache;
}

int TuningCache::Invalidate(const std::string& platform, const std::string& device,
                            const std::string& driver, std::vector<std::string>* notes) {
  std::set<std::string> old_drivers;
  const auto stale = [&](const TuneEntry& e) {
    return e.key.platform == platform && e.key.device == device && e.key.driver != driver;
  };
  for (const TuneEntry& e : entries_) {
    if (stale(e)) old_drivers.insert(e.key.driver);
  }
  const int dropped = static_cast<int>(std::erase_if(entries_, stale));
  if (dropped > 0 && notes != nullptr) {
    std::string olds;
    for (const std::string& d : old_drivers)
      olds += (olds.empty() ? "" : ", ") + EscapeForMessage(d);
    notes->push_back("tuning cache: " + std::to_string(dropped) +
                     (dropped == 1 ? " entry for " : " entries for ") + EscapeForMessage(device) +
                     (dropped == 1 ? " was" : " were") + " tuned under driver" +
                     (old_drivers.size() == 1 ? " " : "s ") + olds + " (now " +
                     EscapeForMessage(driver) +
                     "); ignored until tuned again (tessel tune, or --tune online)");
  }
  return dropped;
}

const TuneEntry* TuningCache::Find(const TuneKey& key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key, KeyLess);
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

void TuningCache::Put(TuneEntry entry) {
  TESSEL_CHECK_MSG(Problem(entry).empty(), Problem(entry).c_str());
  auto it = std::lower_bound(entries_.begin(), entries_.end(), entry.key, KeyLess);
  if (it != entries_.end() && it->key == entry.key) {
    *it = std::move(entry);
  } else {
    entries_.insert(it, std::move(entry));
  }
}

int TuningCache::Merge(const TuningCache& other) {
  int changed = 0;
  for (const TuneEntry& e : other.entries_) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), e.key, KeyLess);
    if (it != entries_.end() && it->key == e.key) {
      if (e.ms >= it->ms) continue;  // on a tie the entry already here stays
      *it = e;
    } else {
      entries_.insert(it, e);
    }
    ++changed;
  }
  return changed;
}

Status TuningCache::Save(const fs::path& path) const {
  std::string text;
  try {
    text = FormatCache(entries_);
  } catch (const json::exception& e) {
    return InvalidArgument("cannot write tuning cache '" + path.string() + "': " + e.what());
  }
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec)
    return Internal("cannot write '" + path.string() +
                    "': cannot create its folder: " + ec.message());
  // Unique to this process and call: concurrent savers never share a file,
  // and the last rename wins whole.
  static std::atomic<uint64_t> counter{0};
  const fs::path tmp =
      path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Internal("cannot write '" + path.string() + "': " + std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      const int err = errno;
      fs::remove(tmp, ec);
      return Internal("writing '" + path.string() + "' failed: " + std::strerror(err));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return Internal("cannot write '" + path.string() + "': " + why);
  }
  return Status::Ok();
}

}  // namespace tessel::tuning
