#include "bitparity/properties/case_tape.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/tensor_view.hpp"
#include "bitparity/properties/show.hpp"

namespace bitparity::properties {

using nlohmann::json;

std::string CaseTape::next_key(const std::string& name) {
  std::string key = key_after(name);
  ++uses_[name];
  return key;
}

std::string CaseTape::key_after(const std::string& name) const {
  const auto found = uses_.find(name);
  const int use = (found == uses_.end() ? 0 : found->second) + 1;
  return use == 1 ? name : name + "#" + std::to_string(use);
}

json CaseTape::encoded_inputs() const {
  json inputs = json::object();
  for (const auto& entry : entries_) inputs[entry.key] = entry.encode();
  return inputs;
}

json CaseTape::encoded_notes() const {
  json notes = json::object();
  for (const auto& entry : entries_) {
    if (!entry.notes.empty()) notes[entry.key] = entry.notes;
  }
  return notes;
}

std::vector<std::string> CaseTape::unread_inputs() const {
  std::vector<std::string> unread;
  if (!inputs_.is_object()) return unread;
  for (const auto& [key, value] : inputs_.items()) {
    if (std::find(consumed_.begin(), consumed_.end(), key) == consumed_.end()) unread.push_back(key);
  }
  return unread;
}

namespace {

int bit_width(DType dtype) { return dtype == DType::f32 ? 32 : 16; }

void require_float_dtype(DType dtype) {
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    throw CaseFileError(std::string("dtype ") + dtype_name(dtype) + " is not a float dtype; use f32, f16 or bf16");
  }
}

float value_of(std::uint32_t bits, DType dtype) {
  switch (dtype) {
    case DType::f16: return f16_to_float(static_cast<std::uint16_t>(bits));
    case DType::bf16: return bf16_to_float(static_cast<std::uint16_t>(bits));
    default: return float_from_bits(bits);
  }
}

std::uint32_t bits_in(float value, DType dtype) {
  switch (dtype) {
    case DType::f16: return float_to_f16(value);
    case DType::bf16: return float_to_bf16(value);
    default: return float_bits(value);
  }
}

std::string hexfloat(float value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char text[48];
  std::snprintf(text, sizeof text, "%a", static_cast<double>(value));
  return text;
}

std::string encode_bits(std::uint32_t bits, DType dtype) {
  char text[16];
  std::snprintf(text, sizeof text, dtype == DType::f32 ? "0x%08" PRIx32 : "0x%04" PRIx32, bits);
  return hexfloat(value_of(bits, dtype)) + " " + text;
}

std::uint32_t decode_bits(const json& entry, DType dtype) {
  if (!entry.is_string()) throw CaseFileError("a float must be a string \"hexfloat bits\", got " + entry.dump());
  const std::string text = entry.get<std::string>();
  const std::size_t space = text.rfind(' ');
  const std::size_t digits = static_cast<std::size_t>(bit_width(dtype) / 4);
  if (space == std::string::npos || text.size() != space + 3 + digits || text.compare(space + 1, 2, "0x") != 0) {
    throw CaseFileError("'" + text + "' is not \"hexfloat bits\" with " + std::to_string(digits) + " hex digits of " +
                        dtype_name(dtype) + " bits, e.g. \"" + encode_bits(bits_in(1.5f, dtype), dtype) + "\"");
  }
  std::uint32_t bits = 0;
  for (std::size_t i = space + 3; i < text.size(); ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : (c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1));
    if (digit < 0) throw CaseFileError("'" + text + "': the bits are not hexadecimal");
    bits = bits << 4 | static_cast<std::uint32_t>(digit);
  }
  const std::string canonical = encode_bits(bits, dtype);
  std::string lowered = text;
  std::transform(lowered.begin() + static_cast<std::ptrdiff_t>(space), lowered.end(), lowered.begin() + static_cast<std::ptrdiff_t>(space),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lowered != canonical) {
    throw CaseFileError("'" + text + "': the hexfloat is not the value of the bits (they decode to " +
                        canonical.substr(0, canonical.find(' ')) + "); the bits decide, fix or remove the hexfloat");
  }
  return bits;
}

