#pragma once
// Reader for the PyTorch fixtures in tests/golden/ (format: docs/GOLDEN.md) and the
// comparison the golden tests use.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace golden {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::vector<float> as_float() const { return {values.begin(), values.end()}; }
  std::vector<uint8_t> as_bytes() const {
    std::vector<uint8_t> b(values.size());
    for (size_t i = 0; i < values.size(); ++i) b[i] = values[i] != 0.0 ? 1 : 0;
    return b;
  }
};

struct Case {
  std::string name, op;
  std::map<std::string, int64_t> attrs;
  std::map<std::string, Tensor> tensors;

  int64_t attr(const std::string& key) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) throw std::runtime_error(name + ": no attr '" + key + "'");
    return it->second;
  }
  bool has(const std::string& t) const { return tensors.count(t) != 0; }
  const Tensor& at(const std::string& t) const {
    auto it = tensors.find(t);
    if (it == tensors.end()) throw std::runtime_error(name + ": no tensor '" + t + "'");
    return it->second;
  }
};

inline std::string path(const std::string& name) {
  return std::string(ATTNFC_SOURCE_DIR) + "/tests/golden/" + name + ".txt";
}

// Throws std::runtime_error naming the file and line on anything malformed.
inline Case load(const std::string& name) {
  const std::string file = path(name);
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot open");
  Case c;
  std::string line;
  int lineno = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(file + ":" + std::to_string(lineno) + ": " + what);
  };
  auto next = [&]() {
    if (!std::getline(in, line)) fail("unexpected end of file");
    ++lineno;
  };
  next();
  if (line != "attnfc-golden 1") fail("expected 'attnfc-golden 1', got '" + line + "'");
  bool ended = false;
  while (!ended) {
    next();
    std::istringstream ss(line);
    std::string kind;
    ss >> kind;
    if (kind == "case") {
      ss >> c.name;
    } else if (kind == "op") {
      ss >> c.op;
    } else if (kind == "attr") {
      std::string key;
      int64_t v;
      if (!(ss >> key >> v)) fail("bad attr line");
      c.attrs[key] = v;
    } else if (kind == "tensor") {
      std::string tname;
      int ndim;
      if (!(ss >> tname >> ndim) || ndim < 0 || ndim > 4) fail("bad tensor header");
      Tensor t;
      int64_t numel = 1;
      for (int i = 0; i < ndim; ++i) {
        int64_t d;
        if (!(ss >> d) || d < 0) fail("bad tensor dims");
        t.shape.push_back(d);
        numel *= d;
      }
      t.values.reserve(numel);
      while (static_cast<int64_t>(t.values.size()) < numel) {
        next();
        std::istringstream vs(line);
        std::string tok;
        while (vs >> tok) t.values.push_back(std::stod(tok));
      }
      if (static_cast<int64_t>(t.values.size()) != numel) fail("too many values for " + tname);
      c.tensors[tname] = std::move(t);
    } else if (kind == "end") {
      ended = true;
    } else {
      fail("unknown line '" + line + "'");
    }
  }
  if (c.name != name) throw std::runtime_error(file + ": case is '" + c.name + "'");
  return c;
}

// Largest |a - r| / (1e-5 * (|r| + max|R|)) over the tensor (<= 1 passes; see GOLDEN.md).
// `a` is read through strides when given (views), else contiguously.
inline double mismatch(const float* a, const Tensor& ref, double rtol = 1e-5) {
  double scale = 0;
  for (double r : ref.values) scale = std::max(scale, std::abs(r));
  double worst = 0;
  for (size_t i = 0; i < ref.values.size(); ++i) {
    const double r = ref.values[i];
    if (!std::isfinite(a[i])) return INFINITY;
    const double bound = rtol * (std::abs(r) + scale);
    if (bound == 0) {
      if (a[i] != 0) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::abs(a[i] - r) / bound);
  }
  return worst;
}

}  // namespace golden
