#include "tracing/tracer.h"

#include <algorithm>
#include <exception>

namespace agentckpt::tracing {
namespace {

using Clock = std::chrono::steady_clock;

// How often a changed count of dropped spans is reported at most.
constexpr auto kDropReportInterval = std::chrono::seconds(10);

}  // namespace

Tracer::Tracer(Env* env, std::unique_ptr<SpanExporter> exporter, BatchOptions options,
               std::function<void(const std::string&, const nlohmann::json&)> report)
    : env_(env),
      exporter_(std::move(exporter)),
      options_(options),
      report_(std::move(report)),
      unix_minus_monotonic_micros_(env->NowUnixMillis() * 1000 - env->NowMonotonicMicros()) {
  options_.max_queue = std::max<size_t>(1, options_.max_queue);
  options_.max_batch = std::clamp<size_t>(options_.max_batch, 1, options_.max_queue);
  options_.schedule_delay_ms = std::max<int64_t>(1, options_.schedule_delay_ms);
  options_.export_timeout_ms = std::max<int64_t>(1, options_.export_timeout_ms);
  thread_ = std::thread([this] { Loop(); });
}

Tracer::~Tracer() { Shutdown(0); }

Span Tracer::Start(std::string_view name, SpanKind kind, const TraceContext& parent,
                   int64_t start_monotonic_micros) {
  TraceContext ctx;
  if (parent.valid()) {
    ctx.trace_id = parent.trace_id;
    ctx.sampled = parent.sampled;
  } else if (!env_->RandomBytes(ctx.trace_id.data(), ctx.trace_id.size()).ok()) {
    return Span();
  } else {
    ctx.sampled = true;
  }
  if (!env_->RandomBytes(ctx.span_id.data(), ctx.span_id.size()).ok() || !ctx.valid()) {
    return Span();
  }
  if (!ctx.sampled) return Span(this, nullptr, ctx);
  auto data = std::make_unique<SpanData>();
  data->context = ctx;
  if (parent.valid()) data->parent_span_id = parent.span_id;
  data->name = std::string(name);
  data->kind = kind;
  data->start_unix_nanos = UnixNanosAt(start_monotonic_micros);
  return Span(this, std::move(data), ctx);
}

void Tracer::Submit(std::unique_ptr<SpanData> span) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= options_.max_queue) {
      dropped_.fetch_add(1);
      return;
    }
    queue_.push_back(std::move(span));
    ++submitted_;
    wake = queue_.size() >= options_.max_batch;
  }
  if (wake) cv_.notify_one();
}

bool Tracer::ForceFlush(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = submitted_;
  flush_wanted_ = std::max(flush_wanted_, target);
  cv_.notify_one();
  return idle_cv_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms)), [&] {
    return handled_ >= target || done_;
  }) && handled_ >= target;
}

void Tracer::Shutdown(int64_t timeout_ms) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_deadline_ = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms));
    }
    cv_.notify_one();
    // Past the deadline an export in progress is cut off, so the join below is short.
    if (!idle_cv_.wait_until(lock, stop_deadline_, [this] { return done_; })) cancel_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Tracer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const auto wake = Clock::now() + std::chrono::milliseconds(options_.schedule_delay_ms);
    cv_.wait_until(lock, wake, [this] {
      return stopping_ || queue_.size() >= options_.max_batch || flush_wanted_ > handled_;
    });
    if (stopping_ && (queue_.empty() || Clock::now() >= stop_deadline_)) break;
    if (queue_.empty()) continue;
    const size_t n = std::min(queue_.size(), options_.max_batch);
    std::vector<std::unique_ptr<SpanData>> batch;
    batch.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    auto deadline = Clock::now() + std::chrono::milliseconds(options_.export_timeout_ms);
    if (stopping_) deadline = std::min(deadline, stop_deadline_);
    lock.unlock();
    ExportBatch(std::move(batch), deadline);
    ReportDrops(false);
    lock.lock();
    handled_ += n;
    idle_cv_.notify_all();
  }
  // Whatever the deadline left in the queue is lost.
  dropped_.fetch_add(queue_.size());
  queue_.clear();
  lock.unlock();
  ReportDrops(true);
  lock.lock();
  done_ = true;
  idle_cv_.notify_all();
}

void Tracer::ExportBatch(std::vector<std::unique_ptr<SpanData>> batch, Clock::time_point deadline) {
  Status s;
  try {
    s = exporter_->Export(batch, deadline, &cancel_);
  } catch (const std::exception& e) {
    s = InternalError(std::string("trace export: ") + e.what());
  }
  if (s.ok()) {
    exported_.fetch_add(batch.size());
    if (failing_ && report_) report_("trace export recovered", {{"spans", batch.size()}});
  } else {
    failed_.fetch_add(batch.size());
    // Reported when exports start failing, not for every batch after.
    if (!failing_ && report_) {
      report_("trace export failed; spans are lost until it recovers",
              {{"reason", s.ToString()}, {"spans", batch.size()}});
    }
  }
  failing_ = !s.ok();
}

void Tracer::ReportDrops(bool force) {
  const uint64_t dropped = dropped_.load();
  if (dropped == reported_drops_ || !report_) return;
  const auto now = Clock::now();
  if (!force && now - last_drop_report_ < kDropReportInterval) return;
  report_("spans dropped: the export queue was full or tracing shut down",
          {{"droppedTotal", dropped}, {"maxQueue", options_.max_queue}});
  reported_drops_ = dropped;
  last_drop_report_ = now;
}

}  // namespace agentckpt::tracing
