// The registry of code maps and the decision table of each, built once when the map is registered.
#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <deque>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

namespace {

// The largest fp32 value <= the exact midpoint M. For every fp32 v, `threshold < v` holds exactly
// when `M < v`, so counting thresholds below v picks the code nearest to v, and a v equal to M (a
// tie) the lower one. Rounding M to nearest instead would give the lower code to the fp32 value just
// above M whenever M rounded up.
float decision_threshold(double midpoint) {
  float threshold = static_cast<float>(midpoint);
  if (static_cast<double>(threshold) > midpoint) threshold = std::nextafter(threshold, -std::numeric_limits<float>::infinity());
  return threshold;
}

std::string shown_float(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
  return text;
}

// The count of midpoints below v is monotonic in v, so over a bucket of bit patterns it lies between
// its values at the bucket's two ends (for negative patterns the larger bits are the smaller values).
// A bucket holding NaN patterns (exponent field 255) starts at 0, the count of a NaN; the search
// handles +inf, which shares such a bucket, on its own.
void index_buckets(CodeTable& table, std::string_view name) {
  for (std::uint32_t bucket = 0; bucket < 4096; ++bucket) {
    const bool holds_nan = ((bucket >> 3) & 0xFFu) == 0xFFu;
    if (holds_nan) {
      table.bucket_low[bucket] = 0;
      continue;
    }
    const float first = float_from_bits(bucket << 20), last = float_from_bits((bucket << 20) | 0xFFFFFu);
    const int a = nearest_sorted_index_by_search(table, first), b = nearest_sorted_index_by_search(table, last);
    const int low = std::min(a, b), high = std::max(a, b);
    if (high - low >= kBucketWindow) {
      // The bucket is an eighth of a binade: say where, and what would fit.
      throw Error(ErrorCode::invalid_argument,
                  "code map " + std::string(name) + ": " + std::to_string(high - low) + " midpoints between its values lie in [" +
                      shown_float(std::min(first, last)) + ", " + shown_float(std::max(first, last)) +
                      "], an eighth of a binade, more than the " + std::to_string(kBucketWindow - 1) +
                      " the decision index searches there; space the values wider in that range (or use fewer)");
    }
    table.bucket_low[bucket] = low;
  }
}

// Fills the finer index for buckets of 2^shift magnitude patterns, or returns false where a bucket
// would hold two thresholds or the buckets would not fit. Each bucket's patterns (with the clamped
// ones below the floor and above the ceiling, up to infinity) are an interval of values, over which
// the search's count rises by at most one: at the interval's ends the counts are c and c or c + 1,
// and threshold c decides between them. (A threshold whose magnitude lies outside its bucket's
// patterns, which the entry could not spell, is refused too: only a zero threshold in the clamped
// first bucket could, and the 2^29 bound between neighbours then puts the floor at zero or the map
// past the buckets.)
bool index_nearest_with_shift(CodeTable& table, int shift) {
  constexpr std::uint32_t kInfinityBits = 0x7F800000u;
  std::uint32_t smallest = kInfinityBits, largest = 0;  // nonzero threshold magnitudes
  for (int i = 0; i + 1 < table.sorted_count; ++i) {
    const std::uint32_t magnitude = float_bits(table.thresholds[i]) & 0x7FFFFFFFu;
    if (magnitude != 0) smallest = std::min(smallest, magnitude);
    largest = std::max(largest, magnitude);
  }
  if (smallest == kInfinityBits) smallest = 0;
  const std::uint32_t floor = (smallest >> shift) << shift, ceiling = (largest >> shift) << shift;
  const std::int64_t per_sign = ((ceiling - floor) >> shift) + 1;
  if (2 * per_sign > kNearestBuckets) return false;
  for (std::int64_t bucket = 0; bucket < per_sign; ++bucket) {
    const std::uint32_t start = floor + (static_cast<std::uint32_t>(bucket) << shift);
    const std::uint32_t first = bucket == 0 ? 0u : start;
    const std::uint32_t last = bucket + 1 == per_sign ? kInfinityBits : start + (1u << shift) - 1;
    for (std::uint32_t sign = 0; sign < 2; ++sign) {
      const float a = float_from_bits((sign << 31) | first), b = float_from_bits((sign << 31) | last);
      const int low = nearest_sorted_index_by_search(table, std::min(a, b));
      const int high = nearest_sorted_index_by_search(table, std::max(a, b));
      if (high - low > 1) return false;
      std::uint32_t low_bits = 0;
      if (high > low) {
        const std::uint32_t magnitude = float_bits(table.thresholds[low]) & 0x7FFFFFFFu;
        if ((magnitude >> shift) != (start >> shift)) return false;
        low_bits = magnitude - start;
      }
      const auto below = static_cast<std::uint32_t>(table.sorted_codes[low]);
      const auto above = static_cast<std::uint32_t>(table.sorted_codes[high]);
      table.nearest_entry[bucket + sign * per_sign] = low_bits | (below << 16) | (above << 24);
    }
  }
  table.nearest_shift = shift;
  table.nearest_floor = floor;
  table.nearest_ceiling = ceiling;
  table.nearest_per_sign = static_cast<std::int32_t>(per_sign);
  return true;
}

// The coarsest finer index that holds (fewest buckets, so fewest cache lines touched) with buckets
// of at most 2^kNearestLowBits patterns, if any: a map with thresholds closer than 2^-12 of their
// magnitude, or spread over more exponents than the buckets cover, keeps the windowed search.
void index_nearest(CodeTable& table) {
  table.nan_code = table.sorted_codes[nearest_sorted_index_by_search(table, std::numeric_limits<float>::quiet_NaN())];
  for (int fraction_bits = 23 - kNearestLowBits; fraction_bits <= 12; ++fraction_bits) {
    if (index_nearest_with_shift(table, 23 - fraction_bits)) {
      table.nearest_ready = 1;
      return;
    }
  }
}

// The search position (input_keys.hpp's layout: the root 1, children 2p and 2p + 1) of the threshold
// of sorted index s: s + 1 = (2j + 1) * (first_step >> level) at position 2^level + j.
int search_position_of_sorted_index(int s, int first_step) {
  int level = 0;
  while ((first_step >> level) > 1 && (s + 1) % (first_step >> level) != 0) ++level;
  const int odd = (s + 1) / (first_step >> level);
  return (1 << level) + (odd - 1) / 2;
}

// The decision table of a map. Throws Error(invalid_argument) naming the map and what is wrong.
CodeTable build_table(const CodeMap& map) {
  const std::vector<float>& values = map.values;
  const std::string prefix = "code map '" + map.name + "': ";
  CodeTable table;
  table.bits = map.bits;
  for (std::size_t code = 0; code < values.size(); ++code) {
    if (!std::isfinite(values[code])) {
      throw Error(ErrorCode::invalid_argument, prefix + "code " + std::to_string(code) +
                                                   " is not finite; every code needs a finite fp32 value");
    }
    // Codes scale the block absmax: a value beyond +-1 is never the nearest to x/absmax in [-1, 1],
    // and value * absmax could leave fp32's range.
    if (std::fabs(values[code]) > 1.0f) {
      throw Error(ErrorCode::invalid_argument, prefix + "code " + std::to_string(code) + " is " +
                                                   std::to_string(values[code]) +
                                                   "; codes scale the block absmax, so every value lies in [-1, 1] "
                                                   "(divide the map by its largest magnitude)");
    }
  }
  std::vector<int> order(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) order[i] = static_cast<int>(i);
  // Ascending by value; among equal values (duplicate zeros, -0 and +0) the lowest code is emitted.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return values[a] < values[b]; });
  bool zero_found = false;
  table.smallest_magnitude = 1.0f;  // values lie in [-1, 1], and one is nonzero (two are distinct)
  for (std::size_t code = 0; code < values.size(); ++code) {
    table.code_values[code] = values[code];
    if (values[code] != 0.0f) table.smallest_magnitude = std::min(table.smallest_magnitude, std::fabs(values[code]));
    if (!zero_found && float_bits(values[code]) == 0u) {
      table.zero_code = static_cast<std::uint8_t>(code);
      zero_found = true;
    }
  }
  if (!zero_found) {
    throw Error(ErrorCode::invalid_argument, prefix + "no code has the value +0.0; blocks without finite data need one");
  }
  for (int code : order) {
    if (table.sorted_count > 0 && values[code] == table.sorted_values[table.sorted_count - 1]) continue;
    table.sorted_values[table.sorted_count] = values[code];
    table.sorted_codes[table.sorted_count] = code;
    ++table.sorted_count;
  }
  if (table.sorted_count < 2) throw Error(ErrorCode::invalid_argument, prefix + "needs at least two distinct values");
  for (int i = 0; i + 1 < table.sorted_count; ++i) {
    const double a = table.sorted_values[i], b = table.sorted_values[i + 1];
    const double midpoint = (a + b) / 2.0;  // exact when the neighbours are within 2^29 of each other
    if ((a + b) - a != b || (a + b) - b != a) {
      throw Error(ErrorCode::invalid_argument, prefix + "neighbouring values " + shown_float(static_cast<float>(a)) + " and " + shown_float(static_cast<float>(b)) +
                                                   " are too far apart for an exact midpoint in double; use values "
                                                   "within a factor 2^29 of their neighbours");
    }
    table.thresholds[i] = decision_threshold(midpoint);
  }
  for (int i = table.sorted_count; i < 256; ++i) table.sorted_values[i] = std::numeric_limits<float>::infinity();
  for (int i = table.sorted_count - 1; i < 256 + kBucketWindow; ++i) table.thresholds[i] = std::numeric_limits<float>::infinity();
  // Counts run up to sorted_count - 1 (v beyond the last code is handled before the search), and
  // the steps first_step, first_step/2, ..., 1 reach 2*first_step - 1.
  table.first_step = 1;
  while (2 * table.first_step < table.sorted_count) table.first_step *= 2;
  int at = 0;
  for (int step = table.first_step; step > 0; step >>= 1) {
    for (int below = 0; below < 2 * table.first_step; below += 2 * step) table.thresholds_by_level[at++] = table.thresholds[below + step - 1];
  }
  for (int i = 0; i < 256; ++i) {
    const float threshold = i < at ? table.thresholds_by_level[i] : std::numeric_limits<float>::infinity();
    const float above = std::nextafter(threshold, std::numeric_limits<float>::infinity());  // +inf stays
    table.level_edges[i] = std::isinf(threshold) ? static_cast<double>(threshold)
                                                 : (static_cast<double>(threshold) + static_cast<double>(above)) / 2.0;
    table.level_edge_closed[i] = (float_bits(threshold) & 1u) == 0u ? 1 : 0;
  }
  table.key_bounds_by_position[0] = std::numeric_limits<double>::infinity();
  table.key_thresholds_by_position[0] = std::numeric_limits<float>::infinity();
  double smallest_half_gap = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 255; ++i) {
    const bool open = table.level_edge_closed[i] == 0;
    const double sign = open ? -1.0 : 1.0;
    table.key_bounds_by_position[i + 1] = sign * table.level_edges[i];
    const float threshold = i < at ? table.thresholds_by_level[i] : std::numeric_limits<float>::infinity();
    const double half_gap = std::isinf(threshold) ? 0.0 : table.level_edges[i] - static_cast<double>(threshold);
    table.key_thresholds_by_position[i + 1] = static_cast<float>(sign) * threshold;
    table.key_half_gaps_by_position[i + 1] = static_cast<float>(sign * half_gap);
    if (half_gap > 0) smallest_half_gap = std::min(smallest_half_gap, half_gap);
    // A half gap of 1 or more (|threshold| >= 2^24) could overflow when multiplied by an absmax.
    if (half_gap >= 1.0) smallest_half_gap = 0.0;
  }
  for (int p = 0; p < 256; ++p) {
    const bool negative = std::signbit(table.key_bounds_by_position[p]);
    const bool open = p > 0 && table.level_edge_closed[p - 1] == 0;  // position 0 (+inf) is never read
    table.key_flips_by_position[p] = (negative ? 0xFFFFFFFFu : 0x80000000u) ^ (open ? 0xFFFFFFFFu : 0u);
    table.key_steps_by_position[p] = open ? -1 : 0;
    table.narrow_key_flips_by_position[p] = static_cast<std::uint16_t>(table.key_flips_by_position[p] >> 16);
    table.narrow_key_steps_by_position[p] = static_cast<std::int16_t>(open ? -1 : 0);
    table.bf16_round_ups_by_position[p] = negative ? 0xFFFFu : 0u;
  }
  for (int count = 0; count < 256; ++count) {
    const int position = count < 2 * table.first_step - 1 ? search_position_of_sorted_index(count, table.first_step) : 0;
    table.key_bounds_by_count[count] = table.key_bounds_by_position[position];
    table.key_thresholds_by_count[count] = table.key_thresholds_by_position[position];
    table.key_half_gaps_by_count[count] = table.key_half_gaps_by_position[position];
    table.key_flips_by_count[count] = table.key_flips_by_position[position] ^ 0x80000000u;  // signed keys
    table.key_steps_by_count[count] = table.key_steps_by_position[position];
  }
  // A half gap below 2^-149 is no fp32 value (a threshold of magnitude at most 2^-125 has one).
  table.smallest_half_gap = smallest_half_gap >= 0x1p-149 && !std::isinf(smallest_half_gap) ? static_cast<float>(smallest_half_gap) : 0.0f;
  for (int i = 0; i < 256; ++i) table.sorted_code_bytes[i] = static_cast<std::uint8_t>(table.sorted_codes[i]);
  for (int code = 0; code < 256; ++code) {
    for (int plane = 0; plane < 4; ++plane) {
      table.code_value_planes[plane][code] = static_cast<std::uint8_t>(float_bits(table.code_values[code]) >> (8 * plane));
    }
  }
  index_buckets(table, map.name);
  index_nearest(table);
  return table;
}

