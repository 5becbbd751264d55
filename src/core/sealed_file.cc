#include "core/sealed_file.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/hash.h"

namespace tessel {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'B', 'L', 'O', 'B', '1'};
constexpr size_t kHeaderBytes = 8 + 3 * 8;

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

}  // namespace

std::string SealBlob(std::string_view key, std::string_view payload) {
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  out.append(kMagic, sizeof kMagic);
  PutU64(out, Fnv1a64(key.data(), key.size()));
  PutU64(out, payload.size());
  PutU64(out, Fnv1a64(payload.data(), payload.size()));
  out.append(payload);
  return out;
}

StatusOr<std::string> UnsealBlob(std::string_view bytes, std::string_view key) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return DataLoss("not a sealed tessel cache file");
  if (GetU64(bytes, 8) != Fnv1a64(key.data(), key.size()))
    return DataLoss("written for another key");
  // Compared as sizes, never added: a claimed size near 2^64 cannot wrap.
  if (GetU64(bytes, 16) != bytes.size() - kHeaderBytes)
    return DataLoss("claims " + std::to_string(GetU64(bytes, 16)) + " bytes, holds " +
                    std::to_string(bytes.size() - kHeaderBytes));
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (GetU64(bytes, 24) != Fnv1a64(payload.data(), payload.size()))
    return DataLoss("checksum mismatch");
  return std::string(payload);
}

bool WriteSealedFile(const std::filesystem::path& path, std::string_view key,
                     std::string_view payload) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return false;
  // Unique per process, so concurrent writers (parallel tests) never share one.
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const std::string bytes = SealBlob(key, payload);
    if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (!ec) return true;
  std::filesystem::remove(tmp, ec);
  return false;
}

StatusOr<std::string> ReadSealedFile(const std::filesystem::path& path, std::string_view key,
                                     int64_t max_payload_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return NotFound(path.string() + ": no such file");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return NotFound(path.string() + ": " + ec.message());
  if (size > kHeaderBytes + static_cast<uintmax_t>(std::max<int64_t>(max_payload_bytes, 0)))
    return DataLoss(path.string() + ": " + std::to_string(size) + " bytes, more than a cache " +
                    "entry may hold");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)) ||
      in.peek() != std::char_traits<char>::eof())
    return DataLoss(path.string() + ": changed while being read");
  StatusOr<std::string> payload = UnsealBlob(bytes, key);
  if (!payload.ok()) return DataLoss(path.string() + ": " + payload.status().message());
  return payload;
}

}  // namespace tessel
