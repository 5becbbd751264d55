// Text that goes into messages: every error tessel reports is one line, so
// bytes that come from a file (a name, a path, a library's message) are
// escaped before they are quoted.
//
//   "value '" + EscapeForMessage(name) + "'"   // "a\nb" -> "a\\nb", 0x01 -> "\\x01"
//   OneLine(checker_message)                     // "line 1\n  line 2" -> "line 1 / line 2"
#pragma once

#include <string>
#include <string_view>

namespace tessel {

// Printable ASCII stays as is; \n, \r, \t become those escapes; any other
// byte below 0x20 or from 0x7f up becomes \xNN. Long text is cut at
// `max_bytes` of input, marked with "...".
std::string EscapeForMessage(std::string_view text, size_t max_bytes = 256);

// A multi-line message (a library's, say) as one line: line breaks and the
// indentation after them become " / ", trailing ones are dropped, and other
// control bytes are escaped as EscapeForMessage does (no length limit).
std::string OneLine(std::string_view text);

}  // namespace tessel
