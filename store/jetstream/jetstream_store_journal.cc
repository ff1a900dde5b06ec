// JetStreamStore's journal (see the header comment of jetstream_store.h): one message per
// append on <P>.journal.<agentId>, fenced by the lease epoch and holder each message carries.
#include <algorithm>
#include <string_view>

#include "common/ids.h"
#include "common/status_macros.h"
#include "store/jetstream/jetstream_store.h"

namespace agentckpt {
namespace {

// Message headers (docs/checkpoint-format.md "JetStream store").
constexpr char kKind[] = "Agentckpt-Kind";      // entries | fence | release
constexpr char kEpoch[] = "Agentckpt-Epoch";    // the writer's lease epoch (0: no lease)
constexpr char kHolder[] = "Agentckpt-Holder";  // the writer's lease holder ("" : none)
constexpr char kFirst[] = "Agentckpt-First";    // first entry sequence (entries)
constexpr char kLast[] = "Agentckpt-Last";      // last entry sequence; the high-water mark
constexpr int kMaxAppendRounds = 16;

int64_t IntHeader(const JsMessage& m, const char* key) {
  const std::string v = m.Header(key);
  if (v.empty() || v.size() > 19) return 0;
  int64_t out = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return 0;
    out = out * 10 + (c - '0');
  }
  return out;
}

}  // namespace

StatusOr<JetStreamStore::JournalHead> JetStreamStore::ReadJournalHead(const std::string& agent_id) {
  ASSIGN_OR_RETURN(std::optional<JsMessage> last,
                   api_->GetLast(JournalStream(), JournalSubject(agent_id)));
  JournalHead head;
  if (!last) return head;
  head.subject_last = last->seq;
  head.last_entry = IntHeader(*last, kLast);
  head.epoch = IntHeader(*last, kEpoch);
  head.holder = last->Header(kHolder);
  return head;
}

Status JetStreamStore::FenceJournal(const std::string& agent_id, const std::string& holder,
                                    int64_t epoch, bool release) {
  std::lock_guard<std::mutex> lock(journal_mu_);
  auto hit = heads_.find(agent_id);
  if (hit != heads_.end() && hit->second.epoch == epoch && hit->second.holder == holder) {
    return OkStatus();
  }
  for (int round = 0; round < kMaxAppendRounds; ++round) {
    ASSIGN_OR_RETURN(JournalHead head, ReadJournalHead(agent_id));
    if (head.epoch > epoch || (head.epoch == epoch && head.holder == holder)) {
      heads_[agent_id] = head;  // fenced already (or by a newer holder, whose fence stands)
      return OkStatus();
    }
    std::map<std::string, std::string> headers{{kKind, release ? "release" : "fence"},
                                               {kEpoch, std::to_string(epoch)},
                                               {kHolder, holder},
                                               {kLast, std::to_string(head.last_entry)}};
    StatusOr<uint64_t> seq =
        api_->Publish(JournalSubject(agent_id), "", headers, NewMessageId(), head.subject_last);
    if (seq.ok()) {
      heads_[agent_id] = JournalHead{*seq, head.last_entry, epoch, holder};
      if (auto spans = spans_.find(agent_id); spans != spans_.end()) {
        spans->second.push_back(Span{*seq, 0, 0});
      }
      return OkStatus();
    }
    heads_.erase(agent_id);
    spans_.erase(agent_id);
    if (seq.status().code() != StatusCode::kAlreadyExists) return seq.status();
  }
  return UnavailableError("the journal of " + agent_id + " keeps changing under the fence");
}

