#include "tools/firestore_emulator/document_db.h"

#include <chrono>
#include <cmath>

#include "common/status_macros.h"
#include "store/firestore/firestore_value.h"

namespace agentckpt::emulator {
namespace {

using nlohmann::json;

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Sets (or with `value` null, removes) the field at `parts` inside a fields map.
void SetField(json* fields, const std::vector<std::string>& parts, size_t i, const json* value) {
  if (i + 1 == parts.size()) {
    if (value) {
      (*fields)[parts[i]] = *value;
    } else {
      fields->erase(parts[i]);
    }
    return;
  }
  json& child = (*fields)[parts[i]];
  if (!child.is_object() || !child.contains("mapValue")) child = {{"mapValue", json::object()}};
  json& inner = child["mapValue"]["fields"];
  if (!inner.is_object()) inner = json::object();
  SetField(&inner, parts, i + 1, value);
}

bool IsInteger(const json& v) { return v.is_object() && v.contains("integerValue"); }

int64_t IntegerOf(const json& v) {
  const json& i = v["integerValue"];
  return i.is_string() ? std::stoll(i.get<std::string>()) : i.get<int64_t>();
}

double NumberOf(const json& v) {
  if (IsInteger(v)) return static_cast<double>(IntegerOf(v));
  return v.value("doubleValue", 0.0);
}

bool IsNumber(const json& v) {
  return v.is_object() && (v.contains("integerValue") || v.contains("doubleValue"));
}

// Applies one FieldTransform to `fields`; returns the transform result value.
StatusOr<json> ApplyTransform(json* fields, const json& t, int64_t commit_us) {
  if (!t.contains("fieldPath") || !t["fieldPath"].is_string()) {
    return InvalidArgumentError("FieldTransform.fieldPath is required");
  }
  std::vector<std::string> parts = SplitFieldPath(t["fieldPath"].get<std::string>());
  const json* current = FindField(*fields, t["fieldPath"].get<std::string>());
  json result;
  if (t.contains("setToServerValue")) {
    result = {{"timestampValue", FormatRfc3339Micros(commit_us)}};
  } else if (t.contains("increment") || t.contains("maximum") || t.contains("minimum")) {
    const char* op = t.contains("increment") ? "increment"
                     : t.contains("maximum") ? "maximum"
                                             : "minimum";
    const json& operand = t[op];
    if (!IsNumber(operand)) return InvalidArgumentError(std::string(op) + " needs a number");
    if (current == nullptr || !IsNumber(*current)) {
      result = operand;
    } else if (IsInteger(*current) && IsInteger(operand)) {
      int64_t a = IntegerOf(*current), b = IntegerOf(operand);
      int64_t r = std::string(op) == "increment" ? a + b
                  : std::string(op) == "maximum" ? std::max(a, b)
                                                 : std::min(a, b);
      result = {{"integerValue", std::to_string(r)}};
    } else {
      double a = NumberOf(*current), b = NumberOf(operand);
      double r = std::string(op) == "increment" ? a + b
                 : std::string(op) == "maximum" ? std::max(a, b)
                                                : std::min(a, b);
      result = {{"doubleValue", r}};
    }
  } else if (t.contains("appendMissingElements") || t.contains("removeAllFromArray")) {
    bool append = t.contains("appendMissingElements");
    const json& operand = append ? t["appendMissingElements"] : t["removeAllFromArray"];
    json values = json::array();
    if (current && current->contains("arrayValue") && (*current)["arrayValue"].contains("values")) {
      values = (*current)["arrayValue"]["values"];
    }
    json adds = operand.value("values", json::array());
    json out = json::array();
    if (append) {
      out = values;
      for (const json& a : adds) {
        bool present = false;
        for (const json& v : out) present = present || CompareValues(a, v) == 0;
        if (!present) out.push_back(a);
      }
    } else {
      for (const json& v : values) {
        bool removed = false;
        for (const json& a : adds) removed = removed || CompareValues(a, v) == 0;
        if (!removed) out.push_back(v);
      }
    }
    result = {{"arrayValue", out.empty() ? json::object() : json{{"values", out}}}};
  } else {
    return InvalidArgumentError("unsupported FieldTransform");
  }
  SetField(fields, parts, 0, &result);
  if (t.contains("setToServerValue")) return json{{"nullValue", nullptr}};
  return result;
}

}  // namespace

std::vector<std::string> SplitFieldPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '`') {
      quoted = !quoted;
    } else if (c == '\\' && quoted && i + 1 < path.size()) {
      cur += path[++i];
    } else if (c == '.' && !quoted) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

