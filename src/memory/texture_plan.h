// Planning 2D images (textures), independent of any graph: the 2D
// counterpart of problem.h and planner.h, after the storage-scope memory
// planning of TVM's texture RFC (../shared/seeds/texture-memory-rfc.txt).
//
//   TextureProblem { kinds, tokens: width x height texels, live [first, last) }
//        │   PlanTextures gives every token an image and a corner (x, y)
//        ▼
//   TexturePlan { images: width x height per image, positions: (image, x, y) }
//
//          x ──►
//        y ┌─────────────┬──────┐   image "texture0" (112 x 5376)
//        │ │ token a     │      │   a and b live at once: disjoint regions;
//        ▼ │ [0, 3)      │ b    │   c lives after a and reuses a's texels
//          ├─────────────┤[1, 5)│
//          │             │      │
//          └─────────────┴──────┘
//
// The objective is the total area of the images (texels, each four floats):
// images are allocated once, for the whole run. Tokens share an image only
// with tokens of the same kind (an image's texel format and access: the
// activations' images are written by kernels, the weights' are read-only),
// and two tokens whose lifespans overlap never share a texel.
//
//   StatusOr<TexturePlan> plan = PlanTextures(problem);
//   int64_t bound = TextureLowerBound(problem);  // plan->total_area() >= bound
//   Status ok = VerifyTexturePlan(problem, *plan);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "memory/problem.h"

namespace tessel::memory {

using TokenIndex = int32_t;
using ImageIndex = int32_t;

// A texel is four float32 lanes (RGBA): what an image's area costs in bytes.
inline constexpr int64_t kTexelBytes = 16;

// What tokens of one kind have in common; images are named after it
// ("texture0", "weight3").
struct TextureKind {
  std::string name;
  // Holds constants only: written once, before the run.
  bool read_only = false;
};

struct TextureToken {
  std::string name;
  int64_t width = 0;   // texels, >= 1
  int64_t height = 0;  // texels, >= 1
  // An empty lifespan conflicts with nothing (as in problem.h).
  Lifespan live;
  int32_t kind = 0;  // index in TextureProblem::kinds
  // Tokens that may not lie in the same image as this one, wherever and
  // whenever: one kernel reads one and writes the other, and OpenCL 1.2
  // leaves an image read-only and write-only in one kernel undefined.
  // Symmetric: each side lists the other.
  std::vector<TokenIndex> apart;

  int64_t area() const { return width * height; }
};

struct TextureProblem {
  std::vector<TextureKind> kinds;
  std::vector<TextureToken> tokens;
  // No image may be wider or taller (the device's image2d limits); every
  // token must fit on its own. The default is far beyond any device and
  // keeps every area exact in 64 bits; larger limits are refused.
  static constexpr int64_t kMaxExtent = int64_t{1} << 24;
  int64_t max_width = kMaxExtent;
  int64_t max_height = kMaxExtent;
};

struct TextureImage {
  std::string name;    // the kind's name and the image's number among its kind
  int64_t width = 0;   // texels
  int64_t height = 0;  // texels
  int32_t kind = 0;

  int64_t area() const { return width * height; }
};

// Where a token lies: the region [x, x + width) x [y, y + height) of an image.
struct TexturePosition {
  ImageIndex image = -1;
  int64_t x = 0;
  int64_t y = 0;
};

struct TexturePlan {
  // How the plan was made, for reports: "rfc", "regions, largest first", ...
  std::string algorithm;
  // By kind, then in order of creation; each exactly as large as the
  // regions of its tokens need.
  std::vector<TextureImage> images;
  std::vector<TexturePosition> positions;  // by token

