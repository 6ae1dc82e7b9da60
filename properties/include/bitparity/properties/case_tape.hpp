#pragma once
// A case as data. While a property draws, every input it takes through `drawn` is kept under a
// name, with the notes its draw added to the case description. A saved case replays by reading
// those inputs back by name: no generator runs, so a saved case survives generator changes.
//
// Each input type has an encoder and a decoder found by argument-dependent lookup:
//   nlohmann::json encode_input(const T&);   void decode_input(const nlohmann::json&, T&);
// Floats are written as "hexfloat bits" strings ("0x1.8p+0 0x3fc00000"); the bits decide, the
// hexfloat is for people and must agree with them. Decoders refuse anything malformed with
// CaseFileError, naming the input.
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optimizer_types.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

// A saved case that cannot be read: the message names the input and what is wrong with it.
class CaseFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One float as "hexfloat bits": the value's hexfloat ("nan", "-inf" for non-finite values) and its
// bits in `dtype` (8 hex digits for f32, 4 for f16 and bf16).
std::string encode_float(float value, DType dtype = DType::f32);
float decode_float(const nlohmann::json& text, DType dtype = DType::f32);
nlohmann::json encode_floats(const std::vector<float>& values, DType dtype);
// Refuses (CaseFileError "element I: V is no f16 value ...") a value of an f16 or bf16 list, written
// as fp32 bits, that its dtype cannot hold.
void require_values_of_dtype(const std::vector<float>& values, DType dtype);
std::vector<float> decode_floats(const nlohmann::json& list, DType dtype, std::size_t max_count);

// Codecs of the inputs properties take.
nlohmann::json encode_input(bool value);
void decode_input(const nlohmann::json& json, bool& value);
nlohmann::json encode_input(int value);
void decode_input(const nlohmann::json& json, int& value);
nlohmann::json encode_input(std::int64_t value);
void decode_input(const nlohmann::json& json, std::int64_t& value);
nlohmann::json encode_input(std::uint64_t value);  // a decimal string: JSON readers lose bits above 2^53
void decode_input(const nlohmann::json& json, std::uint64_t& value);
nlohmann::json encode_input(float value);
void decode_input(const nlohmann::json& json, float& value);
nlohmann::json encode_input(DType value);
void decode_input(const nlohmann::json& json, DType& value);
nlohmann::json encode_input(const std::vector<std::int64_t>& value);
void decode_input(const nlohmann::json& json, std::vector<std::int64_t>& value);
nlohmann::json encode_input(const Layout& value);
void decode_input(const nlohmann::json& json, Layout& value);
// Refuses (CaseFileError "element I is nan; " + why) the first NaN or Inf of a property's values.
void require_finite_values(const std::vector<float>& values, const std::string& why);
// A layout an operation writes through: refuses (CaseFileError naming `what`) one that reaches a
// storage element twice (a stride of 0, or strides that interleave), which no generator draws for an
// output; the implementation's refusal of it would read as a failure or as a mutant's kill.
void require_output_layout(const Layout& layout, const std::string& what);
nlohmann::json encode_input(const LaunchConfig& value);
void decode_input(const nlohmann::json& json, LaunchConfig& value);
nlohmann::json encode_input(const StochasticRounding& value);
void decode_input(const nlohmann::json& json, StochasticRounding& value);

// A tensor with every storage element (also those outside its view): dtype, layout, storage.
struct TensorInput {
  DType dtype = DType::f32;
  Layout layout;
  fixtures::HostTensor tensor;
};
nlohmann::json encode_input(const TensorInput& value);
void decode_input(const nlohmann::json& json, TensorInput& value);

// Values of one dtype in logical order (every value exactly representable in it).
struct ValuesInput {
  DType dtype = DType::f32;
  std::vector<float> values;
};
nlohmann::json encode_input(const ValuesInput& value);
void decode_input(const nlohmann::json& json, ValuesInput& value);

// Codes of a quantized tensor, one per element in logical order (unpacked, whatever the map's width).
struct CodesInput {
  std::vector<std::int64_t> codes;
};
nlohmann::json encode_input(const CodesInput& value);
void decode_input(const nlohmann::json& json, CodesInput& value);

// An optimizer and its hyperparameters: step, grad_scale, maximize, max_unorm and every
// hyperparameter the optimizer's descriptor names, by name.
struct HyperInput {
  OptimizerKind kind = OptimizerKind::adam;
  Hyperparameters hyper;
};
nlohmann::json encode_input(const HyperInput& value);
void decode_input(const nlohmann::json& json, HyperInput& value);

