// Whole files in and out: read at once, written atomically (never a
// half-written file), with errors that name the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "core/status.h"

namespace tessel {

// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& bytes);
StatusOr<std::string> ReadFileBytes(const std::filesystem::path& path);
// Opens a regular file for binary reading into `in`; NotFound names the
// file when it is missing or cannot be opened.
Status OpenForReading(const std::filesystem::path& path, std::ifstream* in);

}  // namespace tessel
