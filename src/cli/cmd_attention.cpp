// attnfc attention demo: attention made visible. The numbers come from
// series_attention and probe_width (src/nn/attention_probe.cpp); this file
// only formats them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attention_probe.hpp"
#include "attention_train.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

// "4" rather than "4.000000" for whole periods.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const char* embedding_text(ProbeSeries s) {
  switch (s) {
    case ProbeSeries::Sine:
      return "e_t = (sin 2 pi t/P, cos 2 pi t/P)";
    case ProbeSeries::Trend:
      return "e_t = (t/P, t/P + 1/4), a ramp rising one unit per period";
    case ProbeSeries::Noise:
      return "e_t = two independent N(0, 1) channels";
  }
  return "";
}

int run_series_demo(const AttentionDemoOptions& o) {
  const ProbeSeries kind = parse_probe_series(o.series);
  const SeriesAttention r = series_attention(kind, o.period, o.length, !o.unscaled, o.seed);
  const int L = r.length;
  std::printf("One causal attention head over a %s series, period P = %s, length L = %d.\n",
              enum_name(kind), number(o.period).c_str(), L);
  std::printf("Q = K = V = %s\n", embedding_text(kind));
  std::printf("weights = softmax(Q K^T%s + causal mask), output = weights V\n\n",
              o.unscaled ? "" : " / sqrt(2)");

  std::printf(
      "Attention weights (row i = query position, column j = key position; "
      "'-' = future, masked):\n     ");
  for (int j = 0; j < L; ++j) std::printf("%5d", j);
  std::printf("\n");
  for (int i = 0; i < L; ++i) {
    std::printf("%5d", i);
    for (int j = 0; j < L; ++j) {
      if (j > i)
        std::printf("    -");
      else
        std::printf(" %4.2f", r.weights[static_cast<size_t>(i) * L + j]);
    }
    std::printf("\n");
  }
  const bool sums_ok = r.max_row_sum_error < 1e-5;
  std::printf("\nEvery row sums to one: max |sum_j w_ij - 1| = %.1e  %s\n", r.max_row_sum_error,
              sums_ok ? "OK" : "FAILED");

  std::printf(
      "\nAttention by lag i - j (mass = mean weight; lift = mass / uniform causal "
      "attention):\n");
  for (int lag = 0; lag < L; ++lag)
    std::printf("  lag %3d  mass %4.2f  lift %4.2f\n", lag, r.lag_profile[lag], r.lag_lift[lag]);
  if (L > 1)
    std::printf("Dominant earlier lag: %d (series period %s)\n", r.dominant_lag,
                number(o.period).c_str());
  if (!sums_ok) {
    std::fprintf(stderr, "attention weights do not sum to one: softmax is broken\n");
    return 1;
  }
  return 0;
}

int run_width_demo(const AttentionDemoOptions& o) {
  std::vector<int> widths;
  for (int d = 1; d < o.width; d *= 4) widths.push_back(d);
  widths.push_back(o.width);
  std::vector<WidthProbe> rows;
  for (int d : widths) rows.push_back(probe_width(d, 64, 64, o.seed));
  const WidthProbe& first = rows.front();
  std::printf(
      "Why attention divides by sqrt(d_k): %d random queries and %d keys of width D,\n"
      "entries i.i.d. N(0, 1), so q.k has variance D. Uniform attention has entropy "
      "ln %d = %.2f nats.\n\n",
      first.queries, first.keys, first.keys, first.max_entropy);
  std::printf("%6s | %-44s | %s\n", "", "scaled: softmax(q.k / sqrt(D))", "unscaled: softmax(q.k)");
  std::printf("%6s | %8s %8s %6s %6s %10s | %8s %8s %6s %6s %10s\n", "D", "var", "entropy", "max p",
              "sat.", "|dsoftmax|", "var", "entropy", "max p", "sat.", "|dsoftmax|");
  for (const auto& r : rows) {
    std::printf("%6d | %8.2f %8.3f %6.3f %5.0f%% %10.4f | %8.1f %8.3f %6.3f %5.0f%% %10.4f\n",
                r.width, r.scaled.score_variance, r.scaled.entropy, r.scaled.max_weight,
                100 * r.scaled.saturated_rows, r.scaled.softmax_grad_norm,
                r.unscaled.score_variance, r.unscaled.entropy, r.unscaled.max_weight,
                100 * r.unscaled.saturated_rows, r.unscaled.softmax_grad_norm);
  }
  const WidthProbe& last = rows.back();
  std::printf(
      "\nvar = score variance; entropy = mean row entropy (nats); max p = mean largest weight;\n"
      "sat. = rows with a weight above 0.99; |dsoftmax| = mean ||d softmax / d logits||_F.\n");
  std::printf(
      "At D = %d the scaled softmax keeps entropy %.2f of %.2f nats; without the divisor it "
      "falls to %.2f,\n%.0f%% of the rows are one-hot, and the softmax gradient is %.1fx smaller "
      "(it vanishes as D grows further).\n",
      last.width, last.scaled.entropy, last.max_entropy, last.unscaled.entropy,
      100 * last.unscaled.saturated_rows,
      last.scaled.softmax_grad_norm / std::max(last.unscaled.softmax_grad_norm, 1e-30));
  return 0;
}

