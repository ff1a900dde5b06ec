#include "examples/reference_agent/probe_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

namespace reference_agent {

using agentckpt::Status;
using agentckpt::StatusOr;

double WallMillis() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) * 1000.0 + static_cast<double>(ts.tv_nsec / 1000) / 1000.0;
}

StatusOr<std::unique_ptr<ProbeLog>> ProbeLog::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return agentckpt::UnavailableError("open probe log " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<ProbeLog>(new ProbeLog(fd));
}

ProbeLog::~ProbeLog() { ::close(fd_); }

Status ProbeLog::Append(nlohmann::json line) {
  line["t"] = WallMillis();
  line["pid"] = static_cast<int64_t>(::getpid());
  std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return agentckpt::UnavailableError(std::string("probe log write: ") + strerror(errno));
    done += static_cast<size_t>(n);
  }
  while (::fdatasync(fd_) != 0) {
    if (errno != EINTR) {
      return agentckpt::UnavailableError(std::string("probe log fdatasync: ") + strerror(errno));
    }
  }
  return agentckpt::OkStatus();
}

std::vector<nlohmann::json> ProbeLogTail::ReadNew() {
  std::vector<nlohmann::json> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  size_t start = 0;
  for (size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    nlohmann::json j = nlohmann::json::parse(partial_.substr(start, nl - start), nullptr, false);
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
    start = nl + 1;
  }
  partial_.erase(0, start);
  return out;
}

}  // namespace reference_agent
