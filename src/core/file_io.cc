#include "core/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <sstream>
#include <utility>

namespace tessel {

namespace fs = std::filesystem;

Status OpenForReading(const fs::path& path, std::ifstream* in) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return NotFound("'" + path.string() + "': no such file");
  in->open(path, std::ios::binary);
  if (!*in) return NotFound("'" + path.string() + "': cannot be opened");
  return Status::Ok();
}

StatusOr<std::string> ReadFileBytes(const fs::path& path) {
  std::ifstream in;
  TESSEL_RETURN_IF_ERROR(OpenForReading(path, &in));
  std::error_code ec;
  // One allocation of the file's size (a stringstream would hold its
  // growing buffer and then a copy: twice the file at the peak).
  const auto size = fs::file_size(path, ec);
  std::string bytes;
  if (!ec) bytes.resize(static_cast<size_t>(size));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<size_t>(in.gcount()) != bytes.size()) {
    return DataLoss("'" + path.string() + "': could not be read whole");
  }
  // A file that grew meanwhile: the rest too.
  std::ostringstream rest;
  rest << in.rdbuf();
  bytes += rest.str();
  return bytes;
}

StatusOr<MappedFile> MappedFile::Open(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return NotFound("'" + path.string() + "': no such file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("'" + path.string() + "': cannot be opened");
  struct stat st {};
  MappedFile f;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotFound("'" + path.string() + "': not a regular file");
  }
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return DataLoss("'" + path.string() + "': could not be mapped");
    }
    f.data_ = static_cast<const char*>(p);
  }
  ::close(fd);
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    this->~MappedFile();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::Release(const char* begin, size_t n) const {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const auto last = (reinterpret_cast<uintptr_t>(begin) + n) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

Status WriteFileAtomically(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Internal("cannot write '" + path.string() + "'");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Internal("writing '" + path.string() + "' failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Internal("cannot write '" + path.string() + "': " + ec.message());
  }
  return Status::Ok();
}

}  // namespace tessel
