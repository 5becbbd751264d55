#include "memory/texture_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <random>

namespace tessel::memory {

namespace {

// An image while it is being packed: the tokens it holds so far.
struct OpenImage {
  int32_t kind = 0;
  int64_t width = 0, height = 0;
  std::vector<TokenIndex> tokens;
};

// Images and the positions of the tokens packed so far (by token index of
// the whole problem; the others' stay unset).
struct Packing {
  std::vector<OpenImage> images;
  std::vector<TexturePosition> positions;

  explicit Packing(size_t num_tokens) : positions(num_tokens) {}
  int64_t area() const {
    int64_t total = 0;
    for (const OpenImage& image : images) total += image.width * image.height;
    return total;
  }
  // Less area, or as much in fewer images.
  bool BetterThan(const Packing& o) const {
    return area() != o.area() ? area() < o.area() : images.size() < o.images.size();
  }
};

using TokenOrder = bool (*)(const TextureToken&, const TextureToken&);

std::vector<TokenIndex> Sorted(const TextureProblem& problem, std::vector<TokenIndex> tokens,
                               TokenOrder before) {
  std::stable_sort(tokens.begin(), tokens.end(), [&](TokenIndex a, TokenIndex b) {
    return before(problem.tokens[static_cast<size_t>(a)], problem.tokens[static_cast<size_t>(b)]);
  });
  return tokens;
}

// Whether token `t` and a token of `image` are live at once.
bool Busy(const TextureProblem& problem, const OpenImage& image, const TextureToken& t) {
  return std::any_of(image.tokens.begin(), image.tokens.end(), [&](TokenIndex j) {
    return problem.tokens[static_cast<size_t>(j)].live.Overlaps(t.live);
  });
}

// Whether `image` holds a token that must lie apart from `t`.
bool HoldsApart(const OpenImage& image, const TextureToken& t) {
  return std::any_of(t.apart.begin(), t.apart.end(), [&](TokenIndex j) {
    return std::find(image.tokens.begin(), image.tokens.end(), j) != image.tokens.end();
  });
}

void Put(Packing& packing, TokenIndex t, const TextureToken& token, ImageIndex image, int64_t x,
         int64_t y) {
  if (image < 0) {
    image = static_cast<ImageIndex>(packing.images.size());
    packing.images.push_back({.kind = token.kind});
  }
  OpenImage& img = packing.images[static_cast<size_t>(image)];
  img.width = std::max(img.width, x + token.width);
  img.height = std::max(img.height, y + token.height);
  img.tokens.push_back(t);
  packing.positions[static_cast<size_t>(t)] = {.image = image, .x = x, .y = y};
}

// The RFC's rule: each token alone at the origin of an idle image of its
// kind (one that no token live at once with it holds).
void PackWholeImages(const TextureProblem& problem, const std::vector<TokenIndex>& order,
                     Packing& packing) {
  for (TokenIndex t : order) {
    const TextureToken& token = problem.tokens[static_cast<size_t>(t)];
    ImageIndex best = -1;
    int64_t best_added = 0, best_waste = 0;
    for (size_t i = 0; i < packing.images.size(); ++i) {
      const OpenImage& img = packing.images[i];
      if (img.kind != token.kind || Busy(problem, img, token) || HoldsApart(img, token)) continue;
      const int64_t grown = std::max(img.width, token.width) * std::max(img.height, token.height);
      const int64_t added = grown - img.width * img.height;
      const int64_t waste = grown - token.area();
      // Least growth first; among images it fits as they are (and on ties),
      // least waste.
      if (best < 0 || added < best_added || (added == best_added && waste < best_waste)) {
        best = static_cast<ImageIndex>(i);
        best_added = added;
        best_waste = waste;
      }
    }
    if (best >= 0 && best_added > token.area()) best = -1;
    Put(packing, t, token, best, 0, 0);
  }
}

// Tokens that all live at once, stacked by width: each width's tokens one
// above the other in images as high as the limit allows. No texel is
// wasted, so the area is the bound.
void PackStacks(const TextureProblem& problem, std::vector<TokenIndex> order, Packing& packing) {
  std::stable_sort(order.begin(), order.end(), [&](TokenIndex a, TokenIndex b) {
    return problem.tokens[static_cast<size_t>(a)].width >
           problem.tokens[static_cast<size_t>(b)].width;
  });
  ImageIndex image = -1;
  for (TokenIndex t : order) {
    const TextureToken& token = problem.tokens[static_cast<size_t>(t)];
    if (image >= 0) {
      const OpenImage& img = packing.images[static_cast<size_t>(image)];
      if (img.width != token.width || img.height + token.height > problem.max_height ||
          HoldsApart(img, token)) {
        image = -1;
      }
    }
    const int64_t y = image < 0 ? 0 : packing.images[static_cast<size_t>(image)].height;
    Put(packing, t, token, image, 0, y);
    image = packing.positions[static_cast<size_t>(t)].image;
  }
}

// A corner of an image where a token may go, and what the image grows by.
struct Corner {
  int64_t added, y, x;
  bool operator<(const Corner& o) const {
    return added != o.added ? added < o.added : y != o.y ? y < o.y : x < o.x;
  }
};

// Several tokens per image, live at once in disjoint regions. A token that
// overlaps none of the regions live with it can slide up and left until it
// touches one of them or the image's edge, without growing the image; so
// some best corner has x at 0 or at the right edge of such a region, and y
// at 0 or at the bottom edge of one: those are the corners tried. With
// `one_image`, a new image only when no image has room within the limits.
void PackRegions(const TextureProblem& problem, const std::vector<TokenIndex>& order,
                 bool one_image, Packing& packing) {
  struct Rect {
    int64_t x0, y0, x1, y1;
  };
  std::vector<Rect> obstacles;
  std::vector<int64_t> xs, ys;
  std::vector<Corner> corners;
  for (TokenIndex t : order) {
    const TextureToken& token = problem.tokens[static_cast<size_t>(t)];
    // A new image costs the token's own area; an image that would grow by
    // as much is preferred (fewer images), the earliest on a tie.
    ImageIndex best = -1;
    Corner best_corner{.added = one_image ? INT64_MAX : token.area(), .y = 0, .x = 0};
    for (size_t i = 0; i < packing.images.size(); ++i) {
      const OpenImage& img = packing.images[i];
      if (img.kind != token.kind || HoldsApart(img, token)) continue;
      obstacles.clear();
      xs.assign(1, 0);
      ys.assign(1, 0);
      for (TokenIndex j : img.tokens) {
        const TextureToken& other = problem.tokens[static_cast<size_t>(j)];
        if (!other.live.Overlaps(token.live)) continue;
        const TexturePosition& p = packing.positions[static_cast<size_t>(j)];
        obstacles.push_back({p.x, p.y, p.x + other.width, p.y + other.height});
        xs.push_back(p.x + other.width);
        ys.push_back(p.y + other.height);
      }
      corners.clear();
      for (int64_t x : xs) {
        if (x + token.width > problem.max_width) continue;
        for (int64_t y : ys) {
          if (y + token.height > problem.max_height) continue;
          const int64_t grown =
              std::max(img.width, x + token.width) * std::max(img.height, y + token.height);
          corners.push_back({.added = grown - img.width * img.height, .y = y, .x = x});
        }
      }
      std::sort(corners.begin(), corners.end());
      corners.erase(
          std::unique(corners.begin(), corners.end(),
                      [](const Corner& a, const Corner& b) { return a.x == b.x && a.y == b.y; }),
          corners.end());
      for (const Corner& c : corners) {
        if (best < 0 ? c.added > best_corner.added : c.added >= best_corner.added) break;
        const bool free = std::none_of(obstacles.begin(), obstacles.end(), [&](const Rect& r) {
          return c.x < r.x1 && r.x0 < c.x + token.width && c.y < r.y1 && r.y0 < c.y + token.height;
        });
        if (free) {
          best = static_cast<ImageIndex>(i);
          best_corner = c;
          break;
        }
      }
    }
    Put(packing, t, token, best, best < 0 ? 0 : best_corner.x, best < 0 ? 0 : best_corner.y);
  }
}

// The plan of a packing: images grouped by kind (in order of creation
// within it) and named after it.
TexturePlan ToPlan(const TextureProblem& problem, const Packing& packing, std::string algorithm) {
  TexturePlan plan;
  plan.algorithm = std::move(algorithm);
  std::vector<size_t> order(packing.images.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return packing.images[a].kind < packing.images[b].kind;
  });
  std::vector<ImageIndex> renumbered(packing.images.size());
  std::vector<int> per_kind(problem.kinds.size(), 0);
  for (size_t i : order) {
    const OpenImage& img = packing.images[i];
    renumbered[i] = static_cast<ImageIndex>(plan.images.size());
    plan.images.push_back({.name = problem.kinds[static_cast<size_t>(img.kind)].name +
                                   std::to_string(per_kind[static_cast<size_t>(img.kind)]++),
                           .width = img.width,
                           .height = img.height,
                           .kind = img.kind});
  }
  plan.positions = packing.positions;
  for (TexturePosition& p : plan.positions) p.image = renumbered[static_cast<size_t>(p.image)];
  return plan;
}

bool BySchedule(const TextureToken& a, const TextureToken& b) {
  return a.live.first_use < b.live.first_use;
}
bool ByArea(const TextureToken& a, const TextureToken& b) {
  return a.area() != b.area() ? a.area() > b.area() : a.live.first_use < b.live.first_use;
}
bool ByHeight(const TextureToken& a, const TextureToken& b) {
  return a.height != b.height ? a.height > b.height : a.width > b.width;
}
bool ByWidth(const TextureToken& a, const TextureToken& b) {
  return a.width != b.width ? a.width > b.width : a.height > b.height;
}

struct KindPacking {
  Packing packing;
  std::string algorithm;
};

// Whether every two of `tokens` are live at once (intervals that meet
// pairwise share a moment).
bool AllLiveAtOnce(const TextureProblem& problem, const std::vector<TokenIndex>& tokens) {
  int64_t latest_first = INT64_MIN, earliest_last = INT64_MAX;
  for (TokenIndex t : tokens) {
    const Lifespan& live = problem.tokens[static_cast<size_t>(t)].live;
    if (live.empty()) return tokens.size() == 1;
    latest_first = std::max(latest_first, live.first_use);
    earliest_last = std::min(earliest_last, live.last_use);
  }
  return latest_first < earliest_last;
}

// The tokens of one kind, by options.strategy (texture_plan.h).
KindPacking PlanKind(const TextureProblem& problem, const std::vector<TokenIndex>& tokens,
                     int64_t bound, const TexturePlannerOptions& options) {
  KindPacking best{.packing = Packing(problem.tokens.size()), .algorithm = "rfc"};
  PackWholeImages(problem, Sorted(problem, tokens, BySchedule), best.packing);
  if (options.strategy == TextureStrategy::kRfc) return best;
  if (AllLiveAtOnce(problem, tokens)) {
    KindPacking stacks{.packing = Packing(problem.tokens.size()), .algorithm = "stacked by width"};
    PackStacks(problem, tokens, stacks.packing);
    return stacks;
  }
  struct Start {
    std::vector<TokenIndex> order;
    bool one_image = false;
  };
  auto regions = [&](const Start& s) {
    Packing packing(problem.tokens.size());
    PackRegions(problem, s.order, s.one_image, packing);
    return packing;
  };
  const struct {
    const char* name;
    TokenOrder order;
  } orders[] = {{"schedule order", BySchedule},
                {"largest first", ByArea},
                {"tallest first", ByHeight},
                {"widest first", ByWidth}};
  // The best region packing, which the swaps start from.
  std::optional<Start> start;
  std::optional<Packing> start_packing;
  std::string start_name;
  for (bool one_image : {false, true}) {
    for (const auto& o : orders) {
      Start s{.order = Sorted(problem, tokens, o.order), .one_image = one_image};
      Packing packing = regions(s);
      if (!start_packing || packing.BetterThan(*start_packing)) {
        start = std::move(s);
        start_packing = std::move(packing);
        start_name = std::string(one_image ? "regions in one image, " : "regions, ") + o.name;
      }
    }
  }
  // Swaps of two tokens, each kept when the area does not grow (sideways
  // moves let the order drift across plateaus).
  std::mt19937_64 rng(options.seed);
  Start current = *start;
  int64_t current_area = start_packing->area();
  bool climbed = false;
  for (int32_t step = 0; step < options.climb_steps && start_packing->area() > bound; ++step) {
    Start next = current;
    std::swap(next.order[rng() % next.order.size()], next.order[rng() % next.order.size()]);
    Packing packing = regions(next);
    if (packing.area() > current_area) continue;
    current_area = packing.area();
    current = std::move(next);
    if (packing.BetterThan(*start_packing)) {
      start_packing = std::move(packing);
      climbed = true;
    }
  }
  if (start_packing->BetterThan(best.packing)) {
    best = {.packing = std::move(*start_packing),
            .algorithm = start_name + (climbed ? ", improved by swaps" : "")};
  }
  return best;
}

// What an image holding `members` (tokens of one kind) takes at least:
// its widest token's width times its tallest token's height; the area of
// its tokens live at one moment; and for two tokens live at once, which
// lie side by side (the image as wide as both) or one above the other (as
// tall as both), since two disjoint rectangles are apart along x or y.
int64_t ImageAreaBound(const TextureProblem& problem, const std::vector<TokenIndex>& members) {
  int64_t w = 0, h = 0;
  for (TokenIndex t : members) {
    w = std::max(w, problem.tokens[static_cast<size_t>(t)].width);
    h = std::max(h, problem.tokens[static_cast<size_t>(t)].height);
  }
  int64_t bound = w * h;
  for (size_t i = 0; i < members.size(); ++i) {
    const TextureToken& a = problem.tokens[static_cast<size_t>(members[i])];
    if (a.live.empty()) continue;
    int64_t live = 0;  // at a's first moment
    for (size_t j = 0; j < members.size(); ++j) {
      const TextureToken& b = problem.tokens[static_cast<size_t>(members[j])];
      if (!b.live.empty() && b.live.first_use <= a.live.first_use &&
          a.live.first_use < b.live.last_use) {
        live += b.area();
      }
      if (j > i && a.live.Overlaps(b.live)) {
        const int64_t beside = std::max(w, a.width + b.width) * h;
        const int64_t above = w * std::max(h, a.height + b.height);
        bound = std::max(bound, std::min(beside, above));
      }
    }
    bound = std::max(bound, live);
  }
  return bound;
}

// The least, over every way to split `tokens` into images (tokens that
// must lie apart in different ones), of the images' ImageAreaBound: what
// any plan's images holding these tokens take at least. Branch and bound,
// largest tokens first; `tokens` is a handful.
int64_t SubsetAreaBound(const TextureProblem& problem, std::vector<TokenIndex> tokens) {
  std::sort(tokens.begin(), tokens.end(), [&](TokenIndex a, TokenIndex b) {
    return problem.tokens[static_cast<size_t>(a)].area() >
           problem.tokens[static_cast<size_t>(b)].area();
  });
  // Each alone: a split that is always allowed.
  int64_t best = 0;
  for (TokenIndex t : tokens) best += problem.tokens[static_cast<size_t>(t)].area();
  std::vector<std::vector<TokenIndex>> groups;
  std::vector<int64_t> group_bound;
  auto search = [&](auto& self, size_t next, int64_t sum) -> void {
    if (sum >= best) return;
    if (next == tokens.size()) {
      best = sum;
      return;
    }
    const TokenIndex t = tokens[next];
    const TextureToken& token = problem.tokens[static_cast<size_t>(t)];
    for (size_t g = 0; g < groups.size(); ++g) {
      const bool apart = std::any_of(groups[g].begin(), groups[g].end(), [&](TokenIndex j) {
        return std::find(token.apart.begin(), token.apart.end(), j) != token.apart.end();
      });
      if (apart) continue;
      groups[g].push_back(t);
      const int64_t before = group_bound[g];
      group_bound[g] = ImageAreaBound(problem, groups[g]);
      self(self, next + 1, sum - before + group_bound[g]);
      group_bound[g] = before;
      groups[g].pop_back();
    }
    groups.push_back({t});
    group_bound.push_back(token.area());
    self(self, next + 1, sum + token.area());
    groups.pop_back();
    group_bound.pop_back();
  };
  search(search, 0, 0);
  return best;
}

// The most tokens SubsetAreaBound splits (Bell(7) = 877 splits at most).
constexpr size_t kBoundSubset = 7;

// The kind's SubsetAreaBound over subsets of a few tokens around each
// moment some tokens start (the largest of them when more than
// kBoundSubset are live at once):
//   - the tokens live then and at the next moments, while they are at most
//     kBoundSubset;
//   - the tokens live then, and the largest tokens of the kind;
//   - the tokens live then, and the largest token of each width.
// Any subset gives a valid bound; these are the ones where images of
// different shapes, or a kernel's input and output, cost area.
int64_t WindowAreaBound(const TextureProblem& problem, const std::vector<TokenIndex>& tokens) {
  std::vector<int64_t> moments;
  for (TokenIndex t : tokens) {
    const Lifespan& live = problem.tokens[static_cast<size_t>(t)].live;
    if (!live.empty()) moments.push_back(live.first_use);
  }
  std::sort(moments.begin(), moments.end());
  moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
  auto live_at = [&](int64_t m) {
    std::vector<TokenIndex> live;
    for (TokenIndex t : tokens) {
      const Lifespan& l = problem.tokens[static_cast<size_t>(t)].live;
      if (!l.empty() && l.first_use <= m && m < l.last_use) live.push_back(t);
    }
    std::sort(live.begin(), live.end(), [&](TokenIndex a, TokenIndex b) {
      return problem.tokens[static_cast<size_t>(a)].area() >
             problem.tokens[static_cast<size_t>(b)].area();
    });
    return live;
  };
  std::vector<TokenIndex> largest = tokens;
  std::sort(largest.begin(), largest.end(), [&](TokenIndex a, TokenIndex b) {
    return problem.tokens[static_cast<size_t>(a)].area() >
           problem.tokens[static_cast<size_t>(b)].area();
  });
  std::vector<TokenIndex> widths;  // the largest of each width, largest first
  for (TokenIndex t : largest) {
    const int64_t w = problem.tokens[static_cast<size_t>(t)].width;
    if (std::none_of(widths.begin(), widths.end(), [&](TokenIndex o) {
          return problem.tokens[static_cast<size_t>(o)].width == w;
        })) {
      widths.push_back(t);
    }
  }
  int64_t bound = 0;
  std::vector<std::vector<TokenIndex>> seen;
  auto consider = [&](std::vector<TokenIndex> subset) {
    std::sort(subset.begin(), subset.end());
    if (subset.size() < 2 || std::find(seen.begin(), seen.end(), subset) != seen.end()) return;
    bound = std::max(bound, SubsetAreaBound(problem, subset));
    seen.push_back(std::move(subset));
  };
  auto joined = [&](std::vector<TokenIndex> subset, const std::vector<TokenIndex>& more) {
    for (TokenIndex t : more) {
      if (subset.size() >= kBoundSubset) break;
      if (std::find(subset.begin(), subset.end(), t) == subset.end()) subset.push_back(t);
    }
    return subset;
  };
  for (size_t i = 0; i < moments.size(); ++i) {
    std::vector<TokenIndex> live = live_at(moments[i]);
    if (live.size() > kBoundSubset) live.resize(kBoundSubset);
    std::vector<TokenIndex> window = live;
    for (size_t j = i + 1; j < moments.size(); ++j) {
      std::vector<TokenIndex> wider = window;
      for (TokenIndex t : live_at(moments[j])) {
        if (std::find(wider.begin(), wider.end(), t) == wider.end()) wider.push_back(t);
      }
      if (wider.size() > kBoundSubset) break;
      window = std::move(wider);
    }
    consider(std::move(window));
    consider(joined(live, largest));
    consider(joined(live, widths));
  }
  return bound;
}

std::string Describe(const TextureProblem& problem, const TexturePlan& plan, size_t t) {
  const TextureToken& token = problem.tokens[t];
  const TexturePosition& p = plan.positions[t];
  return "'" + token.name + "' (" + std::to_string(token.width) + "x" +
         std::to_string(token.height) + " at (" + std::to_string(p.x) + ", " + std::to_string(p.y) +
         "), live [" + std::to_string(token.live.first_use) + ", " +
         std::to_string(token.live.last_use) + "))";
}

}  // namespace

int64_t TexturePlan::total_area() const {
  int64_t total = 0;
  for (const TextureImage& image : images) total += image.area();
  return total;
}

Status ValidateTextureProblem(const TextureProblem& problem) {
  constexpr int64_t kMax = TextureProblem::kMaxExtent;
  if (problem.max_width < 1 || problem.max_width > kMax || problem.max_height < 1 ||
      problem.max_height > kMax) {
    return InvalidArgument("texture limits " + std::to_string(problem.max_width) + "x" +
                           std::to_string(problem.max_height) + " are outside [1, " +
                           std::to_string(kMax) + "]");
  }
  if (problem.tokens.size() > static_cast<size_t>(INT32_MAX - 1)) {
    return InvalidArgument("too many textures to plan");
  }
  for (const TextureToken& t : problem.tokens) {
    const std::string who = "texture '" + t.name + "'";
    if (t.kind < 0 || static_cast<size_t>(t.kind) >= problem.kinds.size()) {
      return InvalidArgument(who + " has kind " + std::to_string(t.kind) + "; there are " +
                             std::to_string(problem.kinds.size()));
    }
    if (t.width < 1 || t.height < 1 || t.width > problem.max_width ||
        t.height > problem.max_height) {
      return InvalidArgument(who + " is " + std::to_string(t.width) + "x" +
                             std::to_string(t.height) + " texels; images are 1x1 to " +
                             std::to_string(problem.max_width) + "x" +
                             std::to_string(problem.max_height));
    }
  }
  for (size_t t = 0; t < problem.tokens.size(); ++t) {
    for (TokenIndex j : problem.tokens[t].apart) {
      const bool in_range =
          j >= 0 && static_cast<size_t>(j) < problem.tokens.size() && static_cast<size_t>(j) != t;
      const auto& back =
          in_range ? problem.tokens[static_cast<size_t>(j)].apart : std::vector<TokenIndex>{};
      if (!in_range ||
          std::find(back.begin(), back.end(), static_cast<TokenIndex>(t)) == back.end()) {
        return InvalidArgument("texture '" + problem.tokens[t].name + "' must lie apart from " +
                               std::to_string(j) +
                               ", which is not another texture listing it back");
      }
    }
  }
  return Status::Ok();
}