Status JetStreamStore::AppendJournal(const std::string& agent_id,
                                     const std::vector<JournalEntry>& entries,
                                     const std::optional<LeaseToken>& lease) {
  RETURN_IF_ERROR(CheckJournalEntries(agent_id, entries));
  if (entries.empty()) return OkStatus();
  std::string data;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) data += '\n';
    data += EncodeJournalEntry(entries[i]);  // compact JSON: never holds a raw newline
  }
  const int64_t epoch = lease ? lease->epoch : 0;
  const std::string holder = lease ? lease->holder : "";
  std::map<std::string, std::string> headers{{kKind, "entries"},
                                             {kEpoch, std::to_string(epoch)},
                                             {kHolder, holder},
                                             {kFirst, std::to_string(entries.front().sequence)},
                                             {kLast, std::to_string(entries.back().sequence)}};
  const std::string msg_id = NewMessageId();
  std::lock_guard<std::mutex> lock(journal_mu_);
  bool confirmed = false;  // the record was read and names this lease
  for (int round = 0; round < kMaxAppendRounds; ++round) {
    JournalHead head;
    if (auto hit = heads_.find(agent_id); hit != heads_.end()) {
      head = hit->second;
    } else {
      ASSIGN_OR_RETURN(head, ReadJournalHead(agent_id));
      heads_[agent_id] = head;
    }
    if (lease) {
      const bool fenced = head.epoch > epoch || (head.epoch == epoch && head.holder != holder);
      if (fenced || (head.epoch < epoch && !confirmed)) {
        // Fenced out, or the journal has not seen this epoch yet: the record decides.
        ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
        if (r.rec.lease_holder != holder || r.rec.lease_epoch != epoch) {
          return FailedPreconditionError(
              LeaseLostMessage(*lease, r.rec.lease_holder, r.rec.lease_epoch));
        }
        if (fenced) {
          return FailedPreconditionError("lease lost: the journal of " + agent_id +
                                         " was fenced at epoch " + std::to_string(head.epoch) +
                                         (head.holder.empty() ? " (released)" : ""));
        }
        confirmed = true;
      }
    }
    if (entries.front().sequence <= head.last_entry) {
      return AlreadyExistsError("journal sequence " + std::to_string(entries.front().sequence) +
                                " of agent " + agent_id + " is not above the last appended " +
                                std::to_string(head.last_entry) + ": another writer got there");
    }
    StatusOr<uint64_t> seq =
        api_->Publish(JournalSubject(agent_id), data, headers, msg_id, head.subject_last);
    if (seq.ok()) {
      heads_[agent_id] = JournalHead{*seq, entries.back().sequence, epoch, holder};
      if (auto spans = spans_.find(agent_id); spans != spans_.end()) {
        spans->second.push_back(Span{*seq, entries.front().sequence, entries.back().sequence});
      }
      return OkStatus();
    }
    heads_.erase(agent_id);
    spans_.erase(agent_id);
    // Either the retries ran out, or the compare-and-set failed, which is also what a retry of a
    // publish that was stored before a leader change (its reply lost) is answered when the new
    // leader does not recognise the message id. If the message is stored after all, it is the
    // subject's last one.
    StatusOr<std::optional<JsMessage>> last =
        api_->GetLast(JournalStream(), JournalSubject(agent_id));
    if (last.ok() && *last && (*last)->Header("Nats-Msg-Id") == msg_id) {
      heads_[agent_id] = JournalHead{(*last)->seq, entries.back().sequence, epoch, holder};
      return OkStatus();
    }
    if (seq.status().code() != StatusCode::kAlreadyExists) return seq.status();
  }
  return UnavailableError("the journal of " + agent_id + " keeps changing under this writer");
}

StatusOr<std::vector<JetStreamStore::JournalMessage>> JetStreamStore::ReadJournalMessages(
    const std::string& agent_id) {
  std::vector<JournalMessage> out;
  const std::string subject = JournalSubject(agent_id);
  uint64_t from = 1;
  for (;;) {
    ASSIGN_OR_RETURN(std::optional<JsMessage> m, api_->GetNext(JournalStream(), from, subject));
    if (!m) break;
    out.push_back(JournalMessage{m->seq, m->Header(kKind), IntHeader(*m, kFirst),
                                 IntHeader(*m, kLast), std::move(m->data)});
    from = m->seq + 1;
  }
  return out;
}

