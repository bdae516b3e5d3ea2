// Every subcommand's flags, help texts and checks, bound to the options struct its
// cmd_<name>.cpp runs (commands.hpp). Only this file and main.cpp include CLI11: it is
// header-only and costs seconds of compile per file.
#include <CLI/CLI.hpp>
#include <memory>

#include "attention_report.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

// `attnfc attention --model M --input data.csv`: the report's options on the
// `attention` subcommand itself.
void add_attention_report(CLI::App* attention) {
  auto opts = std::make_shared<AttentionReportOptions>();
  attention->add_option("--model", opts->model, "Trained model (.safetensors from attnfc train)");
  attention->add_option("--input", opts->input, "CSV with the model's columns");
  attention->add_option("--window", opts->window_end,
                        "The window ends just before this 0-based row (default: the last row)");
  attention->add_option("--channel", opts->channel,
                        "Channel to show (default: the model's first column)");
  attention
      ->add_option("--member", opts->member,
                   "For an ensemble: which member's attention to show (1-based)")
      ->capture_default_str();
  attention->add_option("--csv", opts->csv_path, "Also write every weight as CSV here");
  attention->add_option("--json", opts->json_path,
                        "Also write weights, lag profiles and the autocorrelation as JSON here");
  attention->add_flag("!--no-heatmap", opts->heatmap, "Skip the terminal heatmaps");
  on_selected(attention, [opts]() { return run_attention_report(*opts); });
}

// --quiet and --log-format, as train and backtest show their progress.
void add_progress_flags(CLI::App* sub, bool& quiet, std::string& log_format) {
  sub->add_flag("--quiet,-q", quiet,
                "No progress on stderr: only warnings, errors and the summary (stdout)");
  sub->add_option("--log-format", log_format,
                  "Progress on stderr: text (a bar on a terminal, else a timestamped line per "
                  "epoch and every 10 s) or json (one object per line, log messages too)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "text" || text == "json") return "";
            return "found '" + text.substr(0, 20) + "', expected text or json";
          },
          "text|json"))
      ->capture_default_str();
}

}  // namespace

void register_attention(CLI::App& app) {
  CLI::App* attention = app.add_subcommand(
      "attention",
      "A trained model's attention on one window (--model, --input), or 'attention demo'");
  attention->require_subcommand(0, 1);

  auto opts = std::make_shared<AttentionDemoOptions>();
  CLI::App* demo = attention->add_subcommand(
      "demo",
      "One causal head over a toy series, its attention matrix and lag profile; with --width,\n"
      "what the 1/sqrt(d_k) divisor does to the softmax as the width grows.");
  demo->add_option("--period", opts->period, "Series period P (>= 2)")
      ->capture_default_str()
      ->check(CLI::Range(2.0, 1e6));
  demo->add_option("--length", opts->length, "Sequence length L, 1..64")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  demo->add_option("--series", opts->series, "Toy series: sine|trend|noise")
      ->capture_default_str()
      ->check(CLI::IsMember({"sine", "trend", "noise"}));
  demo->add_option("--width", opts->width,
                   "Instead of the matrix: random queries/keys of widths 1, 4, 16, ... up to D, "
                   "with and without the divisor")
      ->check(CLI::Range(1, 65536));
  demo->add_flag("--unscaled", opts->unscaled,
                 "Drop the 1/sqrt(d_k) divisor in the matrix demo (the --width table always "
                 "shows both)");
  demo->add_option("--seed", opts->seed, "Seed for --series noise, --width and --train")
      ->capture_default_str();
  demo->add_flag("--train", opts->train,
                 "Train one causal head with learnable Q/K/V and positions to forecast the\n"
                 "series one step ahead, and show where it looks (default --period 7)");
  demo->add_option("--steps", opts->steps, "Training steps with --train")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  on_selected(demo, [opts, demo]() {
    opts->period_given = demo->count("--period") > 0;
    opts->length_given = demo->count("--length") > 0;
    return run_attention_demo(*opts);
  });
  // After the demo's handler, so that 'attention demo' runs the demo.
  add_attention_report(attention);
}

