// The JetStream API error codes ("err_code" of an API reply; nats-server's errors.json) that
// agentckpt tells apart. Shared by the replay reader and the JetStream store.
#pragma once

namespace agentckpt::jetstream_errors {

inline constexpr int kConsumerNotFound = 10014;
inline constexpr int kNoMessageFound = 10037;
inline constexpr int kNotEnabledForAccount = 10039;
inline constexpr int kSequenceNotFound = 10043;
inline constexpr int kMessageTooLarge = 10054;
inline constexpr int kMessageDeleteFailed = 10057;
inline constexpr int kStreamNotFound = 10059;
inline constexpr int kWrongLastSequence = 10071;
inline constexpr int kNotEnabled = 10076;

}  // namespace agentckpt::jetstream_errors