  int64_t total_area() const;
};

enum class TextureStrategy : uint8_t {
  // The RFC's TokenAllocator2D: tokens in schedule order (by first_use),
  // each alone at the origin of an image. Among the idle images of its kind
  // (no token of theirs live at once with it), one it fits without growing,
  // the one wasting least area; else the one that grows by the least area;
  // else (none idle, or growing would add more than the token's own area,
  // where TVM's implementation also refuses) a new image.
  kRfc,
  // Each kind planned on its own, for the least area, then the fewest
  // images:
  //   - a kind whose tokens all live at once (weights) gets the bound
  //     exactly: tokens of one width stacked in one image, as high as the
  //     limit allows;
  //   - any other kind takes the smallest of kRfc and region packings:
  //     several tokens in one image at different corners (x, y), which the
  //     image kernels take as arguments. Tokens go in some order (schedule,
  //     largest area, tallest or widest first) each where the images grow
  //     least, at the lowest corner (y, then x) that overlaps no token live
  //     at once with it; a new image when every image would grow by more
  //     than the token's area, or (a second packing of each order) only
  //     when no image has room within the limits. The best packing's order
  //     is then improved by `climb_steps` random swaps of two tokens, each
  //     kept when the area does not grow, until the kind's bound is met.
  // Never worse than kRfc.
  kBest,
};

struct TexturePlannerOptions {
  TextureStrategy strategy = TextureStrategy::kBest;
  // kBest's search budget: a number of repackings, not seconds, so that a
  // compile is reproducible. On CNN-shaped problems (CnnTextureProblem in
  // memory/testing) the bound is met within 100; the shared models take
  // 5-13 ms for all 300; 400 random tokens about 0.6 s (bench/planner).
  int32_t climb_steps = 300;
  // The swaps' random numbers.
  uint64_t seed = 1;
};

// Checks what the planners rely on: limits in [1, kMaxExtent], kinds in
// range, extents at least 1 and within the limits. Names the token.
Status ValidateTextureProblem(const TextureProblem& problem);

// Plans every token (an empty problem has an empty plan). Bad input
// (ValidateTextureProblem) is InvalidArgument; a valid problem always has a
// plan, since every token fits an image of its own. Deterministic: the same
// problem gets the same plan. The plan is not verified here: callers that
// want it checked run VerifyTexturePlan.
StatusOr<TexturePlan> PlanTextures(const TextureProblem& problem,
                                   const TexturePlannerOptions& options = {});

// Every token alone in an image of its own, at the origin: the unplanned
// baseline (planner "none"), and an upper bound of any sensible plan.
TexturePlan PlaceTexturesUnshared(const TextureProblem& problem);

// A lower bound on total_area() of every valid plan, per kind (by kind
// index); kinds never share an image, so their bounds add up
// (TextureLowerBound). Per kind, the largest of:
//   - the area live at one moment: images are allocated for the whole run
//     and the tokens live at a moment lie in disjoint regions of them (at
//     least the largest token, which needs an image even when never live);
//   - for a few tokens live around one moment (at most 7: those live then
//     and at the next moments, the largest when more are), the least area
//     of images holding them, over every split of them into images (tokens
//     that must lie apart never in one): an image is at least as wide as
//     its widest token and as tall as its tallest, holds its tokens live at
//     a moment, and two tokens live at once lie side by side (the image as
//     wide as both) or one above the other (as tall as both). Any plan's
//     images, holding these tokens and maybe more, are at least as large.
// The second is what the first misses on CNNs: MobileNetV2's 112x448,
// 112x2688 and 56x1344 activations live in turn, two at a time, and no
// arrangement of them takes less than 1.133x the most live at once (the
// 56-wide one leaves half of a 112-wide image idle, or needs one of its
// own). Weights live for the whole run, so their bound is the sum of their
// areas, which stacking meets.
std::vector<int64_t> TextureLowerBounds(const TextureProblem& problem);
int64_t TextureLowerBound(const TextureProblem& problem);

// The brute-force checker: one position per token, in an existing image of
// its kind, its region inside the image; images within the limits and
// exactly as large as their tokens' regions need; and no two tokens live at
// once sharing a texel of an image (rectangles checked pairwise, over its
// own sweep through time). The message names both tokens. A failure is
// Internal: a plan comes from tessel (CheckMemoryLayout words a file's
// plan as bad input).
Status VerifyTexturePlan(const TextureProblem& problem, const TexturePlan& plan);

}  // namespace tessel::memory
