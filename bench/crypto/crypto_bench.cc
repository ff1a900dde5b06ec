// Encryption-at-rest benchmark: put and latest-verified of the 16k reference fixture on a SQLite
// file on disk (WAL, synchronous=FULL), with encryption off (the plain store) and on
// (EncryptingStore in front of an identical store), printing p50/p99. The two stores are written
// alternately so that both see the same disk conditions.
//
//   build/bin/crypto_bench [--iterations N] [--dir DIR] [--fixtures DIR]
//
// Also prints the cipher alone (encrypt = AES-256-GCM + sealing the stored form; decrypt =
// AES-256-GCM + decoding + re-sealing the plaintext), without I/O.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/common/percentiles.h"
#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/ids.h"
#include "crypto/encrypting_store.h"
#include "crypto/summary_cipher.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt::bench {
namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "%s\n", s.ToString().c_str());
  return 1;
}

int Run(int iterations, const std::string& dir, const std::string& fixtures) {
  const char* name = "checkpoint-16k.json";
  std::printf("crypto_bench: %d iterations, %s, databases in %s\n", iterations, name, dir.c_str());
  auto text = Env::Default()->ReadFile(fixtures + "/" + name);
  if (!text.ok()) return Fail(text.status());
  auto base = CheckpointFromJson(*text);
  if (!base.ok()) return Fail(base.status());
  auto key = crypto::ParseKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  if (!key.ok()) return Fail(key.status());

  std::string prefix = dir + "/crypto-bench-" + std::to_string(::getpid());
  auto plain_store = SqliteStore::Open(prefix + "-off.db");
  if (!plain_store.ok()) return Fail(plain_store.status());
  auto inner = SqliteStore::Open(prefix + "-on.db");
  if (!inner.ok()) return Fail(inner.status());
  crypto::EncryptingStore enc_store(std::move(inner).value(), crypto::Keyring(*key, {}),
                                    Env::Default());
  CheckpointStore* stores[2] = {plain_store->get(), &enc_store};

  Latencies put[2], latest[2], encrypt_only, decrypt_only;
  size_t stored_bytes[2] = {0, 0};
  for (int i = 0; i < iterations + 20; ++i) {
    for (int mode = 0; mode < 2; ++mode) {
      Checkpoint cp = *base;
      cp.sequence_number = i + 1;
      cp.checkpoint_id = *NewUuidV4(Env::Default());
      auto t0 = std::chrono::steady_clock::now();
      auto sealed = Seal(std::move(cp));
      if (!sealed.ok()) return Fail(sealed.status());
      auto r = stores[mode]->Put(*sealed, PutOptions{48});
      double put_us = MicrosSince(t0);
      if (!r.ok()) return Fail(r.status());
      auto t1 = std::chrono::steady_clock::now();
      auto l = stores[mode]->GetLatestVerified(base->agent_id);
      double latest_us = MicrosSince(t1);
      if (!l.ok()) return Fail(l.status());
      if (l->checkpoint.content_sha256 != sealed->doc.content_sha256) {
        std::fprintf(stderr, "latest-verified returned another checkpoint\n");
        return 1;
      }
      if (mode == 1 && i == 0) {
        auto stored = crypto::EncryptCheckpoint(*sealed, *key, Env::Default());
        if (!stored.ok()) return Fail(stored.status());
        stored_bytes[0] = FullDocumentJson(*sealed).size();
        stored_bytes[1] = FullDocumentJson(*stored).size();
      }
      if (mode == 1) {
        auto t2 = std::chrono::steady_clock::now();
        auto stored = crypto::EncryptCheckpoint(*sealed, *key, Env::Default());
        double enc_us = MicrosSince(t2);
        if (!stored.ok()) return Fail(stored.status());
        crypto::Keyring ring(*key, {});
        auto t3 = std::chrono::steady_clock::now();
        auto back = crypto::DecryptCheckpoint(stored->doc, &ring);
        double dec_us = MicrosSince(t3);
        if (!back.ok()) return Fail(back.status());
        if (i >= 20) {
          encrypt_only.Add(enc_us);
          decrypt_only.Add(dec_us);
        }
      }
      if (i < 20) continue;  // warm-up
      put[mode].Add(put_us);
      latest[mode].Add(latest_us);
    }
  }
  std::printf("stored document: %zu bytes plaintext, %zu bytes encrypted\n", stored_bytes[0],
              stored_bytes[1]);
  put[0].Print("put, encryption off (seal+fsync)");
  put[1].Print("put, encryption on (seal+enc+fsync)");
  latest[0].Print("latest-verified, encryption off");
  latest[1].Print("latest-verified, encryption on");
  encrypt_only.Print("encrypt only (no I/O)");
  decrypt_only.Print("decrypt + verify only (no I/O)");
  plain_store->reset();
  for (const char* mode : {"-off.db", "-on.db"}) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      ::unlink((prefix + mode + suffix).c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int iterations = 1000;
  std::string dir = ".";
  const char* fixtures_env = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string fixtures =
      fixtures_env && *fixtures_env ? fixtures_env : AGENTCKPT_BENCH_FIXTURES_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) {
      iterations = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--dir")) {
      dir = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--fixtures")) {
      fixtures = argv[i + 1];
    }
  }
  return agentckpt::bench::Run(iterations, dir, fixtures);
}
