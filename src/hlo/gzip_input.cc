// ReadInputFile (declared in hlo/parser.h beside ParseHloFile, its main
// user): reading a whole file or stdin, and gunzipping gzip data, apart from
// the parser's text handling.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "hlo/lexer.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

constexpr size_t kMaxDecompressedBytes = size_t{2} << 30;  // 2 GiB

absl::StatusOr<std::string> Gunzip(const std::string& data,
                                   const std::string& path) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(StrCatSv(path, ": cannot initialize zlib"));
  }
  std::string out;
  out.resize(std::min<size_t>(std::max<size_t>(data.size() * 4, 1 << 16),
                              kMaxDecompressedBytes));
  size_t in_pos = 0;
  size_t out_pos = 0;
  int rc = Z_OK;
  absl::Status status;
  while (true) {
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const size_t chunk = std::min<size_t>(data.size() - in_pos, 1u << 30);
      zs.next_in =
          reinterpret_cast<Bytef*>(const_cast<char*>(data.data())) + in_pos;
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    if (out_pos == out.size()) {
      if (out.size() >= kMaxDecompressedBytes) {
        status = absl::InvalidArgumentError(
            StrCatSv(path, ": decompressed size exceeds the limit of 2 GiB"));
        break;
      }
      out.resize(std::min(out.size() * 2, kMaxDecompressedBytes));
    }
    const size_t avail = std::min<size_t>(out.size() - out_pos, 1u << 30);
    zs.next_out = reinterpret_cast<Bytef*>(&out[out_pos]);
    zs.avail_out = static_cast<uInt>(avail);
    rc = inflate(&zs, Z_NO_FLUSH);
    out_pos += avail - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members.
      if (zs.avail_in > 0 || in_pos < data.size()) {
        if (inflateReset(&zs) != Z_OK) {
          status = absl::InternalError(StrCatSv(path, ": zlib reset"));
          break;
        }
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR) {
      if (zs.avail_in == 0 && in_pos >= data.size()) {
        status =
            absl::InvalidArgumentError(StrCatSv(path, ": truncated gzip data"));
        break;
      }
      continue;
    }
    if (rc != Z_OK) {
      status = absl::InvalidArgumentError(StrCatSv(
          path, ": corrupt gzip data",
          zs.msg != nullptr ? StrCatSv(" (", zs.msg, ")") : std::string()));
      break;
    }
    if (zs.avail_in == 0 && in_pos >= data.size() && zs.avail_out != 0) {
      status =
          absl::InvalidArgumentError(StrCatSv(path, ": truncated gzip data"));
      break;
    }
  }
  inflateEnd(&zs);
  if (!status.ok()) return status;
  out.resize(out_pos);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadInputFile(const std::string& path) {
  std::string data;
  if (path == "-") {
    char buf[1 << 16];
    while (true) {
      size_t n = std::fread(buf, 1, sizeof(buf), stdin);
      data.append(buf, n);
      if (n < sizeof(buf)) {
        if (std::ferror(stdin)) {
          return absl::InvalidArgumentError("<stdin>: read error");
        }
        break;
      }
    }
  } else {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      const int err = errno;
      std::string msg = StrCatSv(path, ": ", std::strerror(err));
      if (err == ENOENT) return absl::NotFoundError(msg);
      return absl::InvalidArgumentError(msg);
    }
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(StrCatSv(path, ": is a directory"));
    }
    // Straight into the string, sized by fstat (one read for a regular
    // file); it grows for whatever else arrives (a file still being
    // written, a pipe or a device).
    size_t expected = 1 << 16;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      expected = static_cast<size_t>(st.st_size) + 1;  // + 1: EOF in one go
    }
    size_t size = 0;
    data.resize(expected);
    while (true) {
      if (size == data.size()) data.resize(2 * data.size());
      ssize_t n = ::read(fd, data.data() + size, data.size() - size);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        return absl::InvalidArgumentError(
            StrCatSv(path, ": ", std::strerror(err)));
      }
      if (n == 0) break;
      size += static_cast<size_t>(n);
    }
    data.resize(size);
    ::close(fd);
  }
  const std::string name = path == "-" ? "<stdin>" : path;
  const bool magic = data.size() >= 2 &&
                     static_cast<unsigned char>(data[0]) == 0x1f &&
                     static_cast<unsigned char>(data[1]) == 0x8b;
  const bool gz_suffix =
      path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (magic) return Gunzip(data, name);
  if (gz_suffix) {
    return absl::InvalidArgumentError(
        StrCatSv(name, ": not gzip data (missing gzip header)"));
  }
  return data;
}

}  // namespace hloverlap
