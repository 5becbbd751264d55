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

std::string PlanSvg(const Problem& problem, const Plan& plan, const std::string& title) {
  constexpr double kWidth = 1000, kBand = 360, kMargin = 60, kGap = 40;
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
  std::vector<size_t> pools;
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    if (plan.pool_used_bytes[p] > 0) pools.push_back(p);
  }
  const double height = kMargin + static_cast<double>(pools.size()) * (kBand + kGap);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    Fmt("%.0f", kWidth + 2 * kMargin) + "\" height=\"" + Fmt("%.0f", height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<text x=\"" + Fmt("%.0f", kMargin) + "\" y=\"24\" font-size=\"16\">" + EscapeXml(title) +
         "</text>\n";
  double top = kMargin;
  for (size_t p : pools) {
    const int64_t used = plan.pool_used_bytes[p];
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
      const unsigned hue = static_cast<unsigned>((i * 2654435761u) % 360);
      svg += "<rect x=\"" + Fmt("%.2f", x) + "\" y=\"" + Fmt("%.2f", y) + "\" width=\"" +
             Fmt("%.2f", w) + "\" height=\"" + Fmt("%.2f", h) + "\" fill=\"hsl(" +
             std::to_string(hue) + ",60%,65%)\" stroke=\"#333\" stroke-width=\"0.3\"><title>" +
             EscapeXml(b.name) + ": " + std::to_string(b.size_bytes) + " bytes at offset " +
             std::to_string(pl.offset_bytes) + ", live [" + std::to_string(first) + ", " +
             std::to_string(last) + ")</title></rect>\n";
    }
    top += kBand + kGap;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tessel::memory