StatusOr<TexturePlan> PlanTextures(const TextureProblem& problem,
                                   const TexturePlannerOptions& options) {
  TESSEL_RETURN_IF_ERROR(ValidateTextureProblem(problem));
  const std::vector<int64_t> bounds = TextureLowerBounds(problem);
  Packing all(problem.tokens.size());
  std::string algorithm;
  for (size_t k = 0; k < problem.kinds.size(); ++k) {
    std::vector<TokenIndex> tokens;
    for (size_t t = 0; t < problem.tokens.size(); ++t) {
      if (problem.tokens[t].kind == static_cast<int32_t>(k))
        tokens.push_back(static_cast<TokenIndex>(t));
    }
    if (tokens.empty()) continue;
    KindPacking best = PlanKind(problem, tokens, bounds[k], options);
    if (options.strategy != TextureStrategy::kRfc) {
      algorithm += (algorithm.empty() ? "" : "; ") + problem.kinds[k].name + ": " + best.algorithm;
    }
    const auto first_image = static_cast<ImageIndex>(all.images.size());
    for (OpenImage& image : best.packing.images) all.images.push_back(std::move(image));
    for (TokenIndex t : tokens) {
      TexturePosition p = best.packing.positions[static_cast<size_t>(t)];
      p.image += first_image;
      all.positions[static_cast<size_t>(t)] = p;
    }
  }
  return ToPlan(problem, all, options.strategy == TextureStrategy::kRfc ? "rfc" : algorithm);
}

