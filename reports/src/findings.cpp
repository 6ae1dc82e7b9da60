// Classifying a plugin's failed rows by what differs, from the property and its violation message.
#include "bitparity/reports/findings.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "bitparity/fixtures/convention.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::reports {

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

struct Class {
  std::string kind, explanation;
};

Class classify(const CheckRow& row, bool takes_strided) {
  const std::string& id = row.property_id;
  const std::string& text = row.counterexample;
  // First: a failed or refused call says nothing about layouts, launches or devices, whatever the property.
  if (has(text, properties::kFailedInsideCall)) {
    return {"failed inside a call",
            "the library crashed, exited, hung or wrote outside its buffers inside a call (the message names the call, the "
            "signal and the buffer); its plugin host was replaced and the run went on"};
  }
  if (has(text, properties::kRefusedValidCase)) {
    return {"refusal", "the library refused (or its adapter declined) a call the contract allows; the message says why"};
  }
  if (id == "P2" || id == "P2o" || id == "P2q") {
    if (!takes_strided) {
      return {"strided-input difference",
              "the library declares contiguous inputs only; handed the raw storage of a strided view, as a careless "
              "caller does (field bug 1), it computes on the wrong elements: results for strided inputs are undefined"};
    }
    return {"strided-input difference", "a strided view gives other bits than its contiguous copy"};
  }
  if (id == "P9" || id == "P9o" || id == "P9q" || id == "P9n") {
    return {"non-finite policy difference", "NaN/Inf or special values are not handled as the declared policy says"};
  }
  if (id == "P5" || id == "P5o" || id == "P5q") {
    return {"differs from bitparity's kernels",
            "bitwise different from bitparity's CPU kernels on the same input (other findings say which is wrong)"};
  }
  if (id == "P13" || id == "P13o" || id == "P13q") {
    return {"changes an input", "a call changed the bytes of an input it should only read (the message names the input and the first byte)"};
  }
  if (id == "P14" || id == "P14o" || id == "P14q") {
    return {"depends on earlier calls",
            "a call gives other bits after other calls than before them or alone (each order on a fresh instance): the "
            "library keeps state between calls (a cached map, table, hyperparameter or counter)"};
  }
  if (has(text, "is not admissible")) {
    return {"not the nearest code",
            "a code the exact nearest-code rule (with the division's rounding, ERROR_MODEL.md) does not admit"};
  }
  if (has(text, ", exact ") && has(text, " absmax ")) return {"wrong absmax", "a block's absmax is not the exact max |x|"};
  if (has(text, "a map difference")) {
    return {"map difference",
            "the codes dequantize to another map's values than the declared one (the counterexample names the maps that "
            "fit and the entries that differ, or says that only the sign of zero differs)"};
  }
  if (has(text, "; another block's absmax:")) {
    return {"another block's absmax",
            "outputs are code value times the absmax of another block than their own: the library computes an element's "
            "block wrongly (for a tensor of rows whose length is not a multiple of the block size, a block index taken "
            "per row and column does this)"};
  }
  if (has(text, "rounded as declared")) {
    return {"dequantization not as declared",
            "the library declares that dequantize rounds the fp32 product to the output dtype, and its outputs are not "
            "that either"};
  }
  if (has(text, "dequantize vs correctly rounded")) {
    return {"dequantization not correctly rounded", "code value times absmax is not rounded once to the output dtype"};
  }
  if (id == "P3" || id == "P3o" || id == "P3q" || id == "P4" || id == "P4o" || id == "P4q") {
    return {"not reproducible", "the same input gives other bits across launches or calls"};
  }
  return {"outside the error bound", "a result outside its derived error bound"};
}

// The entry point a strided failure met: the operation a metamorphic message names in parentheses
// ("(quantize): 55 differences"), else the property's family.
std::string strided_entry(const CheckRow& row) {
  const std::string first_line = row.counterexample.substr(0, row.counterexample.find('\n'));
  for (const char* entry : {"(quantize)", "(dequantize)"}) {
    if (has(first_line, entry)) return std::string(entry).substr(1, std::strlen(entry) - 2);
  }
  if (row.property_id.ends_with("o")) return "32-bit optimizer step";
  if (row.property_id.ends_with("q")) return "8-bit optimizer step";
  return "its entry points";
}

// A contiguous-only library handed strided views computes on the wrong elements wherever it meets
// one: one cause per entry point, however many properties met it. A P5 difference on a strided case
// is that cause too (bitparity's kernels read the view; the library reads raw storage).
bool strided_cause(const CheckRow& row, const Class& c, bool takes_strided) {
  if (takes_strided) return false;
  return c.kind == "strided-input difference" ||
         (c.kind == "differs from bitparity's kernels" && has(row.counterexample, "strided tensors"));
}

}  // namespace