bool valid_map_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
}

struct RegisteredMap {
  CodeMap map;
  CodeTable table;
  QuantFormatInfo info;
};

// Entries are appended, never changed or removed, so references to them stay valid.
class MapRegistry {
 public:
  MapRegistry() {
    for (const CodeMap& map : builtin_code_maps()) add(map, true);
  }
  QuantFormat add(const CodeMap& map, bool builtin) {
    const std::lock_guard lock(mutex_);
    for (const RegisteredMap& entry : entries_) {
      if (entry.map.name != map.name) continue;
      if (entry.map.bits == map.bits && bitwise_equal(entry.map.values, map.values)) return entry.info.format;
      throw Error(ErrorCode::invalid_argument, "code map '" + map.name +
                                                   "' is already registered with other values; give the new map "
                                                   "another name");
    }
    if (!valid_map_name(map.name)) {
      // Shown escaped: a NUL in the name cut the message there, before its reason and its fix.
      // Only its first 64 characters: a name of a page of text made a page of message.
      std::string shown;
      for (const unsigned char c : map.name.substr(0, 64)) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
        shown += c >= 0x20 && c < 0x7F ? std::string(1, static_cast<char>(c)) : std::string(escaped);
      }
      if (map.name.size() > 64) shown += "... (" + std::to_string(map.name.size()) + " characters)";
      throw Error(ErrorCode::invalid_argument, "code map name '" + shown +
                                                   "' is not usable; use 1 to 64 letters, digits, '.', '_' or '-'");
    }
    if (map.bits != 8 && map.bits != 4) {
      throw Error(ErrorCode::invalid_argument, "code map '" + map.name + "' has " + std::to_string(map.bits) +
                                                   " bits; use 8 (256 codes) or 4 (16 codes)");
    }
    if (map.values.size() != (std::size_t{1} << map.bits)) {
      throw Error(ErrorCode::invalid_argument, "code map '" + map.name + "' holds " + std::to_string(map.values.size()) +
                                                   " values; a " + std::to_string(map.bits) + "-bit map needs " +
                                                   std::to_string(1 << map.bits));
    }
    if (entries_.size() >= static_cast<std::size_t>(kMaxCodeMaps)) {
      throw Error(ErrorCode::invalid_argument, "more than " + std::to_string(kMaxCodeMaps) + " code maps registered");
    }
    RegisteredMap& entry = entries_.emplace_back(RegisteredMap{map, build_table(map), {}});
    entry.info = {static_cast<QuantFormat>(entries_.size() - 1), entry.map.name, entry.map.bits, entry.map.provenance,
                  builtin};
    return entry.info.format;
  }
  const RegisteredMap& at(QuantFormat format) {
    const std::lock_guard lock(mutex_);
    const auto index = static_cast<std::size_t>(format);
    if (index >= entries_.size()) {
      throw Error(ErrorCode::invalid_argument, "quantization format " + std::to_string(index) + " is not registered");
    }
    return entries_[index];
  }
  std::vector<QuantFormatInfo> infos() {
    const std::lock_guard lock(mutex_);
    std::vector<QuantFormatInfo> list;
    for (const RegisteredMap& entry : entries_) list.push_back(entry.info);
    return list;
  }

 private:
  static bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (float_bits(a[i]) != float_bits(b[i])) return false;
    }
    return true;
  }
  std::mutex mutex_;
  std::deque<RegisteredMap> entries_;
};