void register_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect",
      "Show what attnfc makes of a CSV file: columns and types, time range, frequency, "
      "gaps, missing values, statistics and a sparkline per column");
  sub->add_option("file", o->path, "CSV file (gzip-compressed too; - reads standard input)")
      ->required();
  sub->add_option("--time-column", o->time_column,
                  "time column, or composite columns such as year,month,day,hour "
                  "(default: found from the header)");
  sub->add_option("--columns", o->columns, "value columns, comma-separated (default: all numeric)")
      ->delimiter(',');
  sub->add_option("--delimiter", o->delimiter,
                  "field delimiter: one character, or tab (default ,)");
  sub->add_option("--missing", o->missing,
                  "missing-value policy to preview: error|ffill|interpolate|mask (default error)");
  sub->add_option("--frequency", o->frequency,
                  "frequency such as 1h, 1d, B, 1mo (default: inferred)");
  sub->add_option("--id-column", o->id_column,
                  "a long file's series id column: rows grouped into one series per id");
  sub->add_option("--decimal", o->decimal, "decimal mark of the values: . or , (default .)");
  sub->add_option("--thousands", o->thousands,
                  "thousands separator in the values: , . ' or a space (default none)");
  sub->add_option("--date-format", o->date_format,
                  "strftime-style time format such as %d/%m/%Y or %Y-%m-%dT%H:%M:%S%z "
                  "(default: ISO, or a/b/yyyy with the order told from the cells)");
  sub->add_option("--width", o->width, "sparkline width in characters (default 48)")
      ->check(CLI::Range(1, 1000));
  on_selected(sub, [o] { return run_inspect(*o); });
}

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand("train", "Train a forecaster from a JSON run config");
  sub->footer(
      "Examples:\n"
      "  attnfc train --config configs/default.json --out runs/demo\n"
      "  attnfc train --config configs/etth1_S.json --set train.lr=3e-4 --set model.d_model=128\n"
      "  attnfc train --out runs/demo --resume      # continue after Ctrl-C\n"
      "The run folder gets config.json, model.safetensors (best epoch), checkpoint.safetensors,\n"
      "train_log.csv and metrics.json. Ctrl-C saves a resumable checkpoint and exits with 130.\n"
      "Progress goes to stderr: a bar on a terminal; piped or redirected, a line per epoch and\n"
      "one every 10 s within an epoch, each starting with the UTC time. The ETA reads\n"
      "'1:20 (at most 3:40)': when the run ends if validation does not improve again\n"
      "(train.patience), and when the last of train.epochs would end.\n"
      "Config keys: docs/CONFIG.md.");
  sub->add_option("--config,-c", a->config, "Run config (JSON with data, model, train sections)");
  sub->add_option("--set", a->sets, "Override a config key: section.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  sub->add_option("--out,-o", a->out, "Run folder (default: runs/<config name>)");
  sub->add_flag("--resume", a->resume, "Continue the run in --out from its checkpoint");
  add_progress_flags(sub, a->quiet, a->log_format);
  // For tests and scripts: behave as if Ctrl-C arrived after N optimiser steps (hidden).
  sub->add_option("--stop-after-steps", a->stop_after_steps)->group("");
  on_selected(sub, [a] { return run_train(*a); });
}

