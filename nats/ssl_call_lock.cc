// See ssl_call_lock.h for why these OpenSSL entry points are defined here.
#include "nats/ssl_call_lock.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace agentckpt {
namespace {

using ReadFn = int (*)(SSL*, void*, int);
using WriteFn = int (*)(SSL*, const void*, int);
using ReadExFn = int (*)(SSL*, void*, size_t, size_t*);
using WriteExFn = int (*)(SSL*, const void*, size_t, size_t*);
using GetErrorFn = int (*)(const SSL*, int);

struct LibSsl {
  ReadFn read;
  WriteFn write;
  ReadExFn read_ex;
  WriteExFn write_ex;
  GetErrorFn get_error;
};

template <typename Fn>
Fn Next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    // A call reached this wrapper, so libssl is loaded; not finding it is a broken invariant.
    std::fprintf(stderr, "agentckpt: %s not found in libssl: %s\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

const LibSsl& Real() {
  static const LibSsl real = {Next<ReadFn>("SSL_read"), Next<WriteFn>("SSL_write"),
                              Next<ReadExFn>("SSL_read_ex"), Next<WriteExFn>("SSL_write_ex"),
                              Next<GetErrorFn>("SSL_get_error")};
  return real;
}

// Recursive, in case libssl ever calls one of these entry points from inside another. Never
// destroyed: a library thread may still read or write while the process exits.
std::recursive_mutex& LockFor(const SSL* ssl) {
  static auto* stripes = new std::array<std::recursive_mutex, 64>;
  const auto addr = reinterpret_cast<std::uintptr_t>(ssl);
  return (*stripes)[((addr >> 4) * 0x9E3779B97F4A7C15ull) >> 58];
}

// What SSL_get_error said for this thread's last failed read or write, taken under the lock.
struct LastFailure {
  const SSL* ssl;
  int ret;
  int error;
};
thread_local LastFailure last_failure = {nullptr, 0, 0};

// Runs `call` (one libssl read or write on `ssl`) under `ssl`'s lock; on failure (ret <= 0)
// records SSL_get_error under it too. On a blocking socket the call is made non-blocking
// while the lock is held, and a "want read/write" is waited for with poll() outside the lock,
// then the call is repeated: the caller still sees a blocking call, but the other direction
// can go on while this one waits for the network.
template <typename Call>
int Serialized(SSL* ssl, int fd, Call call) {
  while (true) {
    int ret;
    int error = SSL_ERROR_NONE;
    int saved_errno;
    bool emulating = false;
    {
      std::lock_guard<std::recursive_mutex> lock(LockFor(ssl));
      const int flags = fd >= 0 ? ::fcntl(fd, F_GETFL) : -1;
      emulating = flags >= 0 && (flags & O_NONBLOCK) == 0;
      if (emulating) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
      ret = call();
      saved_errno = errno;
      if (ret <= 0) error = Real().get_error(ssl, ret);
      if (emulating) ::fcntl(fd, F_SETFL, flags);
    }
    if (emulating && (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE)) {
      pollfd p{fd, static_cast<short>(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
      ::poll(&p, 1, 1000);  // a timeout only to look again; shutdown() of the socket wakes it
      continue;
    }
    last_failure = {ret <= 0 ? ssl : nullptr, ret, error};
    errno = saved_errno;
    return ret;
  }
}

}  // namespace

bool SslCallsAreSerialized() {
  return dlsym(RTLD_DEFAULT, "SSL_read") == reinterpret_cast<void*>(&::SSL_read) &&
         dlsym(RTLD_DEFAULT, "SSL_get_error") == reinterpret_cast<void*>(&::SSL_get_error);
}

}  // namespace agentckpt

using agentckpt::Real;
using agentckpt::Serialized;

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  return Serialized(ssl, SSL_get_rfd(ssl), [&] { return Real().read(ssl, buf, num); });
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  return Serialized(ssl, SSL_get_wfd(ssl), [&] { return Real().write(ssl, buf, num); });
}

int SSL_read_ex(SSL* ssl, void* buf, size_t num, size_t* readbytes) {
  return Serialized(ssl, SSL_get_rfd(ssl),
                    [&] { return Real().read_ex(ssl, buf, num, readbytes); });
}

int SSL_write_ex(SSL* ssl, const void* buf, size_t num, size_t* written) {
  return Serialized(ssl, SSL_get_wfd(ssl), [&] { return Real().write_ex(ssl, buf, num, written); });
}

int SSL_get_error(const SSL* ssl, int ret) {
  agentckpt::LastFailure& last = agentckpt::last_failure;
  if (last.ssl != nullptr && last.ssl == ssl && last.ret == ret) {
    last.ssl = nullptr;
    return last.error;
  }
  std::lock_guard<std::recursive_mutex> lock(agentckpt::LockFor(ssl));
  return Real().get_error(ssl, ret);
}

}  // extern "C"
