#pragma once
// `attnfc attention --model M --input data.csv`: a trained model's attention on one
// window (cmd_attention_report.cpp). flags.cpp gives the `attention` subcommand itself
// these options and handler, beside its `demo` subcommand (commands.hpp).
#include <string>

namespace attnfc::cli {

struct AttentionReportOptions {
  std::string model, input, channel, csv_path, json_path;
  long long window_end = -1;  // exclusive end row; -1 = the last row
  int member = 1;             // which network of an ensemble (1-based)
  bool heatmap = true;
};
int run_attention_report(const AttentionReportOptions& o);

}  // namespace attnfc::cli
