#include "snippets/snippet_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/check.h"
#include "snippets/interpreter.h"
#include "snippets/kernel_call.h"
#include "snippets/lower.h"
#include "snippets/x86_generator.h"

namespace tessel::snippets {

namespace {

// Inner blocks are whole cache lines of float, so every block of a 64-byte
// aligned row starts aligned (streaming stores need it).
constexpr int64_t kInnerAlignElements = 64;

int64_t WalkedBytes(const KernelIR& ir) {
  int64_t bytes = 0;
  for (const KernelArg& a : ir.args) {
    bytes += NumElements(a.shape) * static_cast<int64_t>(DTypeSize(a.dtype));
  }
  return bytes;
}

// The largest cache of cpu0 that sysfs lists ("32768K"); 0 if none.
int64_t SysfsLastLevelCacheBytes() {
  int64_t best_level = 0, best_bytes = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int64_t level = 0, size = 0;
    std::string unit;
    if (!(level_file >> level) || !(size_file >> size)) break;
    size_file >> unit;
    if (unit == "K") size <<= 10;
    if (unit == "M") size <<= 20;
    if (level >= best_level) {
      best_level = level;
      best_bytes = size;
    }
  }
  return best_bytes;
}

}  // namespace

// sysfs first: under some hypervisors cpuid (and so sysconf) reports the
// whole host's L3 (384 MiB on a 2-vCPU AMD EPYC VM whose sysfs lists the
// 32 MiB its cores share), which would keep streaming stores off for working
// sets ten times the cache these cores can use.
int64_t LastLevelCacheBytes() {
  static const int64_t bytes = [] {
    const int64_t sysfs = SysfsLastLevelCacheBytes();
    if (sysfs > 0) return sysfs;
    const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
    const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l3 > 0) return static_cast<int64_t>(l3);
    if (l2 > 0) return static_cast<int64_t>(l2);
    return int64_t{32} << 20;
  }();
  return bytes;
}

SnippetKernel::~SnippetKernel() = default;

StatusOr<std::unique_ptr<SnippetKernel>> SnippetKernel::Compile(const ir::Graph& body,
                                                                const SnippetOptions& options) {
  std::unique_ptr<SnippetKernel> k(new SnippetKernel());
  TESSEL_ASSIGN_OR_RETURN(k->ir_, LowerSubgraph(body, options.layout));
  k->options_ = options;
  const Isa isa = std::min(options.isa, HostIsa());
  if (isa == Isa::kInterpreter) return k;
  auto code = GenerateX86(k->ir_, isa, /*nontemporal=*/false, options.dump_dir);
  if (!code.ok()) {
    // Valid input the JIT cannot take (too many live values): the
    // interpreter computes the same results.
    k->jit_status_ = code.status();
    return k;
  }
  k->code_ = std::move(*code);
  k->isa_ = isa;
  if (WalkedBytes(k->ir_) >= options.nontemporal_threshold_bytes) {
    auto streaming = GenerateX86(k->ir_, isa, /*nontemporal=*/true, options.dump_dir);
    if (streaming.ok()) k->streaming_code_ = std::move(*streaming);
  }
  return k;
}

int SnippetKernel::registers_used() const { return code_ ? code_->registers_used() : 0; }

// Streaming stores need every vector store of every float output aligned:
// aligned bases, and row and outer strides of whole cache lines.
const X86Function* SnippetKernel::ChooseCode(const std::vector<const char*>& base) const {
  if (!streaming_code_) return code_.get();
  for (size_t k = 0; k < ir_.args.size(); ++k) {
    const KernelArg& a = ir_.args[k];
    if (!a.is_output || a.dtype != DType::kFloat32) continue;
    if (reinterpret_cast<uintptr_t>(base[k]) % 64 != 0) return code_.get();
    for (int dim = 0; dim < kDomainRank - 1; ++dim) {
      if (ir_.domain[static_cast<size_t>(dim)] != 1 &&
          (a.strides[static_cast<size_t>(dim)] * 4) % 64 != 0) {
        return code_.get();
      }
    }
  }
  return streaming_code_.get();
}

bool SnippetKernel::Streams(const std::vector<void*>& outputs) const {
  std::vector<const char*> base(static_cast<size_t>(ir_.num_inputs), nullptr);
  for (void* p : outputs) base.push_back(static_cast<const char*>(p));
  const X86Function* code = ChooseCode(base);
  return code != nullptr && code == streaming_code_.get();
}

void SnippetKernel::Run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs,
                        const ParallelFor& parallel_for) const {
  TESSEL_CHECK(inputs.size() == static_cast<size_t>(ir_.num_inputs));
  TESSEL_CHECK(outputs.size() == static_cast<size_t>(ir_.num_outputs()));
  const auto& d = ir_.domain;
  const int64_t inner = d[5];
  const int64_t rows = d[4];
  const int64_t outer = d[0] * d[1] * d[2] * d[3];
  if (outer * rows * inner == 0) return;

  const size_t num_args = ir_.args.size();
  std::vector<const char*> base(num_args);
  std::vector<int64_t> esize(num_args);
  for (size_t k = 0; k < num_args; ++k) {
    base[k] = static_cast<const char*>(k < inputs.size() ? inputs[k] : outputs[k - inputs.size()]);
    esize[k] = static_cast<int64_t>(DTypeSize(ir_.args[k].dtype));
  }

  // Work items: inner blocks of long rows, or groups of short rows.
  const int64_t grain = std::max<int64_t>(options_.grain_elements, kInnerAlignElements);
  int64_t inner_block = inner;
  int64_t row_block = 1;
  if (inner > grain) {
    inner_block = (grain + kInnerAlignElements - 1) / kInnerAlignElements * kInnerAlignElements;
  } else {
    row_block = std::max<int64_t>(1, grain / inner);
  }
  const int64_t inner_blocks = (inner + inner_block - 1) / inner_block;
  const int64_t row_blocks = (rows + row_block - 1) / row_block;
  const int64_t items = outer * row_blocks * inner_blocks;

  const X86Function* code = ChooseCode(base);

  auto run_item = [&](int64_t item) {
    const int64_t ib = item % inner_blocks;
    const int64_t rb = (item / inner_blocks) % row_blocks;
    int64_t o = item / (inner_blocks * row_blocks);
    const int64_t i_begin = ib * inner_block;
    const int64_t i_len = std::min(inner_block, inner - i_begin);
    const int64_t r_begin = rb * row_block;
    KernelCall call{};
    call.inner = i_len;
    call.rows = std::min(row_block, rows - r_begin);
    std::array<int64_t, 4> index{};
    for (int dim = 3; dim >= 0; --dim) {
      index[static_cast<size_t>(dim)] = o % d[static_cast<size_t>(dim)];
      o /= d[static_cast<size_t>(dim)];
    }
    for (size_t k = 0; k < num_args; ++k) {
      const auto& s = ir_.args[k].strides;
      int64_t offset = r_begin * s[4] + i_begin * s[5];
      for (size_t dim = 0; dim < 4; ++dim) offset += index[dim] * s[dim];
      call.ptr[k] = base[k] + offset * esize[k];
      call.row_advance_bytes[k] = (s[4] - s[5] * i_len) * esize[k];
    }
    if (code) {
      code->entry()(&call);
    } else {
      Interpret(ir_, call);
    }
  };
  if (!parallel_for || items == 1 || outer * rows * inner < options_.min_parallel_elements) {
    for (int64_t i = 0; i < items; ++i) run_item(i);
  } else {
    parallel_for(items, run_item);
  }
}

}  // namespace tessel::snippets