void register_predict(CLI::App& app) {
  auto a = std::make_shared<PredictOptions>();
  CLI::App* sub = app.add_subcommand("predict", "Forecast the steps after the last row of a CSV");
  sub->footer(
      "Examples:\n"
      "  attnfc predict --model runs/demo/model.safetensors --input datasets/ETTh1.csv\n"
      "  attnfc predict --model runs/demo/model.safetensors --input new.csv --horizon 192 \\\n"
      "                 --output forecast.csv\n"
      "  attnfc predict --model runs/demo/model.safetensors -i shop_a.csv -i shop_b.csv \\\n"
      "                 --output forecasts/      # forecasts/shop_a.csv, forecasts/shop_b.csv\n"
      "  zcat new.csv.gz | attnfc predict --model runs/demo/model.safetensors -i -\n"
      "Every CSV may be gzip-compressed (told by its first bytes, e.g. new.csv.gz); -i - reads\n"
      "the input from standard input (<stdin> in messages, {name} stdin).\n"
      "The CSV needs the columns the model was trained on (extra columns are ignored).\n"
      "A model with data.future_covariates reads them at the forecast steps: from the input's\n"
      "rows after the history (every target empty) or from --future FILE.\n"
      "Timestamps continue at the series' frequency; a horizon beyond the model's is rolled out\n"
      "by feeding forecasts back in (not for a model with known future inputs: at most its H).\n"
      "Where forecasts go: --output DIR/ (or an existing folder) writes DIR/{name}.csv per input\n"
      "and an --output holding {name} one file per input ({name}: the input's file name without\n"
      "extension); otherwise to --output or standard output, several inputs as one long CSV\n"
      "whose first column, series, is the {name}. Nothing is written if any input fails.\n"
      "A history shorter than the model's context, a frequency other than the model's, or\n"
      "missing values in the last rows is a warning (stderr) and the forecast is still made;\n"
      "--strict makes them errors (exit 2, nothing written).");
  sub->add_option("--model,-m", a->model, "Model file written by 'attnfc train'")->required();
  sub->add_option("--input,-i", a->inputs,
                  "CSV with the history to forecast from (repeatable: -i a.csv -i b.csv; "
                  "- for standard input)")
      ->required();
  sub->add_option("--horizon", a->horizon, "Steps to forecast (default: the model's horizon)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--output,-o", a->output,
                  "Forecast CSV, DIR/ or a path with {name} (default: standard output)");
  sub->add_flag("--strict", a->strict,
                "Refuse (exit 2) a short history, another frequency or missing last rows");
  sub->add_option("--id", a->ids,
                  "A panel's series to forecast, comma-separated ids (default: every series)");
  sub->add_option("--level", a->levels,
                  "A quantile model's intervals to write, e.g. 80,95 (default: every level)");
  sub->add_flag("--uncalibrated", a->uncalibrated,
                "Write a calibrated model's quantiles as trained, without the conformal "
                "correction (to see what calibration changed)");
  sub->add_option("--future", a->future,
                  "CSV with the future covariates at the forecast steps (time [, id] and "
                  "data.future_covariates), when the input's rows do not carry them");
  on_selected(sub, [a] { return run_predict(*a); });
}

void register_evaluate(CLI::App& app) {
  auto a = std::make_shared<EvaluateOptions>();
  CLI::App* sub = app.add_subcommand(
      "evaluate",
      "Score a model beside repeat-last, seasonal-naive and NLinear on the same windows");
  sub->footer(
      "Examples:\n"
      "  attnfc evaluate --model runs/demo/model.safetensors --input datasets/ETTh1.csv\n"
      "  attnfc evaluate --model runs/demo/model.safetensors --input datasets/ETTh1.csv \\\n"
      "                  --split all --json scores.json\n"
      "Every stride-1 window whose targets lie in the split is scored, none dropped; metrics are\n"
      "means over windows (MSE, MAE, RMSE, MAPE, sMAPE, MASE) in scaled and original units.\n"
      "The split follows the training config's rule applied to this file; baselines are fit on\n"
      "its training rows. --drop-last B leaves out the last test windows as the published LTSF\n"
      "runs did (their test loaders dropped the last incomplete batch of B windows): the\n"
      "scores of those tables are on that subset.");
  sub->add_option("--model,-m", a->model, "Model file written by 'attnfc train'")->required();
  sub->add_option("--input,-i", a->input, "CSV to evaluate on (.csv.gz too; - for standard input)")
      ->required();
  sub->add_option("--split", a->split, "test, val or all")
      ->check(CLI::IsMember({"test", "val", "all"}))
      ->capture_default_str();
  sub->add_option("--json", a->json,
                  "Where to write the JSON (default: evaluation_<split>.json beside the model)");
  sub->add_option("--batch", a->batch, "Windows per forward pass")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  sub->add_option("--drop-last", a->drop_last,
                  "Score only the first floor(W/B)*B of the W test windows, as the LTSF code "
                  "bases' test loaders (batch B, drop_last=True) did: to compare with their "
                  "published tables on their windows (--split test, one series; default JSON "
                  "evaluation_test_dropB.json)")
      ->check(CLI::Range(1, 65536));
  on_selected(sub, [a] { return run_evaluate(*a); });
}