std::int64_t integer_field(const json& object, const char* key, std::int64_t lo, std::int64_t hi) {
  if (!object.is_object() || !object.contains(key)) throw CaseFileError(std::string("missing field '") + key + "'");
  const json& value = object.at(key);
  if (!value.is_number_integer()) throw CaseFileError(std::string("field '") + key + "' must be a whole number, got " + value.dump());
  // 2^64 - 1 (unsigned in JSON) reads as -1 through int64: judged and named as written.
  const bool past_int64 = value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX);
  const std::int64_t n = past_int64 ? INT64_MAX : value.get<std::int64_t>();
  if (past_int64 || n < lo || n > hi) {
    throw CaseFileError(std::string("field '") + key + "' is " + value.dump() + ", outside [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
  }
  return n;
}

void require_keys(const json& object, std::initializer_list<const char*> keys, const std::string& what) {
  if (!object.is_object()) throw CaseFileError(what + " must be an object, got " + object.dump());
  for (const auto& [key, value] : object.items()) {
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      throw CaseFileError(what + " has an unknown field '" + key + "'");
    }
  }
}

}  // namespace

std::string encode_float(float value, DType dtype) { return encode_bits(bits_in(value, dtype), dtype); }

float decode_float(const json& text, DType dtype) { return value_of(decode_bits(text, dtype), dtype); }

json encode_floats(const std::vector<float>& values, DType dtype) {
  json list = json::array();
  for (float v : values) list.push_back(encode_float(v, dtype));
  return list;
}

std::vector<float> decode_floats(const json& list, DType dtype, std::size_t max_count) {
  if (!list.is_array()) throw CaseFileError("a list of floats must be an array");
  if (list.size() > max_count) {
    throw CaseFileError("the list holds " + std::to_string(list.size()) + " values, more than " + std::to_string(max_count));
  }
  std::vector<float> values;
  values.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    try {
      values.push_back(decode_float(list[i], dtype));
    } catch (const CaseFileError& error) {
      throw CaseFileError("element " + std::to_string(i) + ": " + error.what());
    }
  }
  return values;
}

json encode_input(bool value) { return value; }
void decode_input(const json& j, bool& value) {
  if (!j.is_boolean()) throw CaseFileError("expected true or false, got " + j.dump());
  value = j.get<bool>();
}

json encode_input(int value) { return value; }
void decode_input(const json& j, int& value) {
  if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
    throw CaseFileError("expected a whole number of int's range, got " + j.dump());
  }
  const auto n = j.get<std::int64_t>();
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) throw CaseFileError("out of range: " + j.dump());
  value = static_cast<int>(n);
}

json encode_input(std::int64_t value) { return value; }
void decode_input(const json& j, std::int64_t& value) {
  if (!j.is_number_integer()) throw CaseFileError("expected a whole number, got " + j.dump());
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw CaseFileError("out of range: " + j.dump() + " is past 2^63 - 1");
  }
  value = j.get<std::int64_t>();
}

json encode_input(std::uint64_t value) { return std::to_string(value); }
void decode_input(const json& j, std::uint64_t& value) {
  if (!j.is_string()) throw CaseFileError("expected a decimal string (64-bit values lose bits as JSON numbers), got " + j.dump());
  const std::string text = j.get<std::string>();
  if (text.empty() || text.size() > 20 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw CaseFileError("'" + text + "' is not a decimal number from 0 to 18446744073709551615");
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) throw CaseFileError("'" + text + "' is larger than 18446744073709551615");
  value = parsed;
}

json encode_input(float value) { return encode_float(value, DType::f32); }
void decode_input(const json& j, float& value) { value = decode_float(j, DType::f32); }

json encode_input(DType value) { return dtype_name(value); }
void decode_input(const json& j, DType& value) {
  if (!j.is_string()) throw CaseFileError("a dtype must be a string (f32, f16, bf16), got " + j.dump());
  try {
    value = parse_dtype(j.get<std::string>());
  } catch (const Error& error) {
    throw CaseFileError(error.message());  // without the code's name ("invalid_argument: ")
  }
}

json encode_input(const CodesInput& value) { return value.codes; }
void decode_input(const json& j, CodesInput& value) {
  if (!j.is_array() || static_cast<std::int64_t>(j.size()) > kMaxCaseElements) {
    throw CaseFileError("codes must be an array of at most 2^24 codes");
  }
  value.codes.clear();
  for (const auto& code : j) {
    if (!code.is_number_integer() || code.get<std::int64_t>() < 0 || code.get<std::int64_t>() > 255) {
      throw CaseFileError("a code must be a whole number from 0 to 255, got " + code.dump());
    }
    value.codes.push_back(code.get<std::int64_t>());
  }
}

