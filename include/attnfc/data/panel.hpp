#pragma once
// Taking a panel (a long-format TimeSeries of several series, series.hpp) apart.
#include <cstddef>

#include "attnfc/data/series.hpp"

namespace attnfc::data {

// Segment k of `panel` as a TimeSeries of its own: its rows, values, observed flags and
// the gaps inside it (rows renumbered from 0), the panel's columns, frequency and missing
// policy; missing_per_channel counts its own. No segments: it is one series.
TimeSeries series_of(const TimeSeries& panel, size_t k);

}  // namespace attnfc::data
