// The encoding of static columns: z-scores for numbers, vocabulary codes for categories,
// fit on the training series and stored with the model (JSON) so predict encodes alike.
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::quote_token;

namespace {

const char* kind_word(bool categorical) {
  return categorical ? "categorical" : "numeric";
}

size_t column_size(const StaticColumn& c) {
  return c.categorical ? c.text.size() : c.numeric.size();
}

// Series count shared by every column; columns of different lengths cannot describe the
// same series.
size_t series_count(const std::vector<StaticColumn>& cols) {
  const size_t n = cols.empty() ? 0 : column_size(cols[0]);
  for (const StaticColumn& c : cols) {
    if (column_size(c) == n) continue;
    throw InputError("static column '" + quote_token(c.name) + "': found " +
                     std::to_string(column_size(c)) + " series, expected " + std::to_string(n) +
                     " like column '" + quote_token(cols[0].name) + "'");
  }
  return n;
}

StaticEncoder::Column fit_numeric(const StaticColumn& c) {
  StaticEncoder::Column e{c.name, false, 0.0f, 1.0f, {}};
  if (c.numeric.empty()) return e;
  // Two passes in double, in series order: exact enough and the same at any thread count.
  double sum = 0;
  for (float v : c.numeric) sum += v;
  const double mean = sum / static_cast<double>(c.numeric.size());
  double ss = 0;
  for (float v : c.numeric) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / static_cast<double>(c.numeric.size()));
  e.mean = static_cast<float>(mean);
  // A column the same for every training series is only centred.
  e.scale = sd > 0 && std::isfinite(sd) && static_cast<float>(sd) > 0 ? static_cast<float>(sd) : 1;
  return e;
}

StaticEncoder::Column fit_categorical(const StaticColumn& c) {
  StaticEncoder::Column e{c.name, true, 0.0f, 1.0f, {}};
  std::unordered_map<std::string, size_t> seen;
  for (const std::string& t : c.text) {
    if (seen.emplace(t, e.categories.size()).second) e.categories.push_back(t);
  }
  return e;
}

[[noreturn]] void bad_key(const std::string& where, const nlohmann::json* found,
                          const std::string& expected) {
  // Replaced, not thrown on: a hand-built object may hold bytes that are not UTF-8.
  const auto shown = [&] {
    return printable_excerpt(found->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                             60);
  };
  throw InputError(where + ": " + (found ? "found " + shown() : "missing") + ", expected " +
                   expected);
}

float float_key(const nlohmann::json& col, const std::string& where, const char* key,
                bool positive) {
  const std::string at = where + "." + key;
  if (!col.contains(key)) bad_key(at, nullptr, "a number");
  const nlohmann::json& v = col.at(key);
  const double d = v.is_number() ? v.get<double>() : std::nan("");
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max() ||
      (positive && !(static_cast<float>(d) > 0))) {
    bad_key(at, &v, positive ? "a finite number > 0" : "a finite number");
  }
  return static_cast<float>(d);
}

std::vector<std::string> categories_key(const nlohmann::json& col, const std::string& where) {
  const std::string at = where + ".categories";
  if (!col.contains("categories")) bad_key(at, nullptr, "an array of category names");
  const nlohmann::json& v = col.at("categories");
  if (!v.is_array()) bad_key(at, &v, "an array of category names");
  std::vector<std::string> out;
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item = at + "[" + std::to_string(i) + "]";
    if (!v[i].is_string()) bad_key(item, &v[i], "a string");
    // A name twice would give one category two codes.
    if (!seen.emplace(v[i].get<std::string>(), i).second) bad_key(item, &v[i], "each name once");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

StaticEncoder::Column column_from_json(const nlohmann::json& col, const std::string& where) {
  if (!col.is_object()) bad_key(where, &col, "an object with name and kind");
  StaticEncoder::Column e;
  if (!col.contains("name") || !col.at("name").is_string() ||
      col.at("name").get<std::string>().empty()) {
    bad_key(where + ".name", col.contains("name") ? &col.at("name") : nullptr, "a column name");
  }
  e.name = col.at("name").get<std::string>();
  const nlohmann::json* kind = col.contains("kind") ? &col.at("kind") : nullptr;
  if (!kind || !kind->is_string() || (*kind != "numeric" && *kind != "categorical")) {
    bad_key(where + ".kind", kind, "\"numeric\" or \"categorical\"");
  }
  e.categorical = *kind == "categorical";
  if (e.categorical) {
    e.categories = categories_key(col, where);
  } else {
    e.mean = float_key(col, where, "mean", false);
    e.scale = float_key(col, where, "scale", true);
  }
  return e;
}

// The columns to encode must be the model's, by name and kind, in its order: a model reads
// its static inputs by position.
void check_same_columns(const std::vector<StaticEncoder::Column>& columns,
                        const std::vector<StaticColumn>& cols) {
  std::vector<std::string> expected;
  for (const StaticEncoder::Column& c : columns)
    expected.push_back(c.name + " (" + kind_word(c.categorical) + ")");
  for (size_t i = 0; i < std::max(cols.size(), columns.size()); ++i) {
    if (i < cols.size() && i < columns.size() && cols[i].name == columns[i].name &&
        cols[i].categorical == columns[i].categorical) {
      continue;
    }
    const std::string found = i < cols.size() ? "'" + quote_token(cols[i].name) + "' (" +
                                                    kind_word(cols[i].categorical) + ")"
                                              : "no column";
    throw InputError("static column " + std::to_string(i + 1) + ": found " + found +
                     ", expected the model's static columns: " +
                     (expected.empty() ? std::string("none") : detail::join(expected)));
  }
}

}  // namespace