const json* FindField(const json& fields, const std::string& path) {
  const json* cur = &fields;
  std::vector<std::string> parts = SplitFieldPath(path);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(parts[i]);
    if (it == cur->end()) return nullptr;
    if (i + 1 == parts.size()) return &*it;
    if (!it->is_object() || !it->contains("mapValue")) return nullptr;
    const json& map = (*it)["mapValue"];
    if (!map.contains("fields")) return nullptr;
    cur = &map["fields"];
  }
  return nullptr;
}

json DocumentDb::ToJson(const std::string& name, const Doc& doc) {
  return {{"name", name},
          {"fields", doc.fields},
          {"createTime", FormatRfc3339Micros(doc.create_us)},
          {"updateTime", FormatRfc3339Micros(doc.update_us)}};
}

std::string DocumentDb::Now() { return FormatRfc3339Micros(WallMicros()); }

int64_t DocumentDb::NextCommitMicrosLocked() {
  last_commit_us_ = std::max(last_commit_us_ + 1, WallMicros());
  return last_commit_us_;
}

std::optional<json> DocumentDb::Get(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = docs_.find(name);
  if (it == docs_.end()) return std::nullopt;
  return ToJson(name, it->second);
}

std::vector<json> DocumentDb::ListCollection(const std::string& collection_name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<json> out;
  const std::string prefix = collection_name + "/";
  for (auto it = docs_.lower_bound(prefix); it != docs_.end(); ++it) {
    if (it->first.rfind(prefix, 0) != 0) break;
    if (it->first.find('/', prefix.size()) != std::string::npos) continue;
    out.push_back(ToJson(it->first, it->second));
  }
  return out;
}

Status DocumentDb::CheckPrecondition(const std::string& name, const Doc* doc,
                                     const json& precondition) {
  if (!precondition.is_object() || precondition.empty()) return OkStatus();
  if (precondition.contains("exists")) {
    bool want = precondition["exists"].is_boolean() ? precondition["exists"].get<bool>()
                                                    : precondition["exists"] == "true";
    if (want && doc == nullptr) return NotFoundError("No document to update: " + name);
    if (!want && doc != nullptr) return AlreadyExistsError("Document already exists: " + name);
  }
  if (precondition.contains("updateTime")) {
    if (!precondition["updateTime"].is_string()) {
      return InvalidArgumentError("currentDocument.updateTime must be a timestamp");
    }
    auto want = ParseRfc3339Micros(precondition["updateTime"].get<std::string>());
    if (!want.ok()) return InvalidArgumentError("currentDocument.updateTime: bad timestamp");
    if (doc == nullptr || doc->update_us != *want) {
      return FailedPreconditionError(
          "the stored version (" +
          (doc == nullptr ? std::string("none") : FormatRfc3339Micros(doc->update_us)) +
          ") does not match the required base version (" + FormatRfc3339Micros(*want) + ")");
    }
  }
  return OkStatus();
}

Status DocumentDb::ApplyWriteLocked(const json& write, int64_t commit_us,
                                    std::map<std::string, Doc>* staged, json* result) {
  *result = json::object();
  auto current = [&](const std::string& name) -> Doc* {
    auto s = staged->find(name);
    if (s != staged->end()) return &s->second;
    return nullptr;
  };
  if (write.contains("delete")) {
    std::string name = write["delete"].get<std::string>();
    (*staged)[name] = Doc{json(), 0, -1};  // update_us -1 marks a deletion
    return OkStatus();
  }
  const json* transforms = nullptr;
  std::string name;
  Doc doc;
  Doc* existing = nullptr;
  if (write.contains("update")) {
    const json& update = write["update"];
    name = update.value("name", "");
    existing = current(name);
    bool exists = existing != nullptr && existing->update_us >= 0;
    json fields = update.value("fields", json::object());
    if (write.contains("updateMask")) {
      doc.fields = exists ? existing->fields : json::object();
      for (const json& p : write["updateMask"].value("fieldPaths", json::array())) {
        std::string path = p.get<std::string>();
        SetField(&doc.fields, SplitFieldPath(path), 0, FindField(fields, path));
      }
    } else {
      doc.fields = fields;
    }
    doc.create_us = exists ? existing->create_us : commit_us;
    if (write.contains("updateTransforms")) transforms = &write["updateTransforms"];
  } else if (write.contains("transform")) {
    name = write["transform"].value("document", "");
    existing = current(name);
    bool exists = existing != nullptr && existing->update_us >= 0;
    doc.fields = exists ? existing->fields : json::object();
    doc.create_us = exists ? existing->create_us : commit_us;
    transforms = &write["transform"]["fieldTransforms"];
  } else {
    return InvalidArgumentError("a Write needs update, delete or transform");
  }
  if (name.empty()) return InvalidArgumentError("a Write needs a document name");
  doc.update_us = commit_us;
  if (transforms != nullptr) {
    json results = json::array();
    for (const json& t : *transforms) {
      ASSIGN_OR_RETURN(json r, ApplyTransform(&doc.fields, t, commit_us));
      results.push_back(std::move(r));
    }
    (*result)["transformResults"] = results;
  }
  (*result)["updateTime"] = FormatRfc3339Micros(commit_us);
  (*staged)[name] = std::move(doc);
  return OkStatus();
}

