// Long format (a panel): grouping rows by series id, sorting each series by time, and the
// per-series checks and fills. Sized for many series: no allocation per row (ids are
// string_views into the table, found through an open-addressing hash; rows are placed by
// a counting sort), and an allocation per series only for its id.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data::detail {

namespace {

// Ids are short: whole 8-byte words mixed by a multiply are enough, and far quicker than
// a byte at a time.
uint64_t hash_id(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;  // mixed again at the end
  }
  uint64_t w = 0;
  if (s.size() >= 8) {
    std::memcpy(&w, s.data() + s.size() - 8, 8);  // the last word, overlapping: one load
  } else {
    for (; i < s.size(); ++i) w = w << 8 | static_cast<unsigned char>(s[i]);
  }
  // A multiply carries low bits only upwards: the final mix (MurmurHash3's) brings the
  // high bits, where an id's varying last characters land, down to the slot index.
  h ^= w;
  h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDull;
  h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

// Series id -> series number, numbered in order of first appearance. The ids are copied
// into one buffer so that comparing a row's id with a known one reads a few compact cache
// lines, not a first occurrence anywhere in the file.
class IdIndex {
 public:
  IdIndex() : slots_(1024, kEmpty) {}
  // h = hash_id(id).
  uint32_t find_or_add(std::string_view id, uint64_t h) {
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const uint64_t slot = slots_[i];
      if (slot == kEmpty) return add(id, h, i);
      const uint32_t k = static_cast<uint32_t>(slot);
      if (static_cast<uint32_t>(slot >> 32) == tag && key(k) == id) return k;
    }
  }
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }
  size_t size() const { return offsets_.size() - 1; }
  std::string_view key(size_t k) const {
    return std::string_view(text_).substr(offsets_[k], offsets_[k + 1] - offsets_[k]);
  }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  uint32_t add(std::string_view id, uint64_t h, size_t i) {
    const uint32_t k = static_cast<uint32_t>(size());
    slots_[i] = (h >> 32 << 32) | k;  // the hash's high half tags the slot
    text_.append(id);
    offsets_.push_back(text_.size());
    hashes_.push_back(h);
    if (2 * size() > slots_.size()) grow();
    return k;
  }
  void grow() {
    std::vector<uint64_t> bigger(2 * slots_.size(), kEmpty);
    for (uint32_t k = 0; k < size(); ++k) {
      size_t i = hashes_[k] & (bigger.size() - 1);
      while (bigger[i] != kEmpty) i = (i + 1) & (bigger.size() - 1);
      bigger[i] = (hashes_[k] >> 32 << 32) | k;
    }
    slots_.swap(bigger);
  }
  std::vector<uint64_t> slots_;  // hash tag << 32 | series number, or kEmpty
  std::string text_;             // the ids, one after another
  std::vector<size_t> offsets_ = {0};
  std::vector<uint64_t> hashes_;
};

// The series number of every data row; the ids in order of first appearance.
std::vector<uint32_t> number_series(const CsvTable& table, size_t id_col,
                                    std::vector<std::string>& ids) {
  const size_t n = table.num_rows();
  std::vector<uint32_t> series_of(n);
  IdIndex index;
  // With thousands of series, a row's slot is rarely in cache: hash kAhead rows ahead and
  // prefetch their slots, so the lookup does not wait for memory.
  constexpr size_t kAhead = 16;
  uint64_t ahead[kAhead];
  const auto id_of = [&](size_t r) { return trim_blanks(table.cell(r, id_col)); };
  for (size_t r = 0; r < n && r < kAhead; ++r) ahead[r] = hash_id(id_of(r));
  std::string_view last;
  uint32_t last_k = 0;
  for (size_t r = 0; r < n; ++r) {
    const std::string_view id = id_of(r);
    const uint64_t h = ahead[r % kAhead];
    if (r + kAhead < n) {
      ahead[r % kAhead] = hash_id(id_of(r + kAhead));
      index.prefetch(ahead[r % kAhead]);
    }
    if (id.empty()) {
      throw InputError(table.locate_cell(
          r, id_col,
          "found an empty series id, expected the id of the series this row belongs to"));
    }
    // Rows of one series usually come together: skip the lookup for a repeated id.
    if (r == 0 || id != last) last_k = index.find_or_add(id, h), last = id;
    series_of[r] = last_k;
  }
  ids.resize(index.size());
  for (size_t k = 0; k < ids.size(); ++k) ids[k] = index.key(k);
  return series_of;
}