void register_plot(CLI::App& app) {
  auto a = std::make_shared<PlotOptions>();
  CLI::App* sub = app.add_subcommand(
      "plot",
      "Write an HTML page: forecasts vs actual beside the baselines, metrics, the forecast "
      "after the data, training curves, attention maps");
  sub->footer(
      "Examples:\n"
      "  attnfc plot --model runs/demo/model.safetensors --input datasets/ETTh1.csv\n"
      "  attnfc plot --model runs/demo/model.safetensors --input datasets/ETTh1.csv \\\n"
      "              --split val --window 0 --windows 6 --history 336 --output val.html\n"
      "The page is one self-contained HTML file (inline SVG and CSS, no script, no network):\n"
      "open it in any browser, attach it anywhere. It shows --windows windows of the split\n"
      "(a picker switches between them), each in dates with the history, the actuals, the\n"
      "model, its linear start and the baselines evaluate scores (repeat-last, seasonal-naive,\n"
      "nlinear), a quantile model's fan, and their errors; the metrics over the whole split;\n"
      "the forecast after the last row, as predict makes it; the training curves with epoch 0\n"
      "and the kept epoch; the attention maps with lags and a colour scale.");
  sub->add_option("--model,-m", a->model, "Model file written by 'attnfc train'")->required();
  sub->add_option("--input,-i", a->input,
                  "CSV the model forecasts (.csv.gz too; - for standard input)")
      ->required();
  sub->add_option("--split", a->split, "test or val")
      ->check(CLI::IsMember({"test", "val"}))
      ->capture_default_str();
  sub->add_option("--window", a->window,
                  "The window shown first, its index in the split (-1 = the last one)")
      ->capture_default_str();
  sub->add_option("--windows", a->windows,
                  "Windows to offer, spread evenly over the split (1..50; --window among them)")
      ->capture_default_str();
  sub->add_option("--history", a->history,
                  "Steps drawn before each forecast origin (default: context and 2 x horizon, "
                  "the fewer)");
  sub->add_option("--max-channels", a->max_channels, "Target columns drawn, the first ones")
      ->capture_default_str();
  sub->add_option("--log", a->log, "train_log.csv (default: the one beside the model)");
  sub->add_option("--output,-o", a->output, "HTML file (default: plot.html beside the model)");
  on_selected(sub, [a] { return run_plot(*a); });
}

