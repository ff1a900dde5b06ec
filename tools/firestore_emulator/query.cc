// DocumentDb::RunQuery and Firestore's value ordering.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "common/status_macros.h"
#include "store/firestore/firestore_value.h"
#include "tools/firestore_emulator/document_db.h"

namespace agentckpt::emulator {
namespace {

using nlohmann::json;

int TypeRank(const json& v) {
  if (!v.is_object() || v.empty()) return 0;
  const std::string& k = v.begin().key();
  if (k == "nullValue") return 0;
  if (k == "booleanValue") return 1;
  if (k == "integerValue" || k == "doubleValue") return 2;
  if (k == "timestampValue") return 3;
  if (k == "stringValue") return 4;
  if (k == "bytesValue") return 5;
  if (k == "referenceValue") return 6;
  if (k == "geoPointValue") return 7;
  if (k == "arrayValue") return 8;
  return 9;  // mapValue
}

double AsDouble(const json& v) {
  if (v.contains("integerValue")) {
    const json& i = v["integerValue"];
    return i.is_string() ? std::stod(i.get<std::string>()) : i.get<double>();
  }
  const json& d = v["doubleValue"];
  if (d.is_string()) {  // "NaN", "Infinity", "-Infinity"
    std::string s = d.get<std::string>();
    return s == "NaN" ? std::nan("") : (s[0] == '-' ? -INFINITY : INFINITY);
  }
  return d.get<double>();
}

int64_t AsMicros(const json& v) {
  auto us = ParseRfc3339Micros(v["timestampValue"].get<std::string>());
  return us.ok() ? *us : 0;
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Enum values arrive as names or, from clients using enum-encoding=int, as numbers.
std::string EnumName(const json& v, const std::vector<const char*>& names) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) {
    int i = v.get<int>();
    if (i >= 0 && i < static_cast<int>(names.size())) return names[i];
  }
  return "";
}

const std::vector<const char*> kFieldOps = {"OPERATOR_UNSPECIFIED",
                                            "LESS_THAN",
                                            "LESS_THAN_OR_EQUAL",
                                            "GREATER_THAN",
                                            "GREATER_THAN_OR_EQUAL",
                                            "EQUAL",
                                            "NOT_EQUAL",
                                            "ARRAY_CONTAINS",
                                            "IN",
                                            "ARRAY_CONTAINS_ANY",
                                            "NOT_IN"};
const std::vector<const char*> kUnaryOps = {
    "OPERATOR_UNSPECIFIED", "", "IS_NAN", "IS_NULL", "IS_NOT_NAN", "IS_NOT_NULL"};
const std::vector<const char*> kCompositeOps = {"OPERATOR_UNSPECIFIED", "AND", "OR"};
const std::vector<const char*> kDirections = {"DIRECTION_UNSPECIFIED", "ASCENDING", "DESCENDING"};

// A document as queries see it: its name and fields, without copying them.
struct DocView {
  const std::string* name;
  const json* fields;
};

json FieldValue(const DocView& doc, const std::string& path) {
  if (path == "__name__") return {{"referenceValue", *doc.name}};
  const json* v = FindField(*doc.fields, path);
  return v ? *v : json();
}

StatusOr<bool> Matches(const DocView& doc, const json& filter) {
  if (filter.contains("compositeFilter")) {
    const json& c = filter["compositeFilter"];
    std::string op = EnumName(c.value("op", json()), kCompositeOps);
    if (op != "AND" && op != "OR") return InvalidArgumentError("unsupported composite op " + op);
    bool all = true, any = false;
    for (const json& f : c.value("filters", json::array())) {
      ASSIGN_OR_RETURN(bool m, Matches(doc, f));
      all = all && m;
      any = any || m;
    }
    return op == "AND" ? all : any;
  }
  if (filter.contains("unaryFilter")) {
    const json& u = filter["unaryFilter"];
    std::string op = EnumName(u.value("op", json()), kUnaryOps);
    json v = FieldValue(doc, u["field"].value("fieldPath", ""));
    if (v.is_null()) return false;
    bool is_null = v.contains("nullValue");
    bool is_nan = v.contains("doubleValue") && std::isnan(AsDouble(v));
    if (op == "IS_NULL") return is_null;
    if (op == "IS_NOT_NULL") return !is_null;
    if (op == "IS_NAN") return is_nan;
    if (op == "IS_NOT_NAN") return !is_nan && !is_null;
    return InvalidArgumentError("unsupported unary op " + op);
  }
  if (filter.contains("fieldFilter")) {
    const json& f = filter["fieldFilter"];
    std::string op = EnumName(f.value("op", json()), kFieldOps);
    json v = FieldValue(doc, f["field"].value("fieldPath", ""));
    const json& want = f["value"];
    if (v.is_null()) return false;  // documents without the field never match
    auto in_array = [&](const json& needle, const json& arr) {
      for (const json& e : arr.value("arrayValue", json::object()).value("values", json::array())) {
        if (CompareValues(needle, e) == 0) return true;
      }
      return false;
    };
    int c = CompareValues(v, want);
    bool same_type = TypeRank(v) == TypeRank(want);
    if (op == "EQUAL") return c == 0;
    if (op == "NOT_EQUAL") return c != 0 && !v.contains("nullValue");
    if (op == "LESS_THAN") return same_type && c < 0;
    if (op == "LESS_THAN_OR_EQUAL") return same_type && c <= 0;
    if (op == "GREATER_THAN") return same_type && c > 0;
    if (op == "GREATER_THAN_OR_EQUAL") return same_type && c >= 0;
    if (op == "IN") return in_array(v, want);
    if (op == "NOT_IN") return !in_array(v, want) && !v.contains("nullValue");
    if (op == "ARRAY_CONTAINS") return in_array(want, v);
    if (op == "ARRAY_CONTAINS_ANY") {
      for (const json& e :
           want.value("arrayValue", json::object()).value("values", json::array())) {
        if (in_array(e, v)) return true;
      }
      return false;
    }
    return InvalidArgumentError("unsupported field filter op " + op);
  }
  return InvalidArgumentError("unsupported filter");
}

// The first field with an inequality filter, which Firestore orders by implicitly.
std::string InequalityField(const json& filter) {
  if (filter.contains("compositeFilter")) {
    for (const json& f : filter["compositeFilter"].value("filters", json::array())) {
      std::string s = InequalityField(f);
      if (!s.empty()) return s;
    }
  }
  if (filter.contains("fieldFilter")) {
    std::string op = EnumName(filter["fieldFilter"].value("op", json()), kFieldOps);
    if (op.find("THAN") != std::string::npos || op == "NOT_EQUAL" || op == "NOT_IN") {
      return filter["fieldFilter"]["field"].value("fieldPath", "");
    }
  }
  return "";
}

int LimitOf(const json& v) {
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_object() && v.contains("value")) return v["value"].get<int>();
  return -1;
}

}  // namespace