// Sorts one series by time, stable (its rows arrive in file order), and refuses a time
// that appears twice. times/rows: the series' timestamps and table rows, side by side.
void sort_series(const CsvTable& table, size_t time_col, const TimeSeries& s,
                 const SeriesSegment& seg, std::vector<int64_t>& times, std::vector<size_t>& rows) {
  const auto tb = times.begin() + static_cast<std::ptrdiff_t>(seg.begin);
  const auto te = times.begin() + static_cast<std::ptrdiff_t>(seg.end);
  if (!std::is_sorted(tb, te)) {
    // (time, row) pairs in order are the stable order: rows increase within a series.
    std::vector<std::pair<int64_t, size_t>> pairs(seg.rows());
    for (size_t i = 0; i < pairs.size(); ++i) pairs[i] = {tb[i], rows[seg.begin + i]};
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size(); ++i) std::tie(tb[i], rows[seg.begin + i]) = pairs[i];
  }
  for (size_t i = seg.begin + 1; i < seg.end; ++i) {
    if (times[i] != times[i - 1]) continue;
    throw InputError(table.locate_cell(
        rows[i], time_col,
        "found duplicate time " + format_timestamp(times[i], s.time_style) + " in series '" +
            quote_token(seg.id) + "' (also on line " + std::to_string(table.line_of(rows[i - 1])) +
            "), expected each time once per series"));
  }
}

}  // namespace

void group_series(const CsvTable& table, size_t id_col, size_t time_col, TimeSeries& s) {
  const size_t n = table.num_rows();
  std::vector<std::string> ids;
  const std::vector<uint32_t> series_of = number_series(table, id_col, ids);
  // Counting sort of the rows by series: each series' rows stay in file order. The times
  // move with their rows, so each series is then checked in one contiguous run.
  std::vector<size_t> start(ids.size() + 1, 0);
  for (size_t r = 0; r < n; ++r) ++start[series_of[r] + 1];
  for (size_t k = 0; k < ids.size(); ++k) start[k + 1] += start[k];
  s.segments.resize(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    s.segments[k] = SeriesSegment{std::move(ids[k]), start[k], start[k + 1]};
  }
  std::vector<size_t> rows(n);
  std::vector<int64_t> times(n);
  for (size_t r = 0; r < n; ++r) {
    const size_t to = start[series_of[r]]++;
    rows[to] = r;
    times[to] = s.timestamps[r];
  }
  for (const SeriesSegment& seg : s.segments) sort_series(table, time_col, s, seg, times, rows);
  s.timestamps.swap(times);
  s.table_rows.swap(rows);
  s.id_column = table.header()[id_col];
}

void panel_column(const CsvTable& table, size_t col, const TimeSeries& s, MissingPolicy policy,
                  bool has_missing, std::vector<float>& values, std::vector<uint8_t>& observed) {
  const size_t n = s.table_rows.size();
  std::vector<float> v(n);
  std::vector<uint8_t> obs(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = values[s.table_rows[i]];
    obs[i] = observed[s.table_rows[i]];
  }
  values.swap(v);
  observed.swap(obs);
  if (!has_missing) return;
  for (const SeriesSegment& seg : s.segments) {
    const auto first = observed.begin() + static_cast<std::ptrdiff_t>(seg.begin);
    const auto last = observed.begin() + static_cast<std::ptrdiff_t>(seg.end);
    // A fill never borrows from the next series, so a series with nothing observed
    // in this column cannot be filled at all.
    if (std::find(first, last, uint8_t{1}) == last) {
      throw InputError(
          table.locate_cell(s.table_rows[seg.begin], col,
                            "series '" + quote_token(seg.id) + "': found no values at all (" +
                                std::to_string(seg.rows()) + " row" + (seg.rows() == 1 ? "" : "s") +
                                " missing), expected at least one number in each series"));
    }
    fill_missing(std::span<float>(values).subspan(seg.begin, seg.rows()),
                 std::span<const uint8_t>(observed).subspan(seg.begin, seg.rows()), policy);
  }
}

void panel_gaps(const CsvTable& table, size_t time_col, TimeSeries& s) {
  for (const SeriesSegment& seg : s.segments) {
    const size_t before = s.gaps.size();
    append_gaps(s.timestamps, seg.begin, seg.end, s.frequency, s.gaps);
    const size_t steps = seg.rows() - 1, off = s.gaps.size() - before;
    // Mostly gaps means the series runs at another frequency, not that it has holes; a
    // series of two rows has too few steps to tell.
    if (seg.rows() < 3 || 2 * off <= steps) continue;
    const std::vector<int64_t> own_times(
        s.timestamps.begin() + static_cast<std::ptrdiff_t>(seg.begin),
        s.timestamps.begin() + static_cast<std::ptrdiff_t>(seg.end));
    throw InputError(table.locate_cell(
        s.table_rows[seg.begin], time_col,
        "series '" + quote_token(seg.id) + "': found frequency " +
            infer_frequency(own_times).name() + " (" + std::to_string(steps - off) + " of " +
            std::to_string(steps) + " steps are one period of " + s.frequency.name() +
            "), expected " + s.frequency.name() +
            (s.frequency_inferred ? " like the other series (inferred over all series)"
                                  : " (the given frequency)")));
  }
}

}  // namespace attnfc::data::detail
