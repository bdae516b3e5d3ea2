// Sizes from the data (auto_sizes.hpp has the rules).
#include "attnfc/train/auto_sizes.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

AutoSizes take_auto_sizes(nlohmann::json& model) {
  AutoSizes a;
  if (!model.is_object()) return a;
  const auto is_auto = [&](const char* key) {
    const auto it = model.find(key);
    return it != model.end() && it->is_string() && it->get<std::string>() == "auto";
  };
  a.context = is_auto("context_length");
  a.horizon = is_auto("horizon");
  a.patch = is_auto("patch_len");
  a.lookback = is_auto("linear_lookback");
  // Placeholders that pass the model parser's checks whatever else is given (a context
  // that is a multiple of the patch); resolve_sizes replaces them with the chosen sizes.
  if (a.patch) model["patch_len"] = 1;
  const auto patch = model.find("patch_len");
  if (a.context)
    model["context_length"] =
        patch != model.end() && patch->is_number_integer() && patch->get<int64_t>() > 0
            ? patch->get<int64_t>()
            : int64_t{1};
  if (a.horizon) model["horizon"] = 1;
  if (a.lookback) model["linear_lookback"] = 0;
  return a;
}

namespace {

struct Preferred {
  int horizon = 10, context = 0;  // context 0: from the horizon and season
  int season = 1;
  std::string why;
};

// The published protocol of a known benchmark file, when the split is its own.
bool known_benchmark(const DataConfig& d, Preferred& p) {
  std::string file = std::filesystem::path(d.csv.path).filename().string();
  for (char& c : file) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto starts = [&](std::string_view s) { return file.rfind(s, 0) == 0; };
  const bool own_split = d.split_protocol == "auto" || d.split_protocol == "etth" ||
                         d.split_protocol == "ettm" || d.split_protocol == "custom";
  if (!own_split) return false;
  if (starts("etth") || starts("ettm"))
    p = {96, 336, 24, "the ETT long-horizon protocol"};
  else if (starts("exchange_rate"))
    p = {96, 96, 5, "the exchange-rate protocol"};
  else if (starts("national_illness"))
    p = {24, 104, 52, "the ILI protocol"};
  else
    return false;
  return true;
}

// The M4 competition's horizon and the natural season for the frequency.
Preferred by_frequency(const data::Frequency& f) {
  constexpr int64_t kHour = 3600, kDay = 24 * kHour, kWeek = 7 * kDay;
  const std::string why = f.name() + " data";
  if (!f.known()) return {10, 0, 1, "an unknown frequency"};
  if (f.unit == data::Frequency::Unit::kBusinessDays) return {10, 0, 5, why};
  if (f.unit == data::Frequency::Unit::kMonths) {
    if (f.step == 1) return {18, 0, 12, why};
    if (f.step == 3) return {8, 0, 4, why};
    if (f.step == 12) return {6, 0, 1, why};
    return {8, 0, static_cast<int>(std::max<int64_t>(1, 12 / f.step)), why};
  }
  if (f.step < kHour) {
    const int per_day = static_cast<int>(kDay / f.step);
    return {per_day, 0, per_day, why};
  }
  if (f.step < kDay && kDay % f.step == 0) {
    const int per_day = static_cast<int>(kDay / f.step);
    return {2 * per_day, 0, per_day, why};
  }
  if (f.step == kDay) return {14, 0, 7, why};
  if (f.step == kWeek) return {13, 0, 52, why};
  return {10, 0, 1, why};
}

// Target rows of each split part (the median over a panel's series).
struct PartRows {
  size_t train = 0, val = 0, test = 0, series_rows = 0;
};

PartRows part_rows(const DataConfig& d, const data::TimeSeries& series, size_t horizon) {
  const std::vector<data::SeriesSegment> segments = series.series_segments();
  std::vector<size_t> tr, va, te, rows;
  for (const data::SeriesSegment& seg : segments) {
    data::Split sp;
    try {
      sp = segment_split(d, series, seg, 0, horizon);
    } catch (const InputError& e) {
      if (segments.size() > 1) continue;  // a panel's short series is skipped later
      throw InputError(std::string("data.split: ") + e.what() +
                       "; expected a split that fits the file, e.g. \"auto\" (chronological "
                       "70/10/20)");
    }
    tr.push_back(sp.train.size());
    va.push_back(sp.val.size());
    te.push_back(sp.test.size());
    rows.push_back(seg.rows());
  }
  if (tr.empty()) return {};
  const auto median = [](std::vector<size_t>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(tr), median(va), median(te), median(rows)};
}

// The largest context whose least-squares fits (the NLinear baseline, the model's linear
// start: one weight a context step) have more training windows than weights: L + 1 windows
// of L + H rows need 2L + H rows.
size_t context_room(size_t train_rows, size_t horizon) {
  return train_rows > horizon ? (train_rows - horizon) / 2 : 0;
}

std::string describe(const PartRows& p) {
  return std::to_string(p.series_rows) + " rows: train " + std::to_string(p.train) + ", val " +
         std::to_string(p.val) + ", test " + std::to_string(p.test) + " target rows";
}

void choose_horizon(RunConfig& c, const PartRows& rows, int preferred) {
  const size_t room = std::min({rows.val, rows.test, rows.train > 1 ? rows.train - 1 : 0});
  if (room == 0)
    throw InputError(c.data.csv.path + ": too short to forecast anything (" + describe(rows) +
                     "); expected a longer series or a data.split with room in every part");
  c.model.horizon = static_cast<int>(std::min<size_t>(static_cast<size_t>(preferred), room));
}

void choose_context(RunConfig& c, const PartRows& rows, const Preferred& p) {
  const int H = c.model.horizon;
  const int preferred = p.context > 0 ? p.context : std::max(4 * H, 2 * p.season);
  const size_t room = context_room(rows.train, static_cast<size_t>(H));
  if (room == 0)
    throw InputError("model.horizon: " + std::to_string(H) + " leaves no room for a context in " +
                     c.data.csv.path + " (" + describe(rows) + "); expected at most " +
                     std::to_string(rows.train / 2) + ", or \"auto\"");
  int L = static_cast<int>(std::min<size_t>(static_cast<size_t>(preferred), room));
  if (c.auto_sizes.patch) c.model.patch_len = std::clamp(L / 8, 1, 16);
  const int p_len = c.model.patch_len;
  if (L < p_len)
    throw InputError("model.patch_len: found " + std::to_string(p_len) + ", but " +
                     c.data.csv.path + " leaves room for a context of " + std::to_string(L) +
                     " steps (" + describe(rows) + "); expected at most " + std::to_string(L) +
                     ", or \"auto\"");
  // The longest context the tokens tile exactly: patch_len plus whole strides.
  const int stride = c.model.patch_stride > 0 ? std::min(c.model.patch_stride, p_len) : p_len;
  c.model.context_length = p_len + (L - p_len) / stride * stride;
}

// The largest patch of at most 16 steps that divides `context` into 8 tokens or more
// (fewer only when the context is shorter than 8 steps: then one step a token).
int patch_dividing(int context) {
  for (int p = std::clamp(context / 8, 1, 16); p > 1; --p)
    if (context % p == 0) return p;
  return 1;
}

// A given size that cannot fit one series is an error naming its key and what would fit.
void check_given(const RunConfig& c, const PartRows& rows) {
  const auto H = static_cast<size_t>(c.model.horizon);
  const auto L = static_cast<size_t>(c.model.context_length);
  const size_t h_room = std::min(rows.val, rows.test);
  if (H > h_room)
    throw InputError("model.horizon: found " + std::to_string(H) + ", but " + c.data.csv.path +
                     " has " + describe(rows) + "; expected at most " + std::to_string(h_room) +
                     " (one window in every part), or \"auto\"");
  if (L + H > rows.train) {
    const size_t fit = rows.train > H ? rows.train - H : 0;
    throw InputError("model.context_length: found " + std::to_string(L) + ", but " +
                     c.data.csv.path + " has " + describe(rows) + ", and with horizon " +
                     std::to_string(H) + " a training window fits a context of at most " +
                     std::to_string(fit) + "; expected at most " +
                     std::to_string(fit / static_cast<size_t>(c.model.patch_len) *
                                    static_cast<size_t>(c.model.patch_len)) +
                     " (a multiple of model.patch_len), or \"auto\"");
  }
}

}  // namespace