json encode_input(const std::vector<std::int64_t>& value) { return value; }
void decode_input(const json& j, std::vector<std::int64_t>& value) {
  if (!j.is_array() || j.size() > 8) throw CaseFileError("a shape must be an array of at most 8 sizes, got " + j.dump());
  value.clear();
  std::int64_t numel = 1;
  for (const auto& size : j) {
    if (!size.is_number_integer() || size.get<std::int64_t>() < 0 || size.get<std::int64_t>() > kMaxCaseElements) {
      throw CaseFileError("a size must be a whole number from 0 to " + std::to_string(kMaxCaseElements) + ", got " + size.dump());
    }
    value.push_back(size.get<std::int64_t>());
    numel = std::min<std::int64_t>(numel * value.back(), kMaxCaseElements + 1);
  }
  if (numel > kMaxCaseElements) throw CaseFileError("the shape " + j.dump() + " has more than 2^24 elements");
}

json encode_input(const Layout& value) {
  return {{"sizes", value.sizes}, {"strides", value.strides}, {"offset", value.offset},
          {"storage_elements", value.storage_elements}, {"recipe", value.recipe}};
}

void decode_input(const json& j, Layout& value) {
  require_keys(j, {"sizes", "strides", "offset", "storage_elements", "recipe"}, "a layout");
  for (const char* key : {"sizes", "strides"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("a layout needs '") + key + "'");
  }
  decode_input(j.at("sizes"), value.sizes);
  const json& strides = j.at("strides");
  if (!strides.is_array() || strides.size() > 8) throw CaseFileError("strides must be an array of at most 8 whole numbers");
  value.strides.clear();
  for (const auto& stride : strides) {
    if (!stride.is_number_integer() || stride.get<std::int64_t>() < 0 || stride.get<std::int64_t>() > kMaxCaseElements) {
      throw CaseFileError("a stride must be a whole number from 0 to " + std::to_string(kMaxCaseElements) + ", got " + stride.dump());
    }
    value.strides.push_back(stride.get<std::int64_t>());
  }
  if (value.sizes.size() != value.strides.size()) {
    throw CaseFileError("a layout has " + std::to_string(value.sizes.size()) + " sizes but " +
                        std::to_string(value.strides.size()) + " strides");
  }
  value.offset = integer_field(j, "offset", 0, kMaxCaseElements);
  value.storage_elements = integer_field(j, "storage_elements", 0, kMaxCaseElements);
  value.recipe = j.contains("recipe") && j.at("recipe").is_string() ? j.at("recipe").get<std::string>() : "";
  // Every element the view reaches lies inside the storage.
  std::int64_t last = value.offset;
  bool empty = false;
  for (std::size_t d = 0; d < value.sizes.size(); ++d) {
    empty = empty || value.sizes[d] == 0;
    if (value.sizes[d] > 0) last += (value.sizes[d] - 1) * value.strides[d];  // each term below 2^48: no overflow
  }
  if (!empty && last >= value.storage_elements) {
    throw CaseFileError("the view reaches storage element " + std::to_string(last) + " but the storage holds " +
                        std::to_string(value.storage_elements));
  }
}

void require_finite_values(const std::vector<float>& values, const std::string& why) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) throw CaseFileError("element " + std::to_string(i) + " is " + show_float(values[i]) + "; " + why);
  }
}

void require_output_layout(const Layout& layout, const std::string& what) {
  if (is_non_overlapping(make_index(layout.sizes, layout.strides, layout.offset))) return;
  std::string strides;
  for (const auto stride : layout.strides) strides += (strides.empty() ? "" : ", ") + std::to_string(stride);
  throw CaseFileError(what + " reaches a storage element twice (strides [" + strides +
                      "]); an output's strides must keep its elements apart, as a contiguous layout's do");
}

json encode_input(const LaunchConfig& value) {
  return {{"threads", value.threads}, {"max_grid", value.max_grid}, {"blocks_per_launch", value.blocks_per_launch}};
}

