// The pipe between a crash test and the writer process it SIGKILLs: the writer sends one
// fixed-size record per acknowledged write, the test reads them with a deadline.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

namespace agentckpt::testing {

// Reads records of type T (trivially copyable) from `fd` into `out` until `want` more arrived,
// end of file, or `timeout_ms` passed. Returns false on a timeout, a read error or a torn
// record at end of file.
template <typename T>
bool ReadPipeRecords(int fd, size_t want, int timeout_ms, std::vector<T>* out) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t got = 0;
  char buf[sizeof(T)];
  size_t filled = 0;
  while (got < want) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) continue;
    ssize_t r = read(fd, buf + filled, sizeof(buf) - filled);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) return filled == 0;  // end of file (a torn record would be a bug)
    filled += static_cast<size_t>(r);
    if (filled == sizeof(buf)) {
      T record;
      std::memcpy(&record, buf, sizeof(record));
      out->push_back(record);
      ++got;
      filled = 0;
    }
  }
  return true;
}

}  // namespace agentckpt::testing
