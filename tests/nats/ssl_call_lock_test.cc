// The serialising OpenSSL entry points (common/ssl_call_lock.h): this binary links libnats like
// the sidecar does, so libnats' SSL_read/SSL_write bind to them; and one TLS connection read on
// one thread and written on another, as nats.c does, moves every byte intact both ways. Under
// ThreadSanitizer (scripts/sanitize thread, no libssl suppression) the second test reports the
// race this unit exists to prevent if the lock is missing.
#include "nats/ssl_call_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace agentckpt::testing {
namespace {

constexpr size_t kBytes = 1 << 20;  // each way; several times a socket buffer

std::string Pattern(char seed) {
  std::string s(kBytes, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(seed + i * 7 + (i >> 11));
  return s;
}

// Waits for `fd` as SSL_get_error asks, like nats.c between non-blocking calls. False when
// the deadline passed (the loops in the test stop by themselves).
bool WaitFor(int fd, int ssl_error, std::chrono::steady_clock::time_point deadline) {
  if (std::chrono::steady_clock::now() > deadline) return false;
  pollfd p{fd, static_cast<short>(ssl_error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
  ::poll(&p, 1, 100);
  return true;
}

// Reads exactly `n` bytes from a non-blocking TLS connection.
std::string ReadAll(SSL* ssl, int fd, size_t n, std::chrono::steady_clock::time_point deadline) {
  std::string out;
  char buf[16384];
  while (out.size() < n) {
    int r = SSL_read(ssl, buf, sizeof buf);
    if (r > 0) {
      out.append(buf, static_cast<size_t>(r));
      continue;
    }
    int e = SSL_get_error(ssl, r);
    if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || !WaitFor(fd, e, deadline)) {
      ADD_FAILURE() << "SSL_read failed: error " << e << " after " << out.size() << " bytes";
      break;
    }
  }
  return out;
}

// Writes all of `data` to a non-blocking TLS connection.
bool WriteAll(SSL* ssl, int fd, const std::string& data,
              std::chrono::steady_clock::time_point deadline) {
  size_t done = 0;
  while (done < data.size()) {
    int chunk = static_cast<int>(std::min<size_t>(data.size() - done, 8192));
    int w = SSL_write(ssl, data.data() + done, chunk);
    if (w > 0) {
      done += static_cast<size_t>(w);
      continue;
    }
    int e = SSL_get_error(ssl, w);
    if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || !WaitFor(fd, e, deadline)) {
      ADD_FAILURE() << "SSL_write failed: error " << e << " after " << done << " bytes";
      return false;
    }
  }
  return true;
}

// A server and a client TLS connection over a socketpair, certificates from TestPki.
class SslCallLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = MakeTestPki(dir_.path());
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    server_ctx_ = SSL_CTX_new(TLS_server_method());
    client_ctx_ = SSL_CTX_new(TLS_client_method());
    ASSERT_NE(server_ctx_, nullptr);
    ASSERT_NE(client_ctx_, nullptr);
    ASSERT_EQ(SSL_CTX_use_certificate_file(server_ctx_, pki_.server_cert.c_str(), SSL_FILETYPE_PEM),
              1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey_file(server_ctx_, pki_.server_key.c_str(), SSL_FILETYPE_PEM),
              1);
    ASSERT_EQ(SSL_CTX_load_verify_locations(client_ctx_, pki_.ca_cert.c_str(), nullptr), 1);
    SSL_CTX_set_verify(client_ctx_, SSL_VERIFY_PEER, nullptr);
    server_ = SSL_new(server_ctx_);
    client_ = SSL_new(client_ctx_);
    SSL_set_fd(server_, fds_[0]);
    SSL_set_fd(client_, fds_[1]);
  }
  void TearDown() override {
    SSL_free(client_);
    SSL_free(server_);
    SSL_CTX_free(client_ctx_);
    SSL_CTX_free(server_ctx_);
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  // The client's handshake (blocking, as nats.c does it), then its socket made non-blocking
  // (newer nats.c) or left blocking (nats.c 3.4).
  void ConnectClient(bool non_blocking = true) {
    ASSERT_EQ(SSL_connect(client_), 1) << ERR_error_string(ERR_get_error(), nullptr);
    if (non_blocking) {
      ASSERT_EQ(::fcntl(fds_[1], F_SETFL, ::fcntl(fds_[1], F_GETFL) | O_NONBLOCK), 0);
    }
  }

  TempDir dir_;
  TestPki pki_;
  int fds_[2] = {-1, -1};
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
  SSL* server_ = nullptr;
  SSL* client_ = nullptr;
};

TEST_F(SslCallLockTest, ThisBinaryResolvesTheSerialisingEntryPoints) {
  EXPECT_TRUE(SslCallsAreSerialized());
}

// One connection read on one thread and written on another, the socket non-blocking (true) or
// blocking (false). With a blocking socket a lock held while a call waits for the network would
// deadlock here: the server sends 1 MiB before it reads, so the client's writer fills the
// socket while its reader must keep draining. A watchdog shuts the sockets after 60 s so that
// such a deadlock fails the test instead of hanging it.
class SslCallLockTwoThreadsTest : public SslCallLockTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(SslCallLockTwoThreadsTest, OneConnectionReadAndWrittenFromTwoThreadsKeepsEveryByte) {
  const bool non_blocking = GetParam();
  const std::string to_server = Pattern('a');
  const std::string to_client = Pattern('Z');
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<int> finished{0};