StaticEncoder StaticEncoder::fit(const std::vector<StaticColumn>& cols) {
  series_count(cols);
  StaticEncoder enc;
  for (const StaticColumn& c : cols) {
    enc.columns.push_back(c.categorical ? fit_categorical(c) : fit_numeric(c));
  }
  return enc;
}

size_t StaticEncoder::numeric_width() const {
  size_t n = 0;
  for (const Column& c : columns) n += c.categorical ? 0 : 1;
  return n;
}

size_t StaticEncoder::categorical_width() const {
  return columns.size() - numeric_width();
}

std::vector<int> StaticEncoder::category_sizes() const {
  std::vector<int> out;
  for (const Column& c : columns) {
    if (c.categorical) out.push_back(static_cast<int>(c.categories.size()) + 1);
  }
  return out;
}

size_t StaticEncoder::encode(const std::vector<StaticColumn>& cols, std::vector<float>* numeric,
                             std::vector<int32_t>* codes) const {
  check_same_columns(columns, cols);
  const size_t n = series_count(cols), nw = numeric_width(), cw = categorical_width();
  numeric->assign(n * nw, 0.0f);
  codes->assign(n * cw, 0);
  size_t unseen = 0, ni = 0, ci = 0;
  for (size_t k = 0; k < columns.size(); ++k) {
    const Column& e = columns[k];
    if (!e.categorical) {
      for (size_t s = 0; s < n; ++s) {
        (*numeric)[s * nw + ni] =
            static_cast<float>((cols[k].numeric[s] - double{e.mean}) / e.scale);
      }
      ++ni;
      continue;
    }
    std::unordered_map<std::string_view, int32_t> code;
    for (size_t i = 0; i < e.categories.size(); ++i)
      code.emplace(e.categories[i], static_cast<int32_t>(i + 1));
    for (size_t s = 0; s < n; ++s) {
      const auto it = code.find(cols[k].text[s]);
      (*codes)[s * cw + ci] = it == code.end() ? 0 : it->second;
      unseen += it == code.end() ? 1 : 0;
    }
    ++ci;
  }
  return unseen;
}

nlohmann::json StaticEncoder::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Column& c : columns) {
    nlohmann::json o = {{"name", c.name}, {"kind", kind_word(c.categorical)}};
    if (c.categorical) {
      o["categories"] = c.categories;
    } else {
      o["mean"] = c.mean;
      o["scale"] = c.scale;
    }
    list.push_back(std::move(o));
  }
  return {{"columns", std::move(list)}};
}

StaticEncoder StaticEncoder::from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) bad_key(what, &j, "an object with the key columns");
  const nlohmann::json* list = j.is_object() && j.contains("columns") ? &j.at("columns") : nullptr;
  if (!list || !list->is_array()) {
    bad_key(what + ".columns", list, "an array of static columns");
  }
  StaticEncoder enc;
  for (size_t i = 0; i < list->size(); ++i) {
    enc.columns.push_back(
        column_from_json((*list)[i], what + ".columns[" + std::to_string(i) + "]"));
    for (size_t k = 0; k < i; ++k) {
      if (enc.columns[k].name != enc.columns[i].name) continue;
      bad_key(what + ".columns[" + std::to_string(i) + "].name", &(*list)[i].at("name"),
              "a name not used by an earlier column");
    }
  }
  return enc;
}

}  // namespace attnfc::data