void decode_input(const json& j, LaunchConfig& value) {
  require_keys(j, {"threads", "max_grid", "blocks_per_launch"}, "a launch");
  value.threads = static_cast<int>(integer_field(j, "threads", 0, 1024));
  value.max_grid = integer_field(j, "max_grid", 0, std::int64_t{1} << 31);
  value.blocks_per_launch = integer_field(j, "blocks_per_launch", 0, std::int64_t{1} << 31);
}

json encode_input(const StochasticRounding& value) {
  return {{"enabled", value.enabled}, {"seed", encode_input(value.seed)}, {"stream", encode_input(value.stream)},
          {"element_offset", encode_input(value.element_offset)}};
}

void decode_input(const json& j, StochasticRounding& value) {
  require_keys(j, {"enabled", "seed", "stream", "element_offset"}, "stochastic rounding");
  for (const char* key : {"enabled", "seed", "stream", "element_offset"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("stochastic rounding needs '") + key + "'");
  }
  decode_input(j.at("enabled"), value.enabled);
  decode_input(j.at("seed"), value.seed);
  decode_input(j.at("stream"), value.stream);
  decode_input(j.at("element_offset"), value.element_offset);
}

json encode_input(const TensorInput& value) {
  const std::vector<std::uint8_t>& bytes = value.tensor.bytes();
  const int width = bit_width(value.dtype) / 8;
  json storage = json::array();
  for (std::size_t at = 0; at + static_cast<std::size_t>(width) <= bytes.size(); at += static_cast<std::size_t>(width)) {
    std::uint32_t bits = 0;
    if (width == 4) {
      std::memcpy(&bits, bytes.data() + at, 4);
    } else {
      std::uint16_t half = 0;
      std::memcpy(&half, bytes.data() + at, 2);
      bits = half;
    }
    storage.push_back(encode_bits(bits, value.dtype));
  }
  return {{"dtype", dtype_name(value.dtype)}, {"layout", encode_input(value.layout)}, {"storage", storage}};
}

void decode_input(const json& j, TensorInput& value) {
  require_keys(j, {"dtype", "layout", "storage"}, "a tensor");
  for (const char* key : {"dtype", "layout", "storage"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("a tensor needs '") + key + "'");
  }
  decode_input(j.at("dtype"), value.dtype);
  require_float_dtype(value.dtype);
  decode_input(j.at("layout"), value.layout);
  const json& storage = j.at("storage");
  if (!storage.is_array() || static_cast<std::int64_t>(storage.size()) != value.layout.storage_elements) {
    throw CaseFileError("a tensor's storage must list its " + std::to_string(value.layout.storage_elements) +
                        " storage elements");
  }
  value.tensor = make_tensor(value.dtype, value.layout);
  const std::size_t width = static_cast<std::size_t>(bit_width(value.dtype) / 8);
  std::vector<std::uint8_t>& bytes = value.tensor.bytes();
  for (std::size_t i = 0; i < storage.size(); ++i) {
    std::uint32_t bits = 0;
    try {
      bits = decode_bits(storage[i], value.dtype);
    } catch (const CaseFileError& error) {
      throw CaseFileError("storage element " + std::to_string(i) + ": " + error.what());
    }
    if (width == 4) {
      std::memcpy(bytes.data() + i * 4, &bits, 4);
    } else {
      const auto half = static_cast<std::uint16_t>(bits);
      std::memcpy(bytes.data() + i * 2, &half, 2);
    }
  }
}

json encode_input(const ValuesInput& value) {
  // fp32 bits whatever the dtype: a 16-bit value widens exactly, NaN payloads included.
  return {{"dtype", dtype_name(value.dtype)}, {"values", encode_floats(value.values, DType::f32)}};
}

void decode_input(const json& j, ValuesInput& value) {
  require_keys(j, {"dtype", "values"}, "a list of values");
  if (!j.contains("dtype") || !j.contains("values")) throw CaseFileError("a list of values needs 'dtype' and 'values'");
  decode_input(j.at("dtype"), value.dtype);
  require_float_dtype(value.dtype);
  value.values = decode_floats(j.at("values"), DType::f32, static_cast<std::size_t>(kMaxCaseElements));
  require_values_of_dtype(value.values, value.dtype);
}

