#include "core/file_io.h"

#include <unistd.h>

#include <sstream>

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
