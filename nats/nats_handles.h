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
// Unsubscribes (best effort: the connection may be gone) and then frees the subscription.
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
