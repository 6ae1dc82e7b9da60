#include "bitparity/properties/case_values.hpp"

#include <algorithm>
#include <optional>

#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/simpler_values.hpp"

namespace bitparity::properties {
namespace {

using json = nlohmann::json;

struct ValueAt {
  json::json_pointer at;
  DType dtype = DType::f32;
  float value = 0.0f;
};

// The dtype of one "hexfloat bits" string, from its bits' width and, for 16 bits, the dtype whose
// bits are its hexfloat; none for a string that is not one.
std::optional<ValueAt> value_at(const json& text, const json::json_pointer& at) {
  const std::string s = text.get<std::string>();
  const std::size_t space = s.rfind(' ');
  if (space == std::string::npos || s.compare(space + 1, 2, "0x") != 0) return std::nullopt;
  const std::size_t digits = s.size() - space - 3;
  const std::vector<DType> candidates = digits == 8 ? std::vector<DType>{DType::f32}
                                        : digits == 4 ? std::vector<DType>{DType::f16, DType::bf16}
                                                      : std::vector<DType>{};
  for (const DType dtype : candidates) {
    try {
      return ValueAt{at, dtype, decode_float(text, dtype)};
    } catch (const CaseFileError&) {
    }
  }
  return std::nullopt;
}

// Every value of an array of "hexfloat bits" strings under `node`, in document order.
void collect_values(const json& node, const json::json_pointer& at, std::vector<ValueAt>& out) {
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) collect_values(child, at / key, out);
    return;
  }
  if (!node.is_array()) return;
  const bool all_strings = !node.empty() && std::all_of(node.begin(), node.end(), [](const json& e) { return e.is_string(); });
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (!all_strings) {
      collect_values(node[i], at / i, out);
    } else if (auto value = value_at(node[i], at / i)) {
      out.push_back(*value);
    }
  }
}

// The draw's note of the input that holds a simplified value says so: it describes the values as
// drawn ("values{near_midpoints, seed=0}"), which they no longer are.
void mark_simplified(json& notes, const json::json_pointer& at) {
  constexpr const char* kMark = "; values made simpler after shrinking";
  json::json_pointer input = at;
  while (!input.parent_pointer().empty()) input = input.parent_pointer();
  const std::string key = input.back();
  if (!notes.is_object() || !notes.contains(key) || !notes.at(key).is_string()) return;
  const std::string note = notes.at(key).get<std::string>();
  if (!note.ends_with(kMark)) notes[key] = note + kMark;
}

}  // namespace

std::vector<std::string> simplify_case_values(RecordedCase& recorded, const std::function<bool(const RecordedCase&)>& still_fails,
                                              int max_tries) {
  std::vector<std::string> kept;
  int tries = 0;
  for (const SimplerValues how : kSimplerValues) {
    for (bool progress = true; progress && tries < max_tries;) {
      progress = false;
      std::vector<ValueAt> all, changing;
      collect_values(recorded.inputs, json::json_pointer(), all);
      for (const ValueAt& v : all) {
        if (changes(v.value, how)) changing.push_back(v);
      }
      for (const auto& [first, last] : simplification_runs(changing.size())) {
        if (tries >= max_tries) break;
        RecordedCase trial = recorded;
        for (std::size_t k = first; k < last; ++k) {
          trial.inputs[changing[k].at] = encode_float(simpler_value(changing[k].value, how), changing[k].dtype);
          mark_simplified(trial.notes, changing[k].at);
        }
        ++tries;
        if (!still_fails(trial)) continue;
        recorded = std::move(trial);
        kept.push_back(simpler_values_change(how, first, last, changing.size()));
        progress = true;
        break;
      }
    }
  }
  return kept;
}

}  // namespace bitparity::properties
