#include "memory/report.h"

#include <algorithm>
#include <cstdio>

#include "memory/lower_bound.h"
#include "memory/pool_assignment.h"

namespace tessel::memory {

namespace {

std::string EscapeXml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Columns as wide as their widest cell, two spaces apart.
std::string FormatRows(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cells.size(); ++c) l += Pad(cells[c], width[c] + 2);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

std::string Hue(size_t i) { return std::to_string((i * 2654435761u) % 360); }

}  // namespace

std::string ShortBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < (int64_t{1} << 20)) return Fmt("%.1f KiB", static_cast<double>(bytes) / 1024);
  return Fmt("%.2f MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string FormatPlanTable(const Problem& problem, const std::vector<Plan>& plans) {
  // With a choice of pools, each pool's bounds against the earlier pools
  // (lower_bound.h: FallbackBounds) follow.
  const bool fallback = HasPoolChoice(problem);
  std::vector<std::string> header = {"algorithm", "pool",    "used", "lower bound",
                                     "ratio",     "optimal", "time"};
  if (fallback) {
    header.push_back("bound given earlier pools");
    header.push_back("bound alone");
  }
  std::vector<std::vector<std::string>> rows;
  for (const Plan& plan : plans) {
    const std::vector<int64_t> bounds = PoolLowerBounds(problem, plan.placements);
    const std::vector<FallbackBound> fallback_bounds =
        fallback ? FallbackBounds(problem, plan.placements) : std::vector<FallbackBound>{};
    std::vector<bool> used_pool(problem.pools.size(), false);
    for (const Placement& p : plan.placements) used_pool[static_cast<size_t>(p.pool)] = true;
    for (size_t p = 0; p < problem.pools.size(); ++p) {
      if (!used_pool[p]) continue;
      const int64_t used = plan.pool_used_bytes[p];
      rows.push_back(
          {plan.algorithm, problem.pools[p].name, ShortBytes(used), ShortBytes(bounds[p]),
           bounds[p] > 0 ? Fmt("%.4f", static_cast<double>(used) / static_cast<double>(bounds[p]))
                         : "-",
           plan.proven_optimal ? "yes" : "no", Fmt("%.1f ms", plan.planning_ms)});
      if (fallback) {
        rows.back().push_back(ShortBytes(fallback_bounds[p].given_earlier_bytes));
        rows.back().push_back(ShortBytes(fallback_bounds[p].alone_bytes));
      }
    }
  }
  return FormatRows(header, rows);
}

namespace {

constexpr double kWidth = 1000, kBand = 360, kMargin = 60, kGap = 40;

// The pools' bands from `top` down, moving `top` past them.
std::string PoolBands(const Problem& problem, const Plan& plan, double& top) {
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (const BufferInfo& b : problem.buffers) {
    if (b.live.empty()) continue;
    t0 = std::min(t0, b.live.first_use);
    t1 = std::max(t1, b.live.last_use);
  }
  if (t0 >= t1) {
    t0 = 0;
    t1 = 1;
  }
  const double x_scale = kWidth / static_cast<double>(t1 - t0);
  std::string svg;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const int64_t used = plan.pool_used_bytes[p];
    if (used <= 0) continue;
    const double y_scale = kBand / static_cast<double>(used);
    svg += "<text x=\"" + Fmt("%.0f", kMargin) + "\" y=\"" + Fmt("%.0f", top - 6) + "\">pool '" +
           EscapeXml(problem.pools[p].name) + "': " + ShortBytes(used) +
           " (time across, address down)</text>\n";
    svg += "<rect x=\"" + Fmt("%.0f", kMargin) + "\" y=\"" + Fmt("%.1f", top) + "\" width=\"" +
           Fmt("%.0f", kWidth) + "\" height=\"" + Fmt("%.1f", kBand) +
           "\" fill=\"#f4f4f4\" stroke=\"#888\"/>\n";
    for (size_t i = 0; i < problem.buffers.size(); ++i) {
      const BufferInfo& b = problem.buffers[i];
      const Placement& pl = plan.placements[i];
      if (static_cast<size_t>(pl.pool) != p || b.size_bytes == 0) continue;
      const int64_t first = b.live.empty() ? t0 : b.live.first_use;
      const int64_t last = b.live.empty() ? t1 : b.live.last_use;
      const double x = kMargin + static_cast<double>(first - t0) * x_scale;
      const double w = std::max(0.5, static_cast<double>(last - first) * x_scale);
      const double y = top + static_cast<double>(pl.offset_bytes) * y_scale;
      const double h = std::max(0.5, static_cast<double>(b.size_bytes) * y_scale);
      svg += "<rect x=\"" + Fmt("%.2f", x) + "\" y=\"" + Fmt("%.2f", y) + "\" width=\"" +
             Fmt("%.2f", w) + "\" height=\"" + Fmt("%.2f", h) + "\" fill=\"hsl(" + Hue(i) +
             ",60%,65%)\" stroke=\"#333\" stroke-width=\"0.3\"><title>" + EscapeXml(b.name) + ": " +
             std::to_string(b.size_bytes) + " bytes at offset " + std::to_string(pl.offset_bytes) +
             ", live [" + std::to_string(first) + ", " + std::to_string(last) +
             ")</title></rect>\n";
    }
    top += kBand + kGap;
  }
  return svg;
}