  // The server: one thread, blocking; it sends everything, then reads everything.
  std::string server_got;
  std::thread server_thread([&] {
    if (SSL_accept(server_) == 1) {
      for (size_t done = 0; done < to_client.size();) {
        int w = SSL_write(server_, to_client.data() + done,
                          static_cast<int>(std::min<size_t>(to_client.size() - done, 16384)));
        if (w <= 0) break;
        done += static_cast<size_t>(w);
      }
      char buf[16384];
      while (server_got.size() < to_server.size()) {
        int r = SSL_read(server_, buf, sizeof buf);
        if (r <= 0) break;
        server_got.append(buf, static_cast<size_t>(r));
      }
    }
    ++finished;
  });

  // The client, as nats.c: one reader thread and one writer thread on the same SSL object.
  ConnectClient(non_blocking);
  std::string client_got;
  std::thread reader([&] {
    client_got = ReadAll(client_, fds_[1], to_client.size(), deadline);
    ++finished;
  });
  std::thread writer([&] {
    WriteAll(client_, fds_[1], to_server, deadline);
    ++finished;
  });
  bool stuck = false;
  while (finished.load() < 3) {
    if (std::chrono::steady_clock::now() > deadline) {
      stuck = true;
      ::shutdown(fds_[0], SHUT_RDWR);
      ::shutdown(fds_[1], SHUT_RDWR);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  writer.join();
  reader.join();
  server_thread.join();

  EXPECT_FALSE(stuck) << "reader and writer deadlocked";
  EXPECT_EQ(client_got.size(), to_client.size());
  EXPECT_TRUE(client_got == to_client) << "the client received altered bytes";
  EXPECT_EQ(server_got.size(), to_server.size());
  EXPECT_TRUE(server_got == to_server) << "the server received altered bytes";
}

INSTANTIATE_TEST_SUITE_P(Sockets, SslCallLockTwoThreadsTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "NonBlocking" : "Blocking";
                         });

TEST_F(SslCallLockTest, SslGetErrorAfterAFailedReadReportsThatReadAndKeepsErrno) {
  std::thread server_thread([&] { EXPECT_EQ(SSL_accept(server_), 1); });
  ConnectClient();
  server_thread.join();
  char buf[64];
  // Nothing to read on a non-blocking socket (session tickets are not data): WANT_READ, and
  // errno still says why.
  errno = 0;
  int r = SSL_read(client_, buf, sizeof buf);
  const int saved = errno;
  EXPECT_LE(r, 0);
  EXPECT_EQ(SSL_get_error(client_, r), SSL_ERROR_WANT_READ);
  EXPECT_EQ(saved, EAGAIN);
  // A second SSL_get_error for the same call asks libssl itself, and agrees.
  EXPECT_EQ(SSL_get_error(client_, r), SSL_ERROR_WANT_READ);
  // After the peer's end is shut without a close_notify, the next read says the connection is
  // gone.
  ASSERT_EQ(::shutdown(fds_[0], SHUT_WR), 0);
  r = SSL_read(client_, buf, sizeof buf);
  const int e = SSL_get_error(client_, r);
  EXPECT_TRUE(e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL || e == SSL_ERROR_ZERO_RETURN) << e;
}

}  // namespace
}  // namespace agentckpt::testing
