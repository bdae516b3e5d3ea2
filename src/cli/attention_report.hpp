#pragma once
// `attnfc attention --model M --input data.csv`: a trained model's attention on one
// window (cmd_attention_report.cpp). cmd_attention.cpp registers the `attention`
// subcommand and hands it here to add the report's options and handler.
#include <CLI/CLI.hpp>

namespace attnfc::cli {

void add_attention_report(CLI::App* attention);

}  // namespace attnfc::cli
