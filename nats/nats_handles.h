// Owning handles for nats.c objects, so every exit path destroys what it created.
// Header only; each handle is a std::unique_ptr with the matching nats.c destroy function.
#pragma once

#include <nats/nats.h>

#include <memory>

namespace agentckpt::nats_handles {

struct OptionsDeleter {
  void operator()(natsOptions* opts) const { natsOptions_Destroy(opts); }
};
struct JsCtxDeleter {
  void operator()(jsCtx* js) const { jsCtx_Destroy(js); }
};
struct StreamInfoDeleter {
  void operator()(jsStreamInfo* si) const { jsStreamInfo_Destroy(si); }
};
struct ConsumerInfoDeleter {
  void operator()(jsConsumerInfo* ci) const { jsConsumerInfo_Destroy(ci); }
};
struct MsgDeleter {
  void operator()(natsMsg* msg) const { natsMsg_Destroy(msg); }
};
struct MetaDataDeleter {
  void operator()(jsMsgMetaData* meta) const { jsMsgMetaData_Destroy(meta); }
};
// Unsubscribes (best effort: the connection may be gone) and then frees the subscription. For a
// subscription whose connection stays open and may still receive its messages, use
// UnsubscribeAndDestroy (below) instead.
struct SubscriptionDeleter {
  void operator()(natsSubscription* sub) const {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
  }
};
struct ConnectionDeleter {
  void operator()(natsConnection* nc) const {
    natsConnection_Close(nc);
    natsConnection_Destroy(nc);
  }
};

// Unsubscribes `sub` and destroys it once `nc`'s read loop can no longer be using it.
// nats.c before 3.6.0 (Debian 12 ships 3.4.1) looks up the subscription of an inbound message
// and then locks it without retaining it, so a subscription destroyed right after its
// unsubscribe can be locked by the read loop after it was freed (nats.c issue #637, a crash or
// a TSan "use of an invalid mutex"). A flush after the unsubscribe returns once the read loop has
// processed the server's PONG, so it has finished with every message it had found for the
// subscription; no message can find it after the unsubscribe. When `nc` is not connected there
// is no read loop to wait for. Bounded by `flush_ms`; never fails.
inline void UnsubscribeAndDestroy(natsConnection* nc, natsSubscription* sub,
                                  int64_t flush_ms = 1000) {
  if (sub == nullptr) return;
  natsSubscription_Unsubscribe(sub);
  if (nc != nullptr && natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED) {
    natsConnection_FlushTimeout(nc, flush_ms);
  }
  natsSubscription_Destroy(sub);
}

using OptionsPtr = std::unique_ptr<natsOptions, OptionsDeleter>;
using JsCtxPtr = std::unique_ptr<jsCtx, JsCtxDeleter>;
using StreamInfoPtr = std::unique_ptr<jsStreamInfo, StreamInfoDeleter>;
using ConsumerInfoPtr = std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter>;
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;
using MetaDataPtr = std::unique_ptr<jsMsgMetaData, MetaDataDeleter>;
using SubscriptionPtr = std::unique_ptr<natsSubscription, SubscriptionDeleter>;
using ConnectionPtr = std::unique_ptr<natsConnection, ConnectionDeleter>;

// A natsMsgList (from a fetch) destroyed with its messages.
class MsgList {
 public:
  MsgList() = default;
  ~MsgList() { natsMsgList_Destroy(&list_); }
  MsgList(const MsgList&) = delete;
  MsgList& operator=(const MsgList&) = delete;
  natsMsgList* get() { return &list_; }
  int size() const { return list_.Count; }
  natsMsg* operator[](int i) const { return list_.Msgs[i]; }

 private:
  natsMsgList list_ = {nullptr, 0};
};

}  // namespace agentckpt::nats_handles