StatusOr<std::vector<JournalEntry>> JetStreamStore::ReadJournal(const std::string& agent_id,
                                                                int64_t after_sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  const int64_t after = std::max(after_sequence, r.rec.journal_compacted);
  ASSIGN_OR_RETURN(std::vector<JournalMessage> messages, ReadJournalMessages(agent_id));
  std::vector<JournalEntry> out;
  for (const JournalMessage& m : messages) {
    if (m.kind != "entries" || m.last <= after) continue;
    std::string_view rest = m.data;
    int64_t expected = m.first;
    while (!rest.empty() || expected <= m.last) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      StatusOr<JournalEntry> e = DecodeJournalEntry(line);
      if (!e.ok() || e->sequence != expected || e->agent_id != agent_id) {
        JournalEntry damaged;  // the fold stops here
        damaged.agent_id = agent_id;
        damaged.sequence = expected;
        if (expected > after) out.push_back(std::move(damaged));
        break;
      }
      if (e->sequence > after) out.push_back(std::move(e).value());
      if (++expected > m.last) break;
    }
  }
  return out;
}

StatusOr<JournalStats> JetStreamStore::GetJournalStats(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(std::vector<JournalEntry> entries, ReadJournal(agent_id, 0));
  JournalStats s;
  for (const JournalEntry& e : entries) {
    if (s.first_sequence == 0) s.first_sequence = e.sequence;
    ++s.entries;
    s.bytes += static_cast<int64_t>(EncodeJournalEntry(e).size());
  }
  ASSIGN_OR_RETURN(JournalHead head, ReadJournalHead(agent_id));
  s.last_sequence = head.last_entry;
  return s;
}

StatusOr<int64_t> JetStreamStore::CompactJournal(const std::string& agent_id, int64_t from,
                                                 int64_t through) {
  int64_t count = 0;
  std::vector<uint64_t> doomed;  // stream sequences to remove
  {
    std::lock_guard<std::mutex> lock(journal_mu_);
    auto known = spans_.find(agent_id);
    auto head = heads_.find(agent_id);
    if (known == spans_.end() || head == heads_.end()) {
      // Scan the subject once; this handle's appends and fences keep the list up from then on.
      // The head first: a message written by another writer after it is not listed, and this
      // handle's next write, which expects the head, fails and drops the list.
      ASSIGN_OR_RETURN(JournalHead now, ReadJournalHead(agent_id));
      ASSIGN_OR_RETURN(std::vector<JournalMessage> messages, ReadJournalMessages(agent_id));
      std::vector<Span> spans;
      for (const JournalMessage& m : messages) {
        if (m.seq > now.subject_last) continue;
        const bool entries = m.kind == "entries";
        spans.push_back(Span{m.seq, entries ? m.first : 0, entries ? m.last : 0});
      }
      heads_[agent_id] = now;
      known = spans_.insert_or_assign(agent_id, std::move(spans)).first;
      head = heads_.find(agent_id);
    }
    std::vector<Span>& spans = known->second;
    uint64_t below = 0;  // remove the messages before this stream sequence
    for (const Span& s : spans) {
      if (s.last == 0) continue;  // a mark
      const int64_t lo = std::max(s.first, from + 1), hi = std::min(s.last, through);
      if (hi >= lo) count += hi - lo + 1;
      if (below == 0 && s.last > through) below = s.seq;
    }
    // Never the subject's last message: it carries the high-water mark and the fence.
    const uint64_t last = head->second.subject_last;
    if (below == 0 || below > last) below = last;
    for (const Span& s : spans) {
      if (s.seq < below) doomed.push_back(s.seq);
    }
    spans.erase(std::remove_if(spans.begin(), spans.end(),
                               [below](const Span& s) { return s.seq < below; }),
                spans.end());
  }
  // One request per message, outside journal_mu_ so that appends go on meanwhile. A message
  // left behind (an error) stays hidden by the record's mark and is found by the next scan.
  for (uint64_t seq : doomed) {
    Status removed = api_->DeleteMessage(JournalStream(), seq);
    if (!removed.ok()) {
      std::lock_guard<std::mutex> lock(journal_mu_);
      spans_.erase(agent_id);
      return removed;
    }
  }
  return count;
}

}  // namespace agentckpt