int CompareValues(const json& a, const json& b) {
  int ra = TypeRank(a), rb = TypeRank(b);
  if (ra != rb) return Cmp(ra, rb);
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return Cmp(a["booleanValue"].get<bool>(), b["booleanValue"].get<bool>());
    case 2: {
      if (a.contains("integerValue") && b.contains("integerValue")) {
        auto ia = a["integerValue"], ib = b["integerValue"];
        int64_t x = ia.is_string() ? std::stoll(ia.get<std::string>()) : ia.get<int64_t>();
        int64_t y = ib.is_string() ? std::stoll(ib.get<std::string>()) : ib.get<int64_t>();
        return Cmp(x, y);
      }
      double x = AsDouble(a), y = AsDouble(b);
      if (std::isnan(x) || std::isnan(y)) return Cmp(!std::isnan(x), !std::isnan(y));
      return Cmp(x, y);
    }
    case 3:
      return Cmp(AsMicros(a), AsMicros(b));
    case 4:
      return Cmp(a["stringValue"].get<std::string>(), b["stringValue"].get<std::string>());
    case 5:
      return Cmp(a["bytesValue"].get<std::string>(), b["bytesValue"].get<std::string>());
    case 6:
      return Cmp(a["referenceValue"].get<std::string>(), b["referenceValue"].get<std::string>());
    case 7:
      return Cmp(a["geoPointValue"].dump(), b["geoPointValue"].dump());
    case 8: {
      json va = a["arrayValue"].value("values", json::array());
      json vb = b["arrayValue"].value("values", json::array());
      for (size_t i = 0; i < va.size() && i < vb.size(); ++i) {
        int c = CompareValues(va[i], vb[i]);
        if (c != 0) return c;
      }
      return Cmp(va.size(), vb.size());
    }
    default: {
      json fa = a["mapValue"].value("fields", json::object());
      json fb = b["mapValue"].value("fields", json::object());
      auto ia = fa.begin(), ib = fb.begin();  // keys are sorted
      for (; ia != fa.end() && ib != fb.end(); ++ia, ++ib) {
        if (ia.key() != ib.key()) return Cmp(ia.key(), ib.key());
        int c = CompareValues(ia.value(), ib.value());
        if (c != 0) return c;
      }
      return Cmp(fa.size(), fb.size());
    }
  }
}

