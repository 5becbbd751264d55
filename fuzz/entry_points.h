// What each fuzzer does with its bytes, one function per way bytes enter
// tessel. The libFuzzer targets (fuzz_*.cc) call them, and so does the
// regression test (tests/fuzz_regressions_test.cc), which replays every
// seed and every input that once crashed (fuzz/corpus, fuzz/regressions).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "compiler/compile.h"
#include "core/sealed_file.h"
#include "memory/instance_csv.h"
#include "memory/planner.h"
#include "memory/pool_spec.h"
#include "model/model_file.h"
#include "model/plan_memory.h"
#include "onnx/importer.h"
#include "onnx/onnx_pb.h"
#include "onnx/tensor_io.h"
#include "op_fuzzer.h"
#include "targets/reference/target.h"
#include "tuning/cache.h"

namespace tessel::fuzz {

// A compiled model's payload (.tsl without its 28-byte header, which only
// carries a checksum: a seed that is a whole file is cut there) -> the
// loader's checks -> the plan checked against the reference target's
// kernels. Nothing it reads may crash, hang or allocate what the file merely
// claims.
inline void FuzzTsl(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= 28 && bytes.substr(0, 8) == "TESSELCM") bytes.remove_prefix(28);
  StatusOr<CompiledModel> model = DeserializeCompiledModelPayload(bytes, "fuzz.tsl");
  if (!model.ok()) return;
  (void)CheckLayoutFitsKernels(*model->graph, model->memory,
                               targets::ReferenceKernels(*model->graph));
}

// TensorProto bytes (an input .pb file) -> a tensor, external
// data included (relative to an empty folder: nothing may be read outside).
inline void FuzzTensorPb(const uint8_t* data, size_t size) {
  static const std::filesystem::path empty_dir = [] {
    auto dir = std::filesystem::temp_directory_path() / "tessel_fuzz_tensor_pb";
    std::filesystem::create_directories(dir);
    return dir;
  }();
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return;
  (void)onnx_io::TensorFromProto(proto, empty_dir, "tensor");
}

// a planning instance (CSV) -> the parser -> a greedy plan,
// verified.
inline void FuzzInstanceCsv(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  StatusOr<memory::Instance> inst = memory::ParseInstanceCsv(text, "fuzz.csv");
  if (!inst.ok() || inst->problem.buffers.size() > 2000) return;
  memory::PlannerOptions options;
  options.verify = true;
  (void)memory::MakePlan(inst->problem, "greedy_by_size", options);
}

// the command line's parsers of sizes, shapes and pools:
// --input-shape NAME=D0,D1,..., --pool name=...,size=..., byte counts
// (--max-memory 4MiB). The input is split at newlines, one spec each.
inline void FuzzCliOptions(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string spec = text.substr(start, end - start);
    (void)onnx_io::ParseInputShape(spec);
    (void)memory::ParsePoolSpec(spec);
    (void)memory::ParseByteCount(spec);
    start = end + 1;
  }
}

// ONNX model bytes -> import -> every compile stage for the
// reference target, under small limits (64 MiB a tensor, 256 MiB in all) so
// that a model cannot make the fuzzer allocate what it merely claims.
inline void FuzzOnnxModel(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("tessel_fuzz_onnx_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  static const auto target = targets::ReferenceTarget::Create({"reference", {}});
  const std::filesystem::path path = dir / "model.onnx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  CompilerOptions options;
  options.limits.max_tensor_bytes = int64_t{64} << 20;
  options.limits.max_memory_bytes = int64_t{256} << 20;
  (void)Compile(path, **target, options);
}

// a cache file (the OpenCL program cache: core/sealed_file.h) -> its
// parser (ReadSealedFile reads the file, then this). What it accepts must be
// exactly what SealBlob writes for that payload and key: anything else would
// hand a driver a program it was not built from, so it aborts.
inline void FuzzProgramCache(const uint8_t* data, size_t size) {
  using namespace std::string_view_literals;
  constexpr std::string_view kKey = "fuzz device\0driver 1.0\0-cl-std=CL1.2\0"sv;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  StatusOr<std::string> payload = UnsealBlob(bytes, kKey);
  if (payload.ok() && SealBlob(kKey, *payload) != bytes) std::abort();
}

// a tuning cache file (tuning/cache.h) -> its reader. What it accepts must
// save and read back as the same entries: a cache that changed on its way
// through tessel would hand a launch a size nobody measured.
inline void FuzzTuneCache(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessel_fuzz_tune_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "in.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  StatusOr<tuning::TuningCache> cache = tuning::TuningCache::Read(dir / "in.json");
  if (!cache.ok()) return;
  if (!cache->Save(dir / "out.json").ok()) return;  // text that is not UTF-8
  StatusOr<tuning::TuningCache> back = tuning::TuningCache::Read(dir / "out.json");
  if (!back.ok() || back->size() != cache->size()) std::abort();
  for (size_t i = 0; i < cache->size(); ++i) {
    const tuning::TuneEntry& a = cache->entries()[i];
    const tuning::TuneEntry& b = back->entries()[i];
    if (!(a.key == b.key) || a.local != b.local || a.ms != b.ms || a.default_ms != b.default_ms ||
        a.strategy != b.strategy || a.launches != b.launches) {
      std::abort();
    }
  }
}

}  // namespace tessel::fuzz
