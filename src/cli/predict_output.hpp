#pragma once
// Where `attnfc predict` writes the forecasts of its inputs (the rule --help and README
// state):
//   --output containing {name}   one file per input; {name} is the input's file name
//                                without its extension (data/shop_a.csv -> shop_a,
//                                shop_a.csv.gz -> shop_a, - -> stdin)
//   --output DIR/ (a trailing /  the same as DIR/{name}.csv; DIR is created if needed
//     or an existing folder)
//   otherwise, one input         that input's forecast CSV, to --output or standard output
//   otherwise, several inputs    one long CSV, to --output or standard output, whose first
//                                column `series` holds the input's {name}
// Every input is read and forecast before anything is written, so an error (or --strict)
// leaves no output; each file is written atomically.
#include <string>
#include <vector>

#include "commands.hpp"

namespace attnfc::cli {

// One input's forecast, formatted as predict prints it.
struct InputForecast {
  std::string input;              // the path given to --input
  std::string time_name;          // "date", or the file's own time column
  std::string columns;            // ",OT,HUFL": the value columns, each after a comma
  std::vector<std::string> rows;  // "2016-07-30 04:00:00,12.34", one per step
  int channels = 0;
};

struct PredictOutputs {
  bool per_input = false;
  std::vector<std::string> files;  // per_input: one path per input, in input order
  std::string folder;              // --output DIR/: DIR, created before writing
  std::string file;                // otherwise: "" (or "-") for standard output
  bool long_format = false;        // several inputs in one CSV
};

// The input's {name}: its file name without the last extension (and without .csv before a
// .gz); "stdin" for standard input ("-").
std::string series_name(const std::string& input);

// Plans the outputs of `a` and refuses, as InputError, an output that is one of the inputs
// or the model, and several inputs with the same {name} (their forecasts could not be told
// apart).
PredictOutputs plan_outputs(const PredictOptions& a);

// Writes the forecasts (one per input, in order) as planned.
void write_forecasts(const PredictOutputs& plan, const std::vector<InputForecast>& forecasts);

}  // namespace attnfc::cli