StatusOr<std::vector<json>> DocumentDb::RunQuery(const std::string& parent, const json& query) {
  const json& from = query.value("from", json::array());
  if (!from.is_array() || from.size() != 1 || !from[0].contains("collectionId")) {
    return InvalidArgumentError("StructuredQuery.from must name exactly one collection");
  }
  const std::string collection = from[0]["collectionId"].get<std::string>();
  const bool all_descendants = from[0].value("allDescendants", false);

  std::lock_guard<std::mutex> lock(mu_);  // held for the whole query: documents are not copied
  std::vector<DocView> matched;
  const std::string prefix = parent + "/";
  for (auto it = docs_.lower_bound(prefix); it != docs_.end(); ++it) {
    if (it->first.rfind(prefix, 0) != 0) break;
    std::string_view rest = std::string_view(it->first).substr(prefix.size());
    size_t last = rest.rfind('/');
    if (last == std::string::npos) continue;
    std::string_view coll_path = rest.substr(0, last);
    size_t coll_slash = coll_path.rfind('/');
    std::string_view coll_id =
        coll_slash == std::string::npos ? coll_path : coll_path.substr(coll_slash + 1);
    bool direct = coll_slash == std::string::npos;
    if (coll_id != collection || (!direct && !all_descendants)) continue;
    DocView view{&it->first, &it->second.fields};
    bool keep = true;
    if (query.contains("where")) {
      ASSIGN_OR_RETURN(keep, Matches(view, query["where"]));
    }
    if (keep) matched.push_back(view);
  }

  // Ordering: explicit orderBy, else the inequality field, then __name__ in the last direction.
  std::vector<std::pair<std::string, bool>> order;  // field, descending
  for (const json& o : query.value("orderBy", json::array())) {
    std::string dir = EnumName(o.value("direction", json("ASCENDING")), kDirections);
    order.emplace_back(o["field"].value("fieldPath", ""), dir == "DESCENDING");
  }
  if (order.empty() && query.contains("where")) {
    std::string f = InequalityField(query["where"]);
    if (!f.empty()) order.emplace_back(f, false);
  }
  bool last_desc = order.empty() ? false : order.back().second;
  if (order.empty() || order.back().first != "__name__") order.emplace_back("__name__", last_desc);
  // Documents without an ordered field are not in the result.
  std::erase_if(matched, [&](const DocView& d) {
    for (const auto& [f, desc] : order) {
      if (f != "__name__" && FindField(*d.fields, f) == nullptr) return true;
    }
    return false;
  });
  std::stable_sort(matched.begin(), matched.end(), [&](const DocView& a, const DocView& b) {
    for (const auto& [f, desc] : order) {
      int c = f == "__name__" ? (*a.name < *b.name ? -1 : (*b.name < *a.name ? 1 : 0))
                              : CompareValues(*FindField(*a.fields, f), *FindField(*b.fields, f));
      if (c != 0) return desc ? c > 0 : c < 0;
    }
    return false;
  });

  int offset = query.contains("offset") ? LimitOf(query["offset"]) : 0;
  if (offset > 0) {
    matched.erase(matched.begin(), matched.begin() + std::min<size_t>(offset, matched.size()));
  }
  int limit = query.contains("limit") ? LimitOf(query["limit"]) : -1;
  if (limit >= 0 && static_cast<size_t>(limit) < matched.size()) matched.resize(limit);

  std::vector<json> out;
  for (const DocView& d : matched) {
    const Doc& stored = docs_.at(*d.name);
    if (!query.contains("select")) {
      out.push_back(ToJson(*d.name, stored));
      continue;
    }
    json doc = ToJson(*d.name, Doc{json::object(), stored.create_us, stored.update_us});
    {
      json projected = json::object();
      for (const json& f : query["select"].value("fields", json::array())) {
        std::string path = f.value("fieldPath", "");
        if (path == "__name__") continue;
        const json* v = FindField(*d.fields, path);
        if (v != nullptr) projected[SplitFieldPath(path)[0]] = *v;  // top-level paths
      }
      doc["fields"] = std::move(projected);
    }
    out.push_back(std::move(doc));
  }
  return out;
}

}  // namespace agentckpt::emulator
