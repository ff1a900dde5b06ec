// Settings and small helpers shared by the files that implement ChaosRun (chaos_run.cc,
// chaos_run_setup.cc, chaos_run_nodes.cc, chaos_run_audit.cc, chaos_cycle.cc).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "bench/chaos/chaos_types.h"

namespace chaos {

// How long a restart waits for checkpoint.restored, and the agent for its resume.
constexpr int kRestoreWaitMs = 30000;
// The agent's inbox stream.
constexpr char kStream[] = "INBOX";
// The JetStream store's stream prefix (streams CHAOS_AGENTS, CHAOS_CKPT, CHAOS_JOURNAL).
constexpr char kStorePrefix[] = "CHAOS";
// How long a feed is sent again, and a consumer snapshot asked again, while a stream of the
// cluster elects a leader (4-8 s on nats-server 2.9).
constexpr int kNatsRetryMs = 30000;
// A node kill waits this long for the previous one's server to be back and healthy.
constexpr int kQuietWaitMs = 180000;

inline void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Appends `note` to the row's notes, "; "-separated.
inline void AddNote(CycleRow* row, const std::string& note) {
  row->note += (row->note.empty() ? "" : "; ") + note;
}

inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace chaos