MapRegistry& registry() {
  static MapRegistry instance;
  return instance;
}

}  // namespace

QuantFormat register_code_map(const CodeMap& map) { return registry().add(map, false); }

const CodeMap& code_map(QuantFormat format) { return registry().at(format).map; }

std::optional<QuantFormat> find_code_map(int bits, const std::vector<float>& values) {
  for (const auto& info : quant_formats()) {
    const CodeMap& map = code_map(info.format);
    if (map.bits != bits || map.values.size() != values.size()) continue;
    if (std::equal(values.begin(), values.end(), map.values.begin(),
                   [](float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); })) {
      return info.format;
    }
  }
  return std::nullopt;
}

std::vector<QuantFormatInfo> quant_formats() { return registry().infos(); }

const QuantFormatInfo& quant_format_info(QuantFormat format) { return registry().at(format).info; }

QuantFormat parse_quant_format(std::string_view name) {
  std::string choices;
  for (const auto& info : quant_formats()) {
    if (info.name == name) return info.format;
    choices += (choices.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error(ErrorCode::invalid_argument, "unknown format '" + std::string(name) + "'; expected one of " + choices);
}

const CodeTable& code_table(QuantFormat format) { return registry().at(format).table; }

const CodeTable* code_tables_in_a_row(const std::array<QuantFormat, 3>& formats) {
  static std::mutex mutex;
  static std::map<std::array<QuantFormat, 3>, std::unique_ptr<CodeTable[]>> copies;
  const std::lock_guard lock(mutex);
  std::unique_ptr<CodeTable[]>& row = copies[formats];
  if (!row) {
    row = std::make_unique<CodeTable[]>(formats.size());
    for (std::size_t k = 0; k < formats.size(); ++k) row[k] = code_table(formats[k]);
  }
  return row.get();
}

std::vector<std::int64_t> supported_block_sizes(QuantFormat format) {
  std::vector<std::int64_t> sizes;
  if (quant_format_info(format).bits == 4) sizes.push_back(32);
  for (std::int64_t size = 64; size <= kLargestBlocksize; size *= 2) sizes.push_back(size);
  return sizes;
}

void validate_block_size(QuantFormat format, std::int64_t blocksize) {
  const auto sizes = supported_block_sizes(format);
  if (std::find(sizes.begin(), sizes.end(), blocksize) != sizes.end()) return;
  std::string choices;
  for (auto size : sizes) choices += (choices.empty() ? "" : ", ") + std::to_string(size);
  throw Error(ErrorCode::invalid_argument, "block size " + std::to_string(blocksize) + " is not supported for " +
                                               std::string(quant_format_info(format).name) + "; use one of " +
                                               choices);
}

}  // namespace bitparity
