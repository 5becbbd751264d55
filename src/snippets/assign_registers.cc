#include "snippets/assign_registers.h"

#include <algorithm>

#include "core/check.h"

namespace tessel::snippets {

namespace {

class RegisterPool {
 public:
  explicit RegisterPool(int n) : free_(static_cast<size_t>(n), true) {}
  // The lowest free register, or -1.
  int Take() {
    for (size_t r = 0; r < free_.size(); ++r) {
      if (free_[r]) {
        free_[r] = false;
        high_water_ = std::max(high_water_, static_cast<int>(r) + 1);
        return static_cast<int>(r);
      }
    }
    return -1;
  }
  void Release(int r) {
    TESSEL_CHECK(r >= 0 && !free_[static_cast<size_t>(r)]);
    free_[static_cast<size_t>(r)] = true;
  }
  int high_water() const { return high_water_; }

 private:
  std::vector<bool> free_;
  int high_water_ = 0;
};

}  // namespace

StatusOr<RegisterAssignment> AssignRegisters(const KernelIR& ir, const std::vector<Instr>& tile,
                                             int num_registers) {
  RegisterAssignment ra;
  ra.value_reg.assign(static_cast<size_t>(ir.num_values), -1);
  ra.aux.resize(tile.size());
  std::vector<int> last_use(static_cast<size_t>(ir.num_values), -1);
  for (size_t i = 0; i < tile.size(); ++i) {
    for (int s : tile[i].srcs) last_use[static_cast<size_t>(s)] = static_cast<int>(i);
  }
  RegisterPool pool(num_registers);
  auto exhausted = [&](size_t i) {
    return ResourceExhausted("snippet '" + ir.name + "': instruction " + std::to_string(i) + " (" +
                             GetOpInfo(tile[i].op).name + ") needs more than " +
                             std::to_string(num_registers) + " vector registers");
  };
  for (size_t i = 0; i < tile.size(); ++i) {
    const Instr& in = tile[i];
    const OpInfo& info = GetOpInfo(in.op);
    if (in.op == KOp::kScalar) continue;
    int immediates = 0;
    std::vector<int> dying;
    for (int s : in.srcs) {
      if (ir.IsScalar(s)) {
        ++immediates;
        continue;
      }
      TESSEL_CHECK_MSG(ra.value_reg[static_cast<size_t>(s)] >= 0,
                       "a value is read before it is defined");
      if (last_use[static_cast<size_t>(s)] == static_cast<int>(i) &&
          std::find(dying.begin(), dying.end(), s) == dying.end()) {
        dying.push_back(s);
      }
    }
    for (int k = 0; k < info.aux_registers + immediates; ++k) {
      const int r = pool.Take();
      if (r < 0) return exhausted(i);
      ra.aux[i].push_back(r);
    }
    if (info.result_may_alias_source) {
      for (int s : dying) pool.Release(ra.value_reg[static_cast<size_t>(s)]);
    }
    if (in.dst >= 0) {
      const int r = pool.Take();
      if (r < 0) return exhausted(i);
      ra.value_reg[static_cast<size_t>(in.dst)] = r;
    }
    for (int r : ra.aux[i]) pool.Release(r);
    if (!info.result_may_alias_source) {
      for (int s : dying) pool.Release(ra.value_reg[static_cast<size_t>(s)]);
    }
    if (in.dst >= 0 && last_use[static_cast<size_t>(in.dst)] < 0) {
      pool.Release(ra.value_reg[static_cast<size_t>(in.dst)]);
    }
  }
  ra.num_used = pool.high_water();
  return ra;
}

}  // namespace tessel::snippets
