#include "memory/testing/texture_instance.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tessel::memory {

TextureProblem RandomTextureProblem(const RandomTextureOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) {
    return std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * unit(rng));
  };
  TextureProblem problem;
  problem.max_width = options.max_width;
  problem.max_height = options.max_height;
  const int32_t kinds = std::max(options.num_kinds, 1);
  for (int32_t k = 0; k < kinds; ++k) {
    const bool weights = kinds > 1 && k == kinds - 1;
    problem.kinds.push_back(
        {.name = weights ? "weight" : "k" + std::to_string(k) + "_", .read_only = weights});
  }
  const int64_t horizon = std::max<int32_t>(options.num_tokens, 1);
  for (int32_t i = 0; i < options.num_tokens; ++i) {
    TextureToken t;
    t.name = "t" + std::to_string(i);
    t.kind = static_cast<int32_t>(rng() % static_cast<uint64_t>(kinds));
    const double area = log_uniform(static_cast<double>(options.min_area),
                                    static_cast<double>(options.max_area) + 1);
    const double aspect = log_uniform(1 / options.max_aspect, options.max_aspect);
    t.width = std::clamp<int64_t>(std::llround(std::sqrt(area * aspect)), 1, options.max_width);
    t.height = std::clamp<int64_t>(std::llround(area / static_cast<double>(t.width)), 1,
                                   options.max_height);
    if (problem.kinds[static_cast<size_t>(t.kind)].read_only) {
      t.live = {0, horizon};
    } else {
      const auto start = static_cast<int64_t>(unit(rng) * static_cast<double>(horizon));
      const auto steps =
          static_cast<int64_t>(log_uniform(1, static_cast<double>(options.max_lifetime_steps) + 1));
      t.live = {start, start + std::max<int64_t>(steps, 1)};
    }
    problem.tokens.push_back(std::move(t));
  }
  return problem;
}

TextureProblem CnnTextureProblem(const CnnTextureOptions& options) {
  std::mt19937_64 rng(options.seed);
  TextureProblem problem;
  problem.kinds = {{.name = "texture"}, {.name = "weight", .read_only = true}};
  auto texels = [](int64_t channels) { return (channels + 3) / 4; };
  // Weights live for the whole run: their lifespans are set at the end.
  std::vector<size_t> weights;
  auto conv_weights = [&](const std::string& name, int64_t out_c, int64_t in_c, int64_t k,
                          bool depthwise) {
    weights.push_back(problem.tokens.size());
    problem.tokens.push_back({.name = name + ".w",
                              .width = depthwise ? k * k : texels(in_c) * 4 * k * k,
                              .height = texels(out_c),
                              .kind = 1});
  };
  int64_t step = 0;
  // Activations are produced at `step` and live until their last reader ran.
  auto activation = [&](const std::string& name, int64_t c, int64_t size) {
    problem.tokens.push_back({.name = name,
                              .width = size,
                              .height = texels(c) * size,
                              .live = {step, step + 1},
                              .kind = 0});
    return problem.tokens.size() - 1;
  };
  auto read = [&](size_t token) { problem.tokens[token].live.last_use = step + 1; };

  int64_t size = options.input_size / 2;
  int64_t channels = 32;
  conv_weights("stem", channels, 3, 3, false);
  size_t x = activation("stem", channels, size);
  ++step;
  for (int32_t s = 0; s < options.stages; ++s) {
    const int64_t out_channels = (channels * (rng() % 2 ? 3 : 4) / 2 + 7) / 8 * 8;
    for (int32_t b = 0; b < options.blocks; ++b) {
      const std::string name = "s" + std::to_string(s) + "b" + std::to_string(b);
      const bool first = b == 0;
      const int64_t expanded = channels * (rng() % 2 ? 4 : 6);
      const int64_t out_size = first && s > 0 ? (size + 1) / 2 : size;
      const int64_t out_c = first ? out_channels : channels;
      conv_weights(name + ".expand", expanded, channels, 1, false);
      read(x);
      const size_t e = activation(name + ".expand", expanded, size);
      ++step;
      conv_weights(name + ".dw", expanded, 1, 3, true);
      read(e);
      const size_t d = activation(name + ".dw", expanded, out_size);
      ++step;
      conv_weights(name + ".project", out_c, expanded, 1, false);
      read(d);
      if (!first) read(x);  // the residual, added by the projection
      x = activation(name + ".project", out_c, out_size);
      ++step;
      channels = out_c;
      size = out_size;
    }
  }
  read(x);  // the head
  for (size_t w : weights) problem.tokens[w].live = {0, step + 1};
  return problem;
}

namespace {

struct Tile {
  int64_t x0, y0, x1, y1;
};

// Cuts `r` into about n tiles, across or down at a random whole texel.
void Cut(std::mt19937_64& rng, const Tile& r, int32_t n, std::vector<Tile>& out) {
  const bool can_cut_x = r.x1 - r.x0 >= 2;
  const bool can_cut_y = r.y1 - r.y0 >= 2;
  if (n <= 1 || (!can_cut_x && !can_cut_y)) {
    out.push_back(r);
    return;
  }
  const bool cut_x = can_cut_x && (!can_cut_y || rng() % 2 == 0);
  const int64_t lo = cut_x ? r.x0 : r.y0;
  const int64_t hi = cut_x ? r.x1 : r.y1;
  const int64_t at = lo + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo - 1));
  const auto k = static_cast<int32_t>(
      std::clamp<int64_t>(std::llround(static_cast<double>(n) * static_cast<double>(at - lo) /
                                       static_cast<double>(hi - lo)),
                          1, n - 1));
  if (cut_x) {
    Cut(rng, {r.x0, r.y0, at, r.y1}, k, out);
    Cut(rng, {at, r.y0, r.x1, r.y1}, n - k, out);
  } else {
    Cut(rng, {r.x0, r.y0, r.x1, at}, k, out);
    Cut(rng, {r.x0, at, r.x1, r.y1}, n - k, out);
  }
}

}  // namespace

TiledTextureInstance TiledTextureProblem(const TiledTextureOptions& options) {
  std::mt19937_64 rng(options.seed);
  TiledTextureInstance out;
  out.problem.kinds = {{.name = "texture"}};
  out.witness.algorithm = "witness";
  out.witness.images = {
      {.name = "texture0", .width = options.width, .height = options.height, .kind = 0}};
  constexpr int64_t kPhaseSteps = 4;  // a phase's middle step is its third
  for (int32_t p = 0; p < options.phases; ++p) {
    std::vector<Tile> tiles;
    Cut(rng, {0, 0, options.width, options.height}, options.tiles_per_phase, tiles);
    std::shuffle(tiles.begin(), tiles.end(), rng);
    const int64_t start = p * kPhaseSteps;
    for (const Tile& t : tiles) {
      const int64_t first = start + static_cast<int64_t>(rng() % 3);
      const int64_t last = start + 3 + static_cast<int64_t>(rng() % 2);
      out.problem.tokens.push_back(
          {.name = "p" + std::to_string(p) + "t" + std::to_string(out.problem.tokens.size()),
           .width = t.x1 - t.x0,
           .height = t.y1 - t.y0,
           .live = {first, last},
           .kind = 0});
      out.witness.positions.push_back({.image = 0, .x = t.x0, .y = t.y0});
    }
  }
  return out;
}

}  // namespace tessel::memory