std::string resolve_sizes(RunConfig& c, const data::TimeSeries& series) {
  Preferred p = by_frequency(series.frequency);
  if (!known_benchmark(c.data, p) && p.context == 0) p.why = p.why + ", M4's horizon";
  const AutoSizes& a = c.auto_sizes;
  const int h_for_split = a.horizon ? p.horizon : c.model.horizon;
  const PartRows rows = part_rows(c.data, series, static_cast<size_t>(h_for_split));
  if (rows.series_rows == 0) return "";  // no series fits: make_panel_split says why
  if (a.horizon) choose_horizon(c, rows, p.horizon);
  if (a.context)
    choose_context(c, rows, p);
  else if (a.patch)
    c.model.patch_len = patch_dividing(c.model.context_length);
  if (a.lookback)
    c.model.linear_lookback =
        c.model.channel_mode == ChannelMode::kMixed ? 0 : c.model.context_length;
  std::string chosen;
  if (a.any())
    chosen = "sizes from the data (" + p.why + "; " + describe(rows) + "): horizon " +
             std::to_string(c.model.horizon) + ", context_length " +
             std::to_string(c.model.context_length) + ", patch_len " +
             std::to_string(c.model.patch_len) + ", linear_lookback " +
             std::to_string(c.model.linear_lookback);
  if (series.num_series() == 1) check_given(c, rows);
  c.model.validate();
  check_linear_init(c);
  check_ensemble_contexts(c);
  return chosen;
}

}  // namespace attnfc::train