void register_score(CLI::App& app) {
  auto o = std::make_shared<ScoreOptions>();
  CLI::App* sub = app.add_subcommand(
      "score", "Score a forecast file as the M4 competition does, beside the M4 benchmarks");
  sub->footer(
      "Example:\n"
      "  attnfc score --forecast fc.csv --actual test.csv --history train.csv --id-column id \\\n"
      "               --season 24 --out metrics.json --per-series per_series.csv\n"
      "All three files are long format (id,time,value): rows of a series in time order.\n"
      "sMAPE (0-200) and MASE (scaled by the history's in-sample seasonal-naive error) are\n"
      "averaged over every (series, step); OWA is relative to Naive2. Naive1, sNaive, Naive2\n"
      "and Theta are the M4 benchmarks, forecast from each series' history. Intervals in the\n"
      "forecast file (value-lo-N and value-hi-N, as predict writes a quantile model's) get\n"
      "M4's MSIS, coverage and ACD, beside seasonal naive with intervals from the quantiles\n"
      "of its own in-sample errors.");
  sub->add_option("--forecast,-f", o->forecast, "Forecasts to score (long CSV)")->required();
  sub->add_option("--actual,-a", o->actual, "The actual values over the horizon (long CSV)")
      ->required();
  sub->add_option("--history", o->history, "Each series' history before the horizon (long CSV)")
      ->required();
  sub->add_option("--id-column", o->id_column, "Column holding the series id")
      ->capture_default_str();
  sub->add_option("--value-column", o->value_column,
                  "Column holding the values (default: the first that is neither the id nor a "
                  "time column named time, date, ds or timestamp)");
  sub->add_option("--delimiter", o->delimiter,
                  "field delimiter of the three files: one character, or tab (default ,)");
  sub->add_option("--decimal", o->decimal, "decimal mark of the values: . or , (default .)");
  sub->add_option("--thousands", o->thousands,
                  "thousands separator in the values: , . ' or a space (default none)");
  sub->add_option("--season", o->season, "Seasonal period m (24 for hourly data)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  sub->add_option("--out", o->out, "Write the scores as JSON here");
  sub->add_option("--per-series", o->per_series, "Write per-series sMAPE and MASE as CSV here");
  on_selected(sub, [o] { return run_score(*o); });
}

void register_backtest(CLI::App& app) {
  auto a = std::make_shared<BacktestOptions>();
  CLI::App* sub = app.add_subcommand(
      "backtest", "Rolling-origin backtest: K forecast origins cut from the end, one run each");
  sub->footer(
      "Examples:\n"
      "  attnfc backtest --config configs/default.json --folds 5\n"
      "  attnfc backtest --config C.json --folds 10 --step 24 --refit once\n"
      "  attnfc backtest --out runs/default-backtest --resume   # continue after Ctrl-C\n"
      "Fold k's test windows are the --step origins after fold k-1's; it validates on the\n"
      "--val-rows rows before them and trains on everything earlier (the scaler too). Fold 1\n"
      "trains as the config says; a refit fold fine-tunes the previous fold's model for\n"
      "--finetune-epochs (or trains afresh with --cold), any other fold scores the previous\n"
      "model. Each fold is a run folder (fold-<k>/); folds.csv and backtest.json hold the\n"
      "per-fold and pooled test metrics of the model, its linear start and the baselines.\n"
      "Docs: docs/BACKTEST.md.");
  sub->add_option("--config,-c", a->config, "Run config (JSON), as for train");
  sub->add_option("--set", a->sets, "Override a config key: section.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  sub->add_option("--out,-o", a->out, "Backtest folder (default: runs/<config name>-backtest)");
  std::vector<CLI::Option*> plan = {
      sub->add_option("--folds,-k", a->folds, "Folds (forecast origin groups) cut from the end")
          ->capture_default_str()
          ->check(CLI::Range(1, 10000)),
      sub->add_option("--step", a->step, "Rows between folds' first origins (default: horizon)")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40)),
      sub->add_option("--refit", a->refit, "every | once | R (refit every R-th fold)")
          ->capture_default_str(),
      sub->add_flag("--cold", a->cold, "Refit folds train from scratch, not from the last fold"),
      sub->add_option("--finetune-epochs", a->finetune_epochs,
                      "Epochs of a warm-started refit (the previous model is epoch 0); a "
                      "fraction is one epoch cut to that share of its steps")
          ->capture_default_str()
          ->check(CLI::Range(0.0, 100000.0)),
      sub->add_option("--val-rows", a->val_rows,
                      "Validation rows of each fold (default: as many as the config's split)")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))};
  sub->add_flag("--resume", a->resume, "Continue the backtest in --out");
  add_progress_flags(sub, a->quiet, a->log_format);
  sub->add_option("--stop-after-steps", a->stop_after_steps)->group("");  // tests, as train's
  on_selected(sub, [a, plan] {
    for (const CLI::Option* o : plan) a->plan_flags_given |= o->count() > 0;
    return run_backtest(*a);
  });
}

}  // namespace attnfc::cli