void print_lag_profile(const char* title, const LagProfile& p, int lags) {
  std::printf("%s\n  lag  ", title);
  for (int l = 0; l < lags; ++l) std::printf("%5d", l);
  std::printf("\n  lift ");
  for (int l = 0; l < lags; ++l) std::printf("%5.2f", p.lift[l]);
  std::printf("\n");
}

// Where the head looks, in words: a lag l from query t reads x_{t-l}, which is l + 1 steps
// before the forecast target x_{t+1}.
void print_verdict(const TrainedHead& r, double period, ProbeSeries kind) {
  const int lag = r.dominant_lag, p = static_cast<int>(std::lround(period)), d = lag + 1;
  std::printf(
      "Trained head's dominant lag (1..L/2): %d from the query: it reads x_{t-%d} to forecast "
      "x_{t+1}, %d steps before the target (period %s).\n",
      lag, lag, d, number(period).c_str());
  if (kind == ProbeSeries::Noise) {
    std::printf("White noise has no period: whatever lag wins, there is nothing to find.\n");
  } else if (lag > 0 && d % p == 0) {
    std::printf("It found the period, counted from the target: x_{t+1} repeats x_{t+1-%d}.\n", d);
  } else if (lag > 0 && 2 * d == p) {
    std::printf(
        "It did not pick the period but half of it: on a sine x_{t+1} = -x_{t+1-%d}, as useful "
        "to a linear read-out. A lag that explains the forecast need not be the period.\n",
        d);
  } else {
    std::printf("It did not settle on the period: its forecast is built some other way.\n");
  }
  std::printf("Before training (random Q/K/V) the dominant lag was %d.\n", r.initial_dominant_lag);
}

int run_trained_demo(AttentionDemoOptions o) {
  TrainedHeadOptions t;
  t.kind = parse_probe_series(o.series);
  t.period = o.period_given ? o.period : 7.0;
  t.length = o.length_given ? o.length : 0;
  t.steps = o.steps;
  t.seed = o.seed;
  const TrainedHead r = train_attention_head(t);
  std::printf(
      "One causal head, d = %d, learnable Q/K/V (in_proj) and W^O, over a %s series of period "
      "%s:\ntoken_t = W_e x_t + b_e + sinusoidal position, forecast x_{t+1} = readout(head_t), "
      "L = %d.\nTrained by attnfc's engine (AdamW, lr 3e-3, %d steps of 32 windows from the "
      "first 4/5 of 1024 steps); scored on the %d windows of the last 1/5 (positions with one "
      "period of history).\n\n",
      r.width, enum_name(t.kind), number(t.period).c_str(), r.length, r.steps, r.test_windows);
  std::printf(
      "One-step MSE: trained head %.4f, before training %.4f, repeat-last %.4f, "
      "seasonal naive (lag %ld) %.4f\n\n",
      r.mse_trained, r.mse_initial, r.mse_repeat_last, std::lround(t.period), r.mse_seasonal_naive);
  const int lags = std::min(r.length, 2 * static_cast<int>(std::lround(t.period)) + 2);
  print_lag_profile("Trained head, attention lift by lag (mean over test windows):", r.trained,
                    lags);
  print_lag_profile("Same head before training:", r.initial, lags);
  if (t.kind != ProbeSeries::Noise) {
    const SeriesAttention u = series_attention(t.kind, t.period, r.length, true, t.seed);
    const LagProfile up = causal_lag_profile(u.weights.data(), r.length);
    print_lag_profile("Untrained head of the plain demo (Q = K = V = the phase embedding):", up,
                      lags);
    std::printf("  its dominant lag (1..L/2): %d\n", dominant_lag_within(up, r.length / 2));
  }
  std::printf("\n");
  print_verdict(r, t.period, t.kind);
  return 0;
}

}  // namespace

int run_attention_demo(const AttentionDemoOptions& o) {
  if (o.train) return run_trained_demo(o);
  return o.width > 0 ? run_width_demo(o) : run_series_demo(o);
}

}  // namespace attnfc::cli
