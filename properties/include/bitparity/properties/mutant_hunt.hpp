#pragma once
// The mutant runner: runs the properties against a mutant until one kills it or time runs out.
#include <cstdint>
#include <string>

#include <optional>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

struct HuntResult {
  std::string mutant;
  bool killed = false;
  // A property failed on a target the mutant does not alter: the harness disagrees with the kernel
  // there, so nothing was proven (property, target and counterexample say where).
  bool harness_error = false;
  std::string property;        // id and name of the killing (or, on a harness error, failing) property
  std::string target;          // format/dtype and block size it was killed on
  double seconds = 0.0;
  // Cases run on targets the mutant alters: a hunt that ran none proved nothing (a harness error,
  // not a survivor).
  std::int64_t altered_cases = 0;
  std::string counterexample;
  // The failing row and its shrunk case as data (saved_case.hpp turns them into a corpus file).
  std::string property_id;
  TargetSpec spec;
  std::int64_t blocksize = 0;
  std::optional<RecordedCase> failing_case;
};

// All properties (P5 with the mutant as the device and cpu as the baseline), or only `only_property`.
HuntResult hunt_mutant(const fixtures::MutantInfo& mutant, double budget_seconds, std::uint64_t seed,
                       const std::string& only_property = "");

}  // namespace bitparity::properties
