#include "snippets/insert_memory_ops.h"

#include <unordered_map>

namespace tessel::snippets {

namespace {

void InsertLoadsAndStores(KernelIR& ir) {
  std::vector<Instr> out;
  out.reserve(ir.body.size() * 2);
  // An input's value is renamed to its BroadcastMove, so later readers see
  // the broadcast one.
  std::unordered_map<int, int> renamed;
  for (Instr in : ir.body) {
    for (int& s : in.srcs) {
      auto it = renamed.find(s);
      if (it != renamed.end()) s = it->second;
    }
    if (in.op == KOp::kParameter) {
      in.op = KOp::kLoad;
      const KernelArg& arg = ir.args[static_cast<size_t>(in.arg)];
      const int loaded = in.dst;
      out.push_back(in);
      if (arg.broadcast_inner() && ir.inner() > 1) {
        Instr move;
        move.op = KOp::kBroadcastMove;
        move.dst = ir.num_values++;
        move.srcs = {loaded};
        renamed[loaded] = move.dst;
        out.push_back(move);
      }
      continue;
    }
    if (in.op == KOp::kResult) in.op = KOp::kStore;
    out.push_back(std::move(in));
  }
  ir.body = std::move(out);
}

void FuseBroadcastLoads(KernelIR& ir) {
  std::vector<Instr> out;
  out.reserve(ir.body.size());
  for (size_t i = 0; i < ir.body.size(); ++i) {
    const Instr& in = ir.body[i];
    const bool pair = in.op == KOp::kLoad && i + 1 < ir.body.size() &&
                      ir.body[i + 1].op == KOp::kBroadcastMove && ir.body[i + 1].srcs[0] == in.dst;
    if (!pair) {
      out.push_back(in);
      continue;
    }
    Instr fused = in;
    fused.op = KOp::kBroadcastLoad;
    fused.dst = ir.body[i + 1].dst;
    out.push_back(std::move(fused));
    ++i;
  }
  ir.body = std::move(out);
}

std::vector<Instr> ScalarTile(const std::vector<Instr>& vector_tile) {
  std::vector<Instr> tile = vector_tile;
  for (Instr& in : tile) {
    if (in.op == KOp::kLoad || in.op == KOp::kBroadcastLoad) in.op = KOp::kScalarLoad;
    if (in.op == KOp::kStore) in.op = KOp::kScalarStore;
  }
  return tile;
}

}  // namespace

Status InsertMemoryOps(KernelIR& ir) {
  InsertLoadsAndStores(ir);
  FuseBroadcastLoads(ir);
  ir.scalar_body = ScalarTile(ir.body);
  ir.IndexScalars();
  return Status::Ok();
}

}  // namespace tessel::snippets
