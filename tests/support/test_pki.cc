#include "tests/support/test_pki.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace agentckpt::testing {
namespace {

void Run(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
    std::fprintf(stderr, "test PKI setup failed: %s\n", command.c_str());
    std::abort();
  }
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A self-signed CA named `name` as NAME.pem / NAME.key.
void MakeCa(const std::string& dir, const std::string& name) {
  Write(dir + "/" + name + ".cnf",
        "[req]\ndistinguished_name=dn\nprompt=no\nx509_extensions=v3\n"
        "[dn]\nCN=agentckpt test " +
            name +
            "\n"
            "[v3]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            "subjectKeyIdentifier=hash\n");
  Run("cd '" + dir + "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 " +
      "-nodes -days 2 -config " + name + ".cnf -keyout " + name + ".key -out " + name + ".pem");
}

// A leaf NAME.pem / NAME.key signed by ca.pem, with `extensions` (an openssl extfile's text).
void MakeLeaf(const std::string& dir, const std::string& name, const std::string& cn,
              const std::string& extensions) {
  Write(dir + "/" + name + ".ext", extensions);
  Run("cd '" + dir + "' && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 " +
      "-nodes -subj /CN=" + cn + " -keyout " + name + ".key -out " + name + ".csr");
  Run("cd '" + dir + "' && openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key " +
      "-CAcreateserial -days 2 -extfile " + name + ".ext -out " + name + ".pem");
}

}  // namespace

TestPki MakeTestPki(const std::string& dir) {
  MakeCa(dir, "ca");
  MakeCa(dir, "other-ca");
  MakeLeaf(dir, "server", "localhost",
           "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
           "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  MakeLeaf(dir, "client", "agentckpt-client",
           "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
  TestPki p;
  p.ca_cert = dir + "/ca.pem";
  p.server_cert = dir + "/server.pem";
  p.server_key = dir + "/server.key";
  p.client_cert = dir + "/client.pem";
  p.client_key = dir + "/client.key";
  p.other_ca_cert = dir + "/other-ca.pem";
  return p;
}

}  // namespace agentckpt::testing