StatusOr<json> DocumentDb::Commit(const json& writes) {
  if (!writes.is_array()) return InvalidArgumentError("writes must be an array");
  std::lock_guard<std::mutex> lock(mu_);
  // Preconditions see the state before the commit; each write sees the ones before it.
  std::map<std::string, Doc> staged;
  for (const json& w : writes) {
    std::string name = w.contains("delete") ? w["delete"].get<std::string>()
                       : w.contains("update")
                           ? w["update"].value("name", "")
                           : w.value("transform", json::object()).value("document", "");
    if (!staged.count(name)) {
      auto it = docs_.find(name);
      if (it != docs_.end()) staged[name] = it->second;
    }
  }
  json results = json::array();
  int64_t commit_us = NextCommitMicrosLocked();
  for (const json& w : writes) {
    if (w.contains("currentDocument")) {
      std::string name = w.contains("delete")   ? w["delete"].get<std::string>()
                         : w.contains("update") ? w["update"].value("name", "")
                                                : w["transform"].value("document", "");
      // Evaluated against the state so far (earlier writes of this commit count).
      auto it = staged.find(name);
      const Doc* doc = it != staged.end() && it->second.update_us >= 0 ? &it->second : nullptr;
      Status s = CheckPrecondition(name, doc, w["currentDocument"]);
      RETURN_IF_ERROR(s);
    }
    json r;
    RETURN_IF_ERROR(ApplyWriteLocked(w, commit_us, &staged, &r));
    results.push_back(std::move(r));
  }
  for (const json& w : writes) {
    ++writes_by_doc_[w.contains("delete")   ? w["delete"].get<std::string>()
                     : w.contains("update") ? w["update"].value("name", "")
                                            : w["transform"].value("document", "")];
  }
  for (auto& [name, doc] : staged) {
    if (doc.update_us < 0) {
      docs_.erase(name);
    } else {
      docs_[name] = std::move(doc);
    }
  }
  return json{{"writeResults", results}, {"commitTime", FormatRfc3339Micros(commit_us)}};
}

StatusOr<json> DocumentDb::Patch(const std::string& name, const json& fields,
                                 const std::optional<std::vector<std::string>>& mask,
                                 const json& precondition) {
  json write = {{"update", {{"name", name}, {"fields", fields}}}};
  if (mask.has_value()) write["updateMask"] = {{"fieldPaths", *mask}};
  if (precondition.is_object() && !precondition.empty()) write["currentDocument"] = precondition;
  RETURN_IF_ERROR(Commit(json::array({write})).status());
  auto doc = Get(name);
  if (!doc.has_value()) return InternalError("patched document vanished");
  return *doc;
}

Status DocumentDb::Delete(const std::string& name, const json& precondition) {
  json write = {{"delete", name}};
  if (precondition.is_object() && !precondition.empty()) write["currentDocument"] = precondition;
  return Commit(json::array({write})).status();
}

json DocumentDb::WriteCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  json hottest = {{"name", ""}, {"writes", 0}};
  uint64_t total = 0;
  for (const auto& [name, n] : writes_by_doc_) {
    total += n;
    if (n > hottest["writes"].get<uint64_t>()) hottest = {{"name", name}, {"writes", n}};
  }
  return {{"documents", writes_by_doc_.size()}, {"writes", total}, {"hottest", hottest}};
}

void DocumentDb::ResetWriteCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  writes_by_doc_.clear();
}

void DocumentDb::Clear(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = docs_.lower_bound(prefix); it != docs_.end();) {
    if (it->first.rfind(prefix, 0) != 0) break;
    it = docs_.erase(it);
  }
}

}  // namespace agentckpt::emulator
