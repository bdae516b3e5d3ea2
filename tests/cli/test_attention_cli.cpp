// attnfc attention demo, run as a user would.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {
struct Run {
  int code;
  std::string out;
};
Run run_attnfc(const std::string& args) {
  const std::string cmd = std::string(ATTNFC_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool has(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

// The printed matrix rows: lines starting with a row index, then L cells.
std::vector<std::vector<std::string>> matrix_rows(const std::string& out, int L) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  std::string line;
  bool in_matrix = false;
  while (std::getline(in, line)) {
    if (has(line, "Attention weights")) {
      in_matrix = true;
      std::getline(in, line);  // column header
      continue;
    }
    if (!in_matrix) continue;
    if (line.empty()) break;
    std::istringstream cells(line);
    int index = -1;
    cells >> index;
    std::vector<std::string> row;
    std::string c;
    while (cells >> c) row.push_back(c);
    REQUIRE(static_cast<int>(row.size()) == L);
    rows.push_back(row);
  }
  return rows;
}
}  // namespace

TEST_CASE("attention demo prints the 8x8 causal matrix of a period-4 sine, rows summing to one") {
  const Run r = run_attnfc("attention demo");
  CHECK(r.code == 0);
  const auto rows = matrix_rows(r.out, 8);
  REQUIRE(rows.size() == 8u);
  for (int i = 0; i < 8; ++i) {
    double sum = 0;
    for (int j = 0; j < 8; ++j) {
      if (j > i) {
        CHECK(rows[i][j] == "-");
      } else {
        CHECK(rows[i][j].size() == 4u);  // two decimals: "0.33"
        sum += std::stod(rows[i][j]);
      }
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(0.03));  // printed with two decimals
  }
  CHECK(rows[0][0] == "1.00");
  // Same phase four steps back outweighs the opposite phase two steps back.
  CHECK(std::stod(rows[7][3]) > std::stod(rows[7][5]));
  CHECK(has(r.out, "rows sum to one") == false);
  CHECK(has(r.out, "Every row sums to one"));
  CHECK(has(r.out, "OK"));
  CHECK(has(r.out, "Dominant earlier lag: 4 (series period 4)"));
}

TEST_CASE("attention demo explores other periods, lengths and series") {
  const Run r = run_attnfc("attention demo --period 6 --length 20");
  CHECK(r.code == 0);
  CHECK(matrix_rows(r.out, 20).size() == 20u);
  CHECK(has(r.out, "Dominant earlier lag: 6 (series period 6)"));
  const Run t = run_attnfc("attention demo --series trend");
  CHECK(t.code == 0);
  CHECK(has(t.out, "trend"));
  CHECK(has(t.out, "Dominant earlier lag: 1"));
  const Run n = run_attnfc("attention demo --series noise --seed 3");
  CHECK(n.code == 0);
  CHECK(n.out == run_attnfc("attention demo --series noise --seed 3").out);
  CHECK(n.out != run_attnfc("attention demo --series noise --seed 4").out);
  const Run u = run_attnfc("attention demo --unscaled");
  CHECK(u.code == 0);
  CHECK(has(u.out, "softmax(Q K^T + causal mask)"));
}

TEST_CASE("attention demo --width shows the softmax saturating without the divisor") {
  const Run r = run_attnfc("attention demo --width 1024");
  CHECK(r.code == 0);
  CHECK(has(r.out, "sqrt(d_k)"));
  // Rows for D = 1, 4, 16, 64, 256, 1024.
  for (const char* d :
       {"\n     1 |", "\n     4 |", "\n    16 |", "\n    64 |", "\n   256 |", "\n  1024 |"})
    CHECK(has(r.out, d));
  CHECK(has(r.out, "At D = 1024"));
}

TEST_CASE("attention demo rejects bad settings with exit code 2") {
  for (const char* args :
       {"attention demo --period 1", "attention demo --length 0", "attention demo --series square",
        "attention demo --width 0", "attention"}) {
    const Run r = run_attnfc(args);
    CHECK_MESSAGE(r.code == 2, args);
  }
  const Run r = run_attnfc("attention demo --series square");
  CHECK(has(r.out, "square"));
}