TexturePlan PlaceTexturesUnshared(const TextureProblem& problem) {
  Packing packing(problem.tokens.size());
  for (size_t t = 0; t < problem.tokens.size(); ++t) {
    Put(packing, static_cast<TokenIndex>(t), problem.tokens[t], -1, 0, 0);
  }
  return ToPlan(problem, packing, "none");
}

std::vector<int64_t> TextureLowerBounds(const TextureProblem& problem) {
  std::vector<int64_t> bounds(problem.kinds.size(), 0);
  // Per kind: +area at first_use, -area at last_use; at equal times ends
  // come first, since half-open lifespans that only touch do not conflict.
  std::vector<std::map<int64_t, int64_t>> deltas(problem.kinds.size());
  for (const TextureToken& t : problem.tokens) {
    const auto k = static_cast<size_t>(t.kind);
    bounds[k] = std::max(bounds[k], t.area());
    if (t.live.empty()) continue;
    deltas[k][t.live.first_use] += t.area();
    deltas[k][t.live.last_use] -= t.area();
  }
  std::vector<std::vector<TokenIndex>> by_kind(problem.kinds.size());
  for (size_t t = 0; t < problem.tokens.size(); ++t) {
    by_kind[static_cast<size_t>(problem.tokens[t].kind)].push_back(static_cast<TokenIndex>(t));
  }
  for (size_t k = 0; k < deltas.size(); ++k) {
    int64_t live = 0;
    for (const auto& [time, delta] : deltas[k]) {
      live += delta;
      bounds[k] = std::max(bounds[k], live);
    }
    bounds[k] = std::max(bounds[k], WindowAreaBound(problem, by_kind[k]));
  }
  return bounds;
}