// Each image from `top` down, in rows of panels, moving `top` past them. An
// image is scaled to fit a square panel; a side that would be thinner than
// kMinSide is stretched to it (the label says so).
std::string TexturePanels(const TextureProblem& textures, const TexturePlan& plan, double& top) {
  constexpr double kPanel = 240, kMinSide = 24, kMinAdvance = 160;
  std::string svg;
  double x = kMargin, row_height = 0;
  for (size_t i = 0; i < plan.images.size(); ++i) {
    const TextureImage& image = plan.images[i];
    const auto width = static_cast<double>(image.width);
    const auto height = static_cast<double>(image.height);
    const double scale = std::min(kPanel / width, kPanel / height);
    const double pw = std::max(width * scale, kMinSide), ph = std::max(height * scale, kMinSide);
    const double advance = std::max(pw, kMinAdvance) + kGap;
    if (x > kMargin && x + advance > kMargin + kWidth) {
      x = kMargin;
      top += row_height + kGap;
      row_height = 0;
    }
    const bool stretched = width * scale < kMinSide || height * scale < kMinSide;
    svg += "<text x=\"" + Fmt("%.1f", x) + "\" y=\"" + Fmt("%.1f", top - 6) + "\">" +
           EscapeXml(image.name) + " " + std::to_string(image.width) + "x" +
           std::to_string(image.height) + (stretched ? " (stretched)" : "") + "<title>" +
           EscapeXml(image.name) + ": " + std::to_string(image.width) + " x " +
           std::to_string(image.height) + " texels, " + ShortBytes(image.area() * kTexelBytes) +
           "</title></text>\n";
    svg += "<rect x=\"" + Fmt("%.1f", x) + "\" y=\"" + Fmt("%.1f", top) + "\" width=\"" +
           Fmt("%.1f", pw) + "\" height=\"" + Fmt("%.1f", ph) +
           "\" fill=\"#f4f4f4\" stroke=\"#888\"/>\n";
    const double sx = pw / width, sy = ph / height;
    for (size_t t = 0; t < textures.tokens.size(); ++t) {
      const TexturePosition& p = plan.positions[t];
      if (static_cast<size_t>(p.image) != i) continue;
      const TextureToken& token = textures.tokens[t];
      svg += "<rect x=\"" + Fmt("%.2f", x + static_cast<double>(p.x) * sx) + "\" y=\"" +
             Fmt("%.2f", top + static_cast<double>(p.y) * sy) + "\" width=\"" +
             Fmt("%.2f", static_cast<double>(token.width) * sx) + "\" height=\"" +
             Fmt("%.2f", static_cast<double>(token.height) * sy) + "\" fill=\"hsl(" + Hue(t) +
             ",60%,65%)\" fill-opacity=\"0.35\" stroke=\"#333\" stroke-width=\"0.5\"><title>" +
             EscapeXml(token.name) + ": " + std::to_string(token.width) + " x " +
             std::to_string(token.height) + " texels at (" + std::to_string(p.x) + ", " +
             std::to_string(p.y) + "), live [" + std::to_string(token.live.first_use) + ", " +
             std::to_string(token.live.last_use) + ")</title></rect>\n";
    }
    x += advance;
    row_height = std::max(row_height, ph);
  }
  top += row_height + kGap;
  return svg;
}

std::string Svg(const std::string& title, const std::string& body, double height) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", kWidth + 2 * kMargin) +
         "\" height=\"" + Fmt("%.0f", height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<text x=\"" + Fmt("%.0f", kMargin) +
         "\" y=\"24\" font-size=\"16\">" + EscapeXml(title) + "</text>\n" + body + "</svg>\n";
}

}  // namespace

std::string PlanSvg(const Problem& problem, const Plan& plan, const std::string& title) {
  double top = kMargin;
  const std::string bands = PoolBands(problem, plan, top);
  return Svg(title, bands, top);
}

std::string PlanSvg(const Problem& problem, const Plan& plan, const TextureProblem& textures,
                    const TexturePlan& texture_plan, const std::string& title) {
  double top = kMargin;
  std::string body = PoolBands(problem, plan, top);
  if (!texture_plan.images.empty()) {
    body += "<text x=\"" + Fmt("%.0f", kMargin) + "\" y=\"" + Fmt("%.0f", top - 6) +
            "\">textures, " + EscapeXml(texture_plan.algorithm) +
            " (x across, y down; regions of tokens live at different times overlap)</text>\n";
    top += 24;
    body += TexturePanels(textures, texture_plan, top);
  }
  return Svg(title, body, top);
}

std::string FormatTextureTable(const TextureProblem& problem,
                               const std::vector<TexturePlan>& plans) {
  if (problem.tokens.empty() || plans.empty()) return "";
  std::vector<std::vector<std::string>> images;
  for (const TextureImage& image : plans.front().images) {
    images.push_back({image.name, problem.kinds[static_cast<size_t>(image.kind)].name,
                      std::to_string(image.width) + " x " + std::to_string(image.height),
                      std::to_string(image.area()), ShortBytes(image.area() * kTexelBytes)});
  }
  const int64_t bound = TextureLowerBound(problem);
  std::vector<std::vector<std::string>> totals;
  for (const TexturePlan& plan : plans) {
    const int64_t area = plan.total_area();
    totals.push_back(
        {plan.algorithm, std::to_string(plan.images.size()), std::to_string(area),
         ShortBytes(area * kTexelBytes), std::to_string(bound),
         bound > 0 ? Fmt("%.4f", static_cast<double>(area) / static_cast<double>(bound)) : "-"});
  }
  return FormatRows({"image", "kind", "width x height", "area (texels)", "bytes"}, images) + "\n" +
         FormatRows({"strategy", "images", "area (texels)", "bytes", "lower bound", "ratio"},
                    totals);
}

}  // namespace tessel::memory
