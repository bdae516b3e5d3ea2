#pragma once
// `attnfc train --log-format json`: every log message on stderr as one JSON object per
// line too, beside the progress events, so that a reader can parse every line of stderr:
//   {"event":"log","time":"2026-12-02T04:10:03Z","level":"warning","message":"..."}
namespace attnfc::cli {

// Replaces the default logger's sinks with one that writes these lines to stderr.
void log_as_json_lines();

}  // namespace attnfc::cli