int64_t TextureLowerBound(const TextureProblem& problem) {
  const std::vector<int64_t> bounds = TextureLowerBounds(problem);
  return std::accumulate(bounds.begin(), bounds.end(), int64_t{0});
}

Status VerifyTexturePlan(const TextureProblem& problem, const TexturePlan& plan) {
  const std::string where = "texture plan '" + plan.algorithm + "': ";
  if (plan.positions.size() != problem.tokens.size()) {
    return Internal(where + std::to_string(plan.positions.size()) + " positions for " +
                    std::to_string(problem.tokens.size()) + " textures");
  }
  // What each image's tokens need: the far corner of their regions.
  std::vector<int64_t> need_width(plan.images.size(), 0), need_height(plan.images.size(), 0);
  for (size_t t = 0; t < problem.tokens.size(); ++t) {
    const TextureToken& token = problem.tokens[t];
    const TexturePosition& p = plan.positions[t];
    const std::string who = where + "texture " + Describe(problem, plan, t);
    if (p.image < 0 || static_cast<size_t>(p.image) >= plan.images.size()) {
      return Internal(who + " is in image " + std::to_string(p.image) + "; there are " +
                      std::to_string(plan.images.size()));
    }
    const TextureImage& image = plan.images[static_cast<size_t>(p.image)];
    if (image.kind != token.kind) {
      return Internal(who + " of kind " + std::to_string(token.kind) + " is in image '" +
                      image.name + "' of kind " + std::to_string(image.kind));
    }
    if (p.x < 0 || p.y < 0 || p.x + token.width > image.width ||
        p.y + token.height > image.height) {
      return Internal(who + " reaches outside image '" + image.name + "' (" +
                      std::to_string(image.width) + "x" + std::to_string(image.height) + ")");
    }
    for (TokenIndex j : token.apart) {
      if (j >= 0 && static_cast<size_t>(j) < plan.positions.size() &&
          plan.positions[static_cast<size_t>(j)].image == p.image) {
        return Internal(who + " shares image '" + image.name + "' with texture " +
                        Describe(problem, plan, static_cast<size_t>(j)) +
                        ", which must lie apart (one kernel reads one and writes the other)");
      }
    }
    need_width[static_cast<size_t>(p.image)] =
        std::max(need_width[static_cast<size_t>(p.image)], p.x + token.width);
    need_height[static_cast<size_t>(p.image)] =
        std::max(need_height[static_cast<size_t>(p.image)], p.y + token.height);
  }
  for (size_t i = 0; i < plan.images.size(); ++i) {
    const TextureImage& image = plan.images[i];
    const std::string extent = std::to_string(image.width) + "x" + std::to_string(image.height);
    if (image.width > problem.max_width || image.height > problem.max_height) {
      return Internal(where + "image '" + image.name + "' is " + extent + ", over the limits " +
                      std::to_string(problem.max_width) + "x" + std::to_string(problem.max_height));
    }
    if (image.width != need_width[i] || image.height != need_height[i]) {
      return Internal(where + "image '" + image.name + "' is " + extent + "; its textures need " +
                      std::to_string(need_width[i]) + "x" + std::to_string(need_height[i]));
    }
  }
  // Tokens by start time; `active` holds those started and not yet ended.
  std::vector<size_t> order;
  for (size_t t = 0; t < problem.tokens.size(); ++t) {
    if (!problem.tokens[t].live.empty()) order.push_back(t);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return problem.tokens[a].live.first_use < problem.tokens[b].live.first_use;
  });
  std::vector<size_t> active;
  for (size_t b : order) {
    const TextureToken& tb = problem.tokens[b];
    const TexturePosition& pb = plan.positions[b];
    std::erase_if(active,
                  [&](size_t a) { return problem.tokens[a].live.last_use <= tb.live.first_use; });
    for (size_t a : active) {
      const TextureToken& ta = problem.tokens[a];
      const TexturePosition& pa = plan.positions[a];
      if (pa.image == pb.image && pa.x < pb.x + tb.width && pb.x < pa.x + ta.width &&
          pa.y < pb.y + tb.height && pb.y < pa.y + ta.height) {
        return Internal(where + "textures " + Describe(problem, plan, a) + " and " +
                        Describe(problem, plan, b) + " share texels of image '" +
                        plan.images[static_cast<size_t>(pa.image)].name + "' while both live");
      }
    }
    active.push_back(b);
  }
  return Status::Ok();
}

}  // namespace tessel::memory
