// tessel tune-cache: shows and combines tuning caches (src/tuning/cache.h),
// such as the ones several machines with the same device filled.
//
//   tessel tune-cache merge a.json b.json -o tune.json   # the faster entry of each key
//   tessel tune-cache show tune.json [--json]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "core/messages.h"
#include "tuning/cache.h"

namespace tessel::cli {

namespace {

using tuning::TuneEntry;
using tuning::TuningCache;
// Keeps keys in the order written: summaries read like the file.
using Json = nlohmann::ordered_json;

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool json = false;
};

struct ShowArgs {
  std::string file;
  bool json = false;
};

// Every input is read before anything is written: a corrupt one leaves the
// output as it was.
Status Merge(const MergeArgs& args) {
  std::vector<TuningCache> inputs;
  for (const std::string& path : args.inputs) {
    TESSEL_ASSIGN_OR_RETURN(TuningCache cache, TuningCache::Read(path));
    inputs.push_back(std::move(cache));
  }
  TuningCache merged;
  int replaced = 0;
  for (const TuningCache& cache : inputs) {
    const size_t before = merged.size();
    const int changed = merged.Merge(cache);
    replaced += changed - static_cast<int>(merged.size() - before);
  }
  TESSEL_RETURN_IF_ERROR(merged.Save(args.output));
  if (args.json) {
    const Json j = {{"inputs", args.inputs},
                    {"entries", merged.size()},
                    {"replaced", replaced},
                    {"output", args.output}};
    std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    std::printf("merged %zu file%s: %zu entries (%d replaced by faster ones) -> %s\n",
                inputs.size(), inputs.size() == 1 ? "" : "s", merged.size(), replaced,
                args.output.c_str());
  }
  return Status::Ok();
}

std::string SizesText(const std::array<size_t, 3>& sizes, int dims) {
  std::string text;
  for (int d = 0; d < dims; ++d) text += (d ? "x" : "") + std::to_string(sizes[d]);
  return text;
}

// default_ms / ms; 0 where the default was not measured.
double Speedup(const TuneEntry& e) {
  return e.default_ms > 0 && e.ms > 0 ? e.default_ms / e.ms : 0;
}

Json EntryJson(const TuneEntry& e) {
  const tuning::TuneKey& k = e.key;
  Json j = {{"platform", k.platform},
            {"device", k.device},
            {"driver", k.driver},
            {"kernel", k.kernel},
            {"storage", k.storage},
            {"global", std::vector<size_t>(k.global.begin(), k.global.begin() + k.dims)},
            {"local", std::vector<size_t>(e.local.begin(), e.local.begin() + k.dims)},
            {"ms", e.ms},
            {"default_ms", e.default_ms},
            {"speedup", nullptr},
            {"strategy", e.strategy},
            {"launches", e.launches}};
  if (Speedup(e) > 0) j["speedup"] = Speedup(e);
  return j;
}

Status Show(const ShowArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(TuningCache cache, TuningCache::Read(args.file));
  if (args.json) {
    Json j = {{"file", args.file}, {"entries", Json::array()}};
    for (const TuneEntry& e : cache.entries()) j["entries"].push_back(EntryJson(e));
    // The file's strings were valid UTF-8 to be read; replace guards the rest.
    std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return Status::Ok();
  }
  // Names come from a file: escaped, so that no byte of it reaches the terminal raw.
  std::vector<std::vector<std::string>> rows = {
      {"device", "kernel", "global", "local", "ms", "default_ms", "speedup", "strategy"}};
  for (const TuneEntry& e : cache.entries()) {
    char ms[32], default_ms[32], speedup[32];
    std::snprintf(ms, sizeof ms, "%.4g", e.ms);
    std::snprintf(default_ms, sizeof default_ms, "%.4g", e.default_ms);
    std::snprintf(speedup, sizeof speedup, "%.2fx", Speedup(e));
    rows.push_back({EscapeForMessage(e.key.device, 48), EscapeForMessage(e.key.kernel, 48),
                    SizesText(e.key.global, e.key.dims), SizesText(e.local, e.key.dims), ms,
                    e.default_ms > 0 ? default_ms : "-", Speedup(e) > 0 ? speedup : "-",
                    EscapeForMessage(e.strategy, 32)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // Text left-aligned, numbers (from "ms" on) right-aligned.
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (c >= 4 && c <= 6 ? pad + row[c] : row[c] + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::printf("%s\n", line.c_str());
  }
  std::printf("%zu entr%s in %s\n", cache.size(), cache.size() == 1 ? "y" : "ies",
              args.file.c_str());
  return Status::Ok();
}

}  // namespace

void AddTuneCacheCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("tune-cache", "Show or merge OpenCL tuning caches");
  cmd->require_subcommand(1);

  auto merge_args = std::make_shared<MergeArgs>();
  CLI::App* merge = cmd->add_subcommand(
      "merge", "Merge tuning caches into one, keeping the faster entry where two share a key");
  merge->add_option("inputs", merge_args->inputs, "Tuning cache files, merged in order")
      ->required();
  merge->add_option("-o,--output", merge_args->output, "The merged cache file")->required();
  merge->add_flag("--json", merge_args->json, "Print the summary as JSON");
  merge->callback([merge_args, &exit_code] {
    const Status s = Merge(*merge_args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });

  auto show_args = std::make_shared<ShowArgs>();
  CLI::App* show = cmd->add_subcommand("show", "Print the entries of a tuning cache");
  show->add_option("file", show_args->file, "Tuning cache file")->required();
  show->add_flag("--json", show_args->json, "Print the entries as JSON");
  show->callback([show_args, &exit_code] {
    const Status s = Show(*show_args);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