// The largest tensor a saved case may hold (elements): bigger files are refused, not allocated.
inline constexpr std::int64_t kMaxCaseElements = std::int64_t{1} << 24;

class CaseTape {
 public:
  static CaseTape recording() { return CaseTape(false, {}, {}); }
  // `inputs` as encoded while recording; `notes` the draw notes per input (may be empty).
  static CaseTape replaying(nlohmann::json inputs, nlohmann::json notes) {
    return CaseTape(true, std::move(inputs), std::move(notes));
  }
  bool is_replaying() const { return replaying_; }

  // Recording: run `draw`, keep a copy of its value and the notes it added. Replaying: decode the
  // input of that name and add its recorded notes. A name used twice in one case gets "#2", "#3".
  template <class T, class Draw>
  T take(const std::string& name, PropertyStats& stats, Draw&& draw) {
    const std::string key = next_key(name);
    if (replaying_) {
      if (!inputs_.contains(key)) {
        throw CaseFileError("the case has no input '" + key +
                            "', which this build's property reads: it was saved by a property that draws other inputs");
      }
      T value{};
      try {
        decode_input(inputs_.at(key), value);
      } catch (const CaseFileError& error) {
        throw CaseFileError("input '" + key + "': " + error.what());
      } catch (const nlohmann::json::exception& error) {
        throw CaseFileError("input '" + key + "': " + error.what());
      }
      if (notes_.contains(key) && notes_.at(key).is_string()) stats.note(notes_.at(key).get<std::string>());
      consumed_.push_back(key);
      return value;
    }
    const std::size_t before = stats.context.size();
    T value = draw();
    std::string added = stats.context.substr(std::min(before, stats.context.size()));
    if (added.starts_with("; ")) added.erase(0, 2);
    entries_.push_back({key, [value] { return encode_input(value); }, added});
    return value;
  }

  // As `take`, for an input that properties began to draw after cases were saved: a replayed case
  // without it reads `absent` (what the property did before it drew the input) and notes so.
  template <class T, class Draw>
  T take_or_absent(const std::string& name, PropertyStats& stats, const T& absent, const std::string& absent_note,
                   Draw&& draw) {
    if (replaying_ && inputs_.is_object() && !inputs_.contains(key_after(name))) {
      next_key(name);
      stats.note(absent_note + " (the case file predates input '" + name + "')");
      return absent;
    }
    return take<T>(name, stats, std::forward<Draw>(draw));
  }

  // Recording: every input taken, encoded, and the notes of each.
  nlohmann::json encoded_inputs() const;
  nlohmann::json encoded_notes() const;
  // Replaying: inputs of the file that the property never read (a sign of another version).
  std::vector<std::string> unread_inputs() const;

 private:
  CaseTape(bool replaying, nlohmann::json inputs, nlohmann::json notes)
      : replaying_(replaying), inputs_(std::move(inputs)), notes_(std::move(notes)) {}
  std::string next_key(const std::string& name);
  std::string key_after(const std::string& name) const;  // the key next_key(name) will return

  struct Entry {
    std::string key;
    std::function<nlohmann::json()> encode;
    std::string notes;
  };
  bool replaying_ = false;
  nlohmann::json inputs_, notes_;
  std::vector<Entry> entries_;
  std::map<std::string, int> uses_;
  std::vector<std::string> consumed_;
};

// The input `name` of the current case: drawn (and recorded when the target carries a recording
// tape), or read back from a replayed case. Properties take every drawn input through this.
template <class T, class Draw>
T drawn(const PropertyTarget& target, PropertyStats& stats, const std::string& name, Draw&& draw) {
  if (target.tape == nullptr) return draw();
  return target.tape->take<T>(name, stats, std::forward<Draw>(draw));
}

// As `drawn`, for an input added after cases were saved: older case files replay with `absent`.
template <class T, class Draw>
T drawn_or_absent(const PropertyTarget& target, PropertyStats& stats, const std::string& name, const T& absent,
                  const std::string& absent_note, Draw&& draw) {
  if (target.tape == nullptr) return draw();
  return target.tape->take_or_absent<T>(name, stats, absent, absent_note, std::forward<Draw>(draw));
}

}  // namespace bitparity::properties
