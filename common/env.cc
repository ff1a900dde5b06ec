#include "common/env.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace agentckpt {
namespace {

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

class PosixEnv final : public Env {
 public:
  int64_t NowUnixMillis() override {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  }
  int64_t NowMonotonicMicros() override {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  }
  void SleepForMicros(int64_t micros) override {
    if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }
  Status RandomBytes(uint8_t* out, size_t n) override {
    if (RAND_bytes(out, static_cast<int>(n)) != 1) return InternalError("RAND_bytes failed");
    return OkStatus();
  }
  StatusOr<std::string> ReadFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return NotFoundError("no such file: " + path);
      return UnavailableError(ErrnoText("cannot open", path));
    }
    std::string out;
    char buf[65536];
    while (true) {
      ssize_t r = ::read(fd, buf, sizeof(buf));
      if (r < 0) {
        if (errno == EINTR) continue;
        Status s = UnavailableError(ErrnoText("cannot read", path));
        ::close(fd);
        return s;
      }
      if (r == 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    ::close(fd);
    return out;
  }
  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return UnavailableError(ErrnoText("cannot create", tmp));
    size_t off = 0;
    while (off < data.size()) {
      ssize_t w = ::write(fd, data.data() + off, data.size() - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        Status s = UnavailableError(ErrnoText("cannot write", tmp));
        ::close(fd);
        ::unlink(tmp.c_str());
        return s;
      }
      off += static_cast<size_t>(w);
    }
    if (::fsync(fd) != 0) {
      Status s = UnavailableError(ErrnoText("cannot fsync", tmp));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      Status s = UnavailableError(ErrnoText("cannot rename to", path));
      ::unlink(tmp.c_str());
      return s;
    }
    std::string dir = ".";
    if (auto slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
    if (dir.empty()) dir = "/";
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return OkStatus();
  }
  bool FileExists(const std::string& path) override {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0;
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

}  // namespace agentckpt
