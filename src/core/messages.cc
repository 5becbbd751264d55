#include "core/messages.h"

#include <cstdio>

namespace tessel {

namespace {

void AppendEscaped(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (c >= 0x20 && c < 0x7f) {
    out += static_cast<char>(c);
    return;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

}  // namespace

std::string EscapeForMessage(std::string_view text, size_t max_bytes) {
  std::string out;
  const size_t n = text.size() < max_bytes ? text.size() : max_bytes;
  for (size_t i = 0; i < n; ++i) AppendEscaped(out, static_cast<unsigned char>(text[i]));
  if (n < text.size()) out += "...";
  return out;
}

std::string OneLine(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      // One separator for a run of breaks and the indentation after them.
      while (i < text.size() &&
             (text[i] == '\n' || text[i] == '\r' || text[i] == ' ' || text[i] == '\t')) {
        ++i;
      }
      if (!out.empty() && i < text.size()) out += " / ";
      continue;
    }
    AppendEscaped(out, static_cast<unsigned char>(c));
    ++i;
  }
  return out;
}

}  // namespace tessel