std::vector<Finding> plugin_findings(const std::vector<CheckRow>& rows) {
  std::vector<Finding> findings;
  std::map<std::string, bool> strided;  // per plugin: does it take strided views
  std::map<std::pair<std::string, std::string>, std::size_t> strided_finding;  // (plugin, entry) -> index
  for (const auto& row : rows) {
    if (row.passed || !row.device.starts_with("plugin:")) continue;
    if (!strided.contains(row.device)) strided[row.device] = fixtures::make_implementation(row.device)->takes_strided();
    const Class c = classify(row, strided[row.device]);
    const std::string target = row.format + "/" + row.dtype;
    if (strided_cause(row, c, strided[row.device])) {
      const std::string entry = strided_entry(row);
      const auto key = std::make_pair(row.device, entry);
      const std::string where = row.property + " on " + target;
      if (const auto known = strided_finding.find(key); known != strided_finding.end()) {
        findings[known->second].folded.push_back(where);
        continue;
      }
      strided_finding[key] = findings.size();
      findings.push_back({row.property, row.device, target, "strided-input difference",
                          "the library declares contiguous inputs only, and its " + entry +
                              " handed the raw storage of a strided view, as a careless caller passes it (field bug 1: a "
                              "non-contiguous gradient), computes on the wrong elements. One cause for every strided "
                              "row of this entry point; the rows it explains are listed under it",
                          row.counterexample,
                          {},
                          true});
      continue;
    }
    findings.push_back({row.property, row.device, target, c.kind, c.explanation, row.counterexample, {}, false});
  }
  return findings;
}

std::vector<DeclaredConvention> plugin_conventions(const std::vector<CheckRow>& rows) {
  std::vector<DeclaredConvention> declared;
  std::set<std::string> seen;
  for (const auto& row : rows) {
    if (!row.device.starts_with("plugin:") || !seen.insert(row.device).second) continue;
    const auto plugin = fixtures::make_implementation(row.device);
    for (const auto& info : fixtures::kConventions) {
      if (plugin->follows(info.convention)) declared.push_back({row.device, std::string(info.name), std::string(info.claim)});
    }
  }
  return declared;
}

nlohmann::json conventions_json(const std::vector<DeclaredConvention>& conventions) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : conventions) list.push_back({{"implementation", c.implementation}, {"convention", c.name}, {"claim", c.claim}});
  return list;
}

void print_conventions(const std::vector<DeclaredConvention>& conventions) {
  if (conventions.empty()) return;
  std::printf("\nconventions (declared by the library, checked as declared, not findings):\n");
  for (const auto& c : conventions) std::printf("  %s: %s: %s\n", c.implementation.c_str(), c.name.c_str(), c.claim.c_str());
}

nlohmann::json findings_json(const std::vector<Finding>& findings) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : findings) {
    list.push_back({{"property", f.property},
                    {"implementation", f.implementation},
                    {"target", f.target},
                    {"class", f.kind},
                    {"explanation", f.explanation},
                    {"counterexample", f.counterexample},
                    {"rows", 1 + f.folded.size()},
                    {"folded", f.folded}});
  }
  return list;
}

void print_findings(const std::vector<Finding>& findings) {
  if (findings.empty()) return;
  std::map<std::string, int> counts;
  for (const auto& f : findings) ++counts[f.kind];
  std::printf("\nfindings (%zu), by class:\n", findings.size());
  for (const auto& [kind, count] : counts) std::printf("  %4d  %s\n", count, kind.c_str());
  for (const auto& [kind, count] : counts) {
    // One counterexample per class on the terminal (the JSON holds every one), except that a cause
    // said once per entry point is printed for each.
    int shown = 0;
    for (const auto& f : findings) {
      if (f.kind != kind || (shown > 0 && !f.per_entry_point)) continue;
      const std::string first_line = f.counterexample.substr(0, f.counterexample.find('\n'));
      std::printf("[%s] %s on %s: %s\n    %s\n", f.kind.c_str(), f.property.c_str(), f.target.c_str(),
                  f.explanation.c_str(), first_line.c_str());
      if (!f.folded.empty()) std::printf("    (and %zu more rows of this cause; the JSON lists them)\n", f.folded.size());
      ++shown;
    }
    if (count > shown) std::printf("    (and %d more findings of this class; the JSON lists them)\n", count - shown);
  }
}

}  // namespace bitparity::reports
