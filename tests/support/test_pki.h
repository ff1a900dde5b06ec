// TestPki: a throw-away certificate authority for TLS tests, made at test time with the
// `openssl` command-line tool in a directory the caller owns: a CA, a server certificate for
// 127.0.0.1 and localhost, a client certificate, and a second CA that signed neither.
#pragma once

#include <string>

namespace agentckpt::testing {

struct TestPki {
  std::string ca_cert;  // PEM files, absolute paths
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  std::string other_ca_cert;  // an unrelated CA: verifying the server with it fails
};

// Creates the files in `dir` (EC P-256 keys, valid for two days). Aborts the test binary when
// `openssl` is missing or fails (a broken test setup).
TestPki MakeTestPki(const std::string& dir);

}  // namespace agentckpt::testing