void require_values_of_dtype(const std::vector<float>& values, DType dtype) {
  // Written as fp32 bits, the values of an f16 or bf16 list must be values of that dtype: an edit to
  // 1 + 2^-23 ran as an f16 input and was reported as the correct kernel's violation.
  if (dtype == DType::f32) return;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    const float back = dtype == DType::f16 ? f16_to_float(float_to_f16(v)) : bf16_to_float(float_to_bf16(v));
    // A NaN of the dtype widens with its payload in the top bits and zeros below (narrowing back
    // would quiet a signalling one, so the bits are judged, not the round trip).
    const std::uint32_t below = dtype == DType::f16 ? 0x1FFFu : 0xFFFFu;
    const bool held = std::isnan(v) ? (float_bits(v) & below) == 0 : float_bits(back) == float_bits(v);
    if (!held) {
      throw CaseFileError("element " + std::to_string(i) + ": " + encode_float(v) + " is no " +
                          std::string(dtype_name(dtype)) + " value, and the list is of dtype " + std::string(dtype_name(dtype)));
    }
  }
}

json encode_input(const HyperInput& value) {
  const OptimizerInfo& info = optimizer_info(value.kind);
  json j = {{"optimizer", std::string(info.name)},
            {"step", value.hyper.step},
            {"grad_scale", encode_float(value.hyper.grad_scale)},
            {"maximize", value.hyper.maximize},
            {"max_unorm", encode_float(value.hyper.max_unorm)}};
  for (const auto& spec : info.hyperparameters) {
    const double v = spec.get(value.hyper);
    if (spec.range == ValueRange::flag) {
      j[std::string(spec.name)] = v != 0.0;
    } else if (spec.range == ValueRange::count) {
      j[std::string(spec.name)] = static_cast<std::int64_t>(v);
    } else {
      j[std::string(spec.name)] = encode_float(static_cast<float>(v));
    }
  }
  return j;
}

void decode_input(const json& j, HyperInput& value) {
  if (!j.is_object() || !j.contains("optimizer") || !j.at("optimizer").is_string()) {
    throw CaseFileError("hyperparameters need the optimizer's name ('optimizer')");
  }
  try {
    value.kind = parse_optimizer(j.at("optimizer").get<std::string>());
  } catch (const Error& error) {
    throw CaseFileError(error.what());
  }
  const OptimizerInfo& info = optimizer_info(value.kind);
  value.hyper = Hyperparameters{};
  value.hyper.step = integer_field(j, "step", 1, std::int64_t{1} << 40);
  if (!j.contains("grad_scale") || !j.contains("maximize") || !j.contains("max_unorm")) {
    throw CaseFileError("hyperparameters need step, grad_scale, maximize and max_unorm");
  }
  decode_input(j.at("grad_scale"), value.hyper.grad_scale);
  decode_input(j.at("maximize"), value.hyper.maximize);
  decode_input(j.at("max_unorm"), value.hyper.max_unorm);
  std::size_t known = 5;
  for (const auto& spec : info.hyperparameters) {
    const std::string name(spec.name);
    if (!j.contains(name)) throw CaseFileError(std::string(info.name) + " reads the hyperparameter '" + name + "', which the case lacks");
    ++known;
    const json& entry = j.at(name);
    if (spec.range == ValueRange::flag) {
      bool flag = false;
      decode_input(entry, flag);
      spec.set(value.hyper, flag ? 1.0 : 0.0);
    } else if (spec.range == ValueRange::count) {
      std::int64_t count = 0;
      decode_input(entry, count);
      spec.set(value.hyper, static_cast<double>(count));
    } else {
      float v = 0;
      decode_input(entry, v);
      spec.set(value.hyper, v);
    }
  }
  if (j.size() != known) {
    for (const auto& [key, entry] : j.items()) {
      const bool read = key == "optimizer" || key == "step" || key == "grad_scale" || key == "maximize" || key == "max_unorm" ||
                        std::any_of(info.hyperparameters.begin(), info.hyperparameters.end(),
                                    [&](const HyperparameterSpec& spec) { return spec.name == key; });
      if (!read) throw CaseFileError(std::string(info.name) + " has no hyperparameter '" + key + "'");
    }
  }
  // Only values the descriptor's domain holds are cases: an edited lr = -1 would be refused by every
  // implementation, which a replay would count as a violation (or, on a mutant, as a kill).
  try {
    validate_hyperparameters(value.kind, value.hyper);
  } catch (const Error& error) {
    throw CaseFileError("hyperparameters outside the optimizer's domain, so no case of any property (" + error.message() + ")");
  }
}

}  // namespace bitparity::properties
