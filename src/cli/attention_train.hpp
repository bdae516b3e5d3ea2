#pragma once
// `attnfc attention demo --train`: the textbook's open exercise. One causal attention head
// with learnable Q/K/V projections reads a toy series through a value embedding plus a
// sinusoidal positional encoding and is trained by attnfc's own engine to forecast one step
// ahead at every position. The report says where the trained head looks (its lag profile)
// beside the untrained head of the plain demo (Q = K = V = the embedding), so a reader can
// see whether "the head found the period" and what that reading rests on.
#include <cstdint>
#include <vector>

#include "attention_probe.hpp"

namespace attnfc::cli {

// The scalar series the head is trained on (x_t, t = 0..n-1):
//   Sine:  sin(2 pi t / P);
//   Trend: trend plus season, t / (4 P) + sin(2 pi t / P);
//   Noise: independent N(0, 1) values (nothing to find: the control).
std::vector<float> toy_series(ProbeSeries kind, double period, int n, uint64_t seed);

struct TrainedHeadOptions {
  ProbeSeries kind = ProbeSeries::Sine;
  double period = 7.0;
  int length = 0;  // window length L; 0 = max(3 P, 16) capped at 64
  int steps = 400;
  uint64_t seed = 1;
};

struct TrainedHead {
  int length = 0, width = 0, steps = 0;
  int train_windows = 0, test_windows = 0;
  // One-step MSE on the held-out windows (every position): the head before and after
  // training, and two forecasts that need no training.
  double mse_initial = 0, mse_trained = 0, mse_repeat_last = 0, mse_seasonal_naive = 0;
  std::vector<float> weights;  // [L, L]: the trained head's attention, mean over test windows
  LagProfile trained;          // lag profile of `weights`
  LagProfile initial;          // the same head before training (random projections)
  // The lag l in 1..L/2 with the largest lift (the smallest within 2% of it): longer lags
  // are seen by few queries, so their lift is noisy. Lag l from query t reads x_{t-l},
  // l + 1 steps before the target x_{t+1}.
  int dominant_lag = 0, initial_dominant_lag = 0;
};

// The lag in 1..max_lag with the largest lift (the smallest within 2% of it); 0 if none.
int dominant_lag_within(const LagProfile& p, int max_lag);

// Trains the head (seeded, the same bits at any thread count) and scores it on windows
// cut from the last fifth of a 1024-step series; the first four fifths train it.
// InputError for a period < 2, a length outside 2..64 or steps outside 1..100000.
TrainedHead train_attention_head(const TrainedHeadOptions& o);

}  // namespace attnfc::cli
