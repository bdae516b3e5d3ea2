#pragma once
// The axes of `attnfc plot`'s charts, apart from any drawing so they can be tested alone:
// calendar ticks for a time axis, round-number ticks for a value axis, numbers as a reader
// wants them, and the colour map of the attention heatmaps.
#include <cstdint>
#include <string>
#include <vector>

namespace attnfc::cli {

// One tick of a time axis: its time (Unix seconds, naive civil time as the data layer keeps
// it), the label under it ("06:00", "Jul 30", "Jul", "2016") and, where the coarser unit
// changes (and at the first tick), a second line giving it ("Jul 30 2016", "2016").
struct TimeTick {
  int64_t at = 0;
  std::string label, context;
};

// Ticks at a calendar step (1, 5, 15, 30 minutes; 1, 2, 3, 6, 12 hours; 1, 2 days; weeks
// starting on Monday; 1, 3, 6 months; 1, 2, 5, 10, ... years): the finest step that puts
// at most max_ticks ticks in [from, to], aligned to that step (hours to midnight, months to
// January). Empty when from > to.
std::vector<TimeTick> time_ticks(int64_t from, int64_t to, int max_ticks);

// Round values (1, 2 or 5 times a power of ten apart) inside [lo, hi]: at most max_ticks,
// at least two when lo < hi.
std::vector<double> value_ticks(double lo, double hi, int max_ticks);

// Decades (1, 10, 100, ...) inside [lo, hi] for a log axis (lo > 0); with fewer than two,
// the 1-2-5 values of each decade, and failing that value_ticks.
std::vector<double> log_ticks(double lo, double hi, int max_ticks);

// Four significant digits without trailing zeros or an exponent where a reader does not
// need one: 0.1575, 12.5, 1250, 1.5e+06, 3e-05.
std::string format_number(double v);

// The viridis colour map (perceptually uniform, readable in grey and by colour-blind
// readers) at u in [0, 1] (clamped) as "#rrggbb": dark purple at 0, yellow at 1.
std::string viridis(double u);

// Text for HTML and SVG bodies and attribute values: & < > " ' escaped.
std::string escape_html(const std::string& text);

}  // namespace attnfc::cli
