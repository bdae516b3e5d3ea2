// Where predict writes its forecasts, and how (predict_output.hpp).
#include "predict_output.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kName = "{name}";

bool names_a_folder(const std::string& output) {
  std::error_code ec;
  return !output.empty() && output != "-" && (output.back() == '/' || fs::is_directory(output, ec));
}

std::string substitute_name(std::string pattern, const std::string& name) {
  for (size_t at = pattern.find(kName); at != std::string::npos;
       at = pattern.find(kName, at + name.size()))
    pattern.replace(at, kName.size(), name);
  return pattern;
}

void refuse_same_names(const std::vector<std::string>& inputs) {
  std::map<std::string, std::string> seen;  // {name} -> the first input with it
  for (const std::string& input : inputs) {
    const auto [it, fresh] = seen.emplace(series_name(input), input);
    if (!fresh)
      throw InputError("--input " + it->second + " and --input " + input + ": both are named '" +
                       it->first +
                       "'; expected inputs with different file names (their forecasts are "
                       "told apart by name)");
  }
}

std::string single_csv(const InputForecast& f) {
  std::string csv = f.time_name + f.columns + "\n";
  for (const std::string& row : f.rows) csv += row + "\n";
  return csv;
}

// Several inputs in one CSV: `series` first; the time column keeps its name when every
// input calls it the same, else it is "date".
std::string long_csv(const std::vector<InputForecast>& forecasts) {
  std::string time_name = forecasts.front().time_name;
  for (const InputForecast& f : forecasts)
    if (f.time_name != time_name) time_name = "date";
  std::string csv = "series," + time_name + forecasts.front().columns + "\n";
  for (const InputForecast& f : forecasts) {
    const std::string cell = csv_cell(series_name(f.input)) + ",";
    for (const std::string& row : f.rows) csv += cell + row + "\n";
  }
  return csv;
}

void write_one(const std::string& file, const std::string& csv, const std::string& what) {
  if (file.empty() || file == "-") {
    write_stdout(csv);
    finish_stdout();
    return;
  }
  write_file_atomic(file, csv);
  std::fprintf(stderr, "%s -> %s\n", what.c_str(), file.c_str());
}

std::string summary(const InputForecast& f) {
  return "forecast of " + std::to_string(f.rows.size()) + " steps x " + std::to_string(f.channels) +
         " columns";
}

}  // namespace

std::string series_name(const std::string& input) {
  if (input == kStdinPath) return "stdin";
  const fs::path path(input);  // shop_a.csv.gz is shop_a too
  return (path.extension() == ".gz" ? path.stem().stem() : path.stem()).string();
}

PredictOutputs plan_outputs(const PredictOptions& a) {
  PredictOutputs plan;
  if (a.inputs.size() > 1) refuse_same_names(a.inputs);
  const bool pattern = a.output.find(kName) != std::string::npos;
  if (pattern || names_a_folder(a.output)) {
    plan.per_input = true;
    if (!pattern) plan.folder = a.output;
    const std::string p =
        pattern ? a.output : (fs::path(a.output) / (std::string(kName) + ".csv")).string();
    for (const std::string& input : a.inputs)
      plan.files.push_back(substitute_name(p, series_name(input)));
  } else {
    plan.file = a.output;
    plan.long_format = a.inputs.size() > 1;
  }
  std::vector<std::pair<std::string, std::string>> inputs{{"--model", a.model}};
  for (const std::string& input : a.inputs) inputs.emplace_back("--input", input);
  for (const std::string& file : plan.per_input ? plan.files : std::vector{plan.file})
    refuse_output_over_inputs("--output", file, inputs);
  return plan;
}

void write_forecasts(const PredictOutputs& plan, const std::vector<InputForecast>& forecasts) {
  if (!plan.per_input) {
    if (!plan.long_format)
      return write_one(plan.file, single_csv(forecasts[0]), summary(forecasts[0]));
    return write_one(plan.file, long_csv(forecasts),
                     "forecasts of " + std::to_string(forecasts.size()) + " inputs");
  }
  if (!plan.folder.empty()) {
    std::error_code ec;
    fs::create_directories(plan.folder, ec);
    if (ec || !fs::is_directory(plan.folder))
      throw InputError(plan.folder + ": cannot create the output folder (" +
                       (ec ? ec.message() : std::string("a file has that name")) + ")");
  }
  for (size_t i = 0; i < forecasts.size(); ++i)
    write_one(plan.files[i], single_csv(forecasts[i]), summary(forecasts[i]));
}

}  // namespace attnfc::cli
