// png_stats FILE [#rrggbb ...]: what the browser test needs to know about a screenshot
// (tests/browser/plot_in_chromium.sh), without python or an image library:
//   png <width> <height>
//   distinct_colours <n>
//   non_white_percent <p>          pixels with a channel below 240
//   colour #rrggbb <n>             pixels within 24 of that colour in every channel
// Reads 8-bit RGB or RGBA, non-interlaced PNGs (what Chromium writes); anything else, or a
// file that is not a PNG, is exit 1 with one line saying what was found.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> rgb;  // 0xRRGGBB per pixel
};

// The chunks' IHDR fields and the concatenated IDAT stream.
struct Chunks {
  uint32_t width = 0, height = 0;
  int depth = 0, colour_type = 0, interlace = 0;
  std::vector<unsigned char> idat;
};

Chunks read_chunks(const std::vector<unsigned char>& f) {
  static const unsigned char kMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (f.size() < 8 || !std::equal(kMagic, kMagic + 8, f.begin()))
    throw std::runtime_error("not a PNG (no PNG signature)");
  Chunks c;
  for (size_t at = 8; at + 12 <= f.size();) {
    const uint32_t len = be32(&f[at]);
    const std::string type(f.begin() + static_cast<long>(at) + 4,
                           f.begin() + static_cast<long>(at) + 8);
    if (at + 12 + len > f.size()) throw std::runtime_error("truncated chunk " + type);
    const unsigned char* d = &f[at + 8];
    if (type == "IHDR") {
      c.width = be32(d), c.height = be32(d + 4);
      c.depth = d[8], c.colour_type = d[9], c.interlace = d[12];
    } else if (type == "IDAT") {
      c.idat.insert(c.idat.end(), d, d + len);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (c.depth != 8 || (c.colour_type != 2 && c.colour_type != 6) || c.interlace != 0)
    throw std::runtime_error("unsupported PNG: bit depth " + std::to_string(c.depth) +
                             ", colour type " + std::to_string(c.colour_type) + ", interlace " +
                             std::to_string(c.interlace) +
                             " (expected 8-bit RGB or RGBA, not interlaced)");
  return c;
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes the per-row filters (PNG spec 9.2) in place; rows of 1 + stride bytes.
void unfilter(std::vector<unsigned char>& raw, size_t rows, size_t stride, size_t bpp) {
  for (size_t y = 0; y < rows; ++y) {
    unsigned char* row = &raw[y * (stride + 1)];
    const unsigned char* up = y > 0 ? &raw[(y - 1) * (stride + 1) + 1] : nullptr;
    const int filter = row[0];
    unsigned char* px = row + 1;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? px[i - bpp] : 0, b = up ? up[i] : 0,
                c = (up && i >= bpp) ? up[i - bpp] : 0;
      const int add = filter == 1   ? a
                      : filter == 2 ? b
                      : filter == 3 ? (a + b) / 2
                      : filter == 4 ? paeth(a, b, c)
                                    : 0;
      if (filter > 4) throw std::runtime_error("bad filter type " + std::to_string(filter));
      px[i] = static_cast<unsigned char>(px[i] + add);
    }
  }
}

Image decode(const std::vector<unsigned char>& file) {
  const Chunks c = read_chunks(file);
  const size_t bpp = c.colour_type == 6 ? 4 : 3, stride = c.width * bpp;
  std::vector<unsigned char> raw((stride + 1) * c.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, c.idat.data(), c.idat.size()) != Z_OK || size != raw.size())
    throw std::runtime_error("the image data does not inflate to " + std::to_string(raw.size()) +
                             " bytes");
  unfilter(raw, c.height, stride, bpp);
  Image img{c.width, c.height, {}};
  img.rgb.reserve(static_cast<size_t>(c.width) * c.height);
  for (size_t y = 0; y < c.height; ++y)
    for (size_t x = 0; x < c.width; ++x) {
      const unsigned char* p = &raw[y * (stride + 1) + 1 + x * bpp];
      img.rgb.push_back((uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]);
    }
  return img;
}

bool near(uint32_t a, uint32_t b) {
  for (int s = 0; s <= 16; s += 8)
    if (std::abs(static_cast<int>((a >> s) & 255) - static_cast<int>((b >> s) & 255)) > 24)
      return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: png_stats FILE [#rrggbb ...]\n");
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) throw std::runtime_error("cannot open it");
    const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), {});
    const Image img = decode(file);
    std::unordered_set<uint32_t> colours(img.rgb.begin(), img.rgb.end());
    size_t non_white = 0;
    for (const uint32_t p : img.rgb)
      non_white += ((p >> 16) & 255) < 240 || ((p >> 8) & 255) < 240 || (p & 255) < 240;
    std::printf("png %u %u\ndistinct_colours %zu\nnon_white_percent %.2f\n", img.width, img.height,
                colours.size(), 100.0 * non_white / std::max<size_t>(1, img.rgb.size()));
    for (int k = 2; k < argc; ++k) {
      const std::string hex = argv[k];
      if (hex.size() != 7 || hex[0] != '#') throw std::runtime_error("colour " + hex + "?");
      const auto want = static_cast<uint32_t>(std::stoul(hex.substr(1), nullptr, 16));
      std::printf("colour %s %zu\n", hex.c_str(),
                  static_cast<size_t>(std::count_if(img.rgb.begin(), img.rgb.end(),
                                                    [&](uint32_t p) { return near(p, want); })));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "png_stats: %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
