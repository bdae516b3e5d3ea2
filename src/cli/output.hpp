#pragma once
// Output hygiene shared by the subcommands: checked writes to stdout (a full disk,
// /dev/full or a closed stdout is an OutputError naming stdout, exit 1, never a silent
// empty file), and the refusal to write an output over one of the command's inputs.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnfc/data/csv.hpp"

namespace attnfc::cli {

// At start-up: a closed fd 0, 1 or 2 is reopened (stdout on /dev/full, the others on
// /dev/null) so that no file the program opens lands on it and receives what is
// printed; a write to a closed stdout then fails and is reported.
void guard_standard_streams();
// fwrite to stdout; throws OutputError "stdout: write failed (<reason>)".
void write_stdout(std::string_view bytes);
// fflush + ferror for everything printed so far (printf included); same error.
void finish_stdout();
// Throws InputError when `output` names the same file as one of `inputs`
// (flag, path) pairs, compared by std::filesystem::equivalent / weakly_canonical.
void refuse_output_over_inputs(const std::string& output_flag, const std::string& output,
                               const std::vector<std::pair<std::string, std::string>>& inputs);
using data::csv_cell;  // a series id as one CSV cell (data/csv.hpp)

// --delimiter: one character, or tab / comma / semicolon / space (\t too); InputError else.
char parse_delimiter(const std::string& text);

}  // namespace attnfc::cli
