#pragma once
// The one seasonal-period detector: the baselines' seasonal-naive period and MASE lag
// (train), and the period `attnfc attention` compares the heads with (cli).
#include <cstdint>
#include <vector>

namespace attnfc::data {

// The dominant seasonal period of `rows` rows x `channels` channels (row-major, NaN =
// missing): the lag in [2, max_lag) with the highest local maximum of the autocorrelation
// of the first differences (averaged over channels) above min_acf, or the shortest divisor
// of that lag whose peak is within 80% of it. Differencing keeps a level drift or trend
// from blurring the peaks (raw, ETTh1's OT peaks at lag 22, not 24); a multiple of the
// season can peak a little higher by chance (ETTh1's 7 channels: 48, not 24).
// max_lag is capped at rows / 2. A channel whose differences are constant, or vary by no
// more than float rounding of its level (a straight line stored as floats), has no season.
// Returns 0 when there is none. acf (optional): the averaged autocorrelation at lags
// 0..max_lag (capped), all zero when no channel has a season.
int seasonal_period(const float* values, int64_t rows, int channels, int max_lag,
                    std::vector<double>* acf = nullptr, double min_acf = 0.1);

}  // namespace attnfc::data
