// Whole files in and out: read at once, written atomically (never a
// half-written file), with errors that name the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessel {

// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& bytes);
StatusOr<std::string> ReadFileBytes(const std::filesystem::path& path);
// Opens a regular file for binary reading into `in`; NotFound names the
// file when it is missing or cannot be opened.
Status OpenForReading(const std::filesystem::path& path, std::ifstream* in);

// A file mapped read-only (mmap), for a parser that copies what it needs
// out of it: Release drops the pages of a range it is done with from the
// process's resident memory (read again from the file if touched), so a
// model's weights are never held twice at once, once in the file's pages
// and once parsed. Move-only; unmapped when destroyed.
class MappedFile {
 public:
  static StatusOr<MappedFile> Open(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return {data_, size_}; }
  // The whole pages inside [begin, begin + n), which must lie in bytes().
  void Release(const char* begin, size_t n) const;

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessel
