#pragma once
// A shrunk one-process case made simpler in its values (simpler_values.hpp): every float of its
// tensors and value lists (the arrays of "hexfloat bits" in its inputs; hyperparameters, shapes and
// layouts stay), all of them, then by halves and quarters of those not yet simple, each change
// kept while the case still fails as it should.
#include <functional>
#include <string>
#include <vector>

#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

// `still_fails(trial)` says whether a simpler case still fails (and fails only as it should, e.g.
// holds on a correct implementation); at most `max_tries` calls. `recorded` becomes the simplest
// case found; returns the changes kept, in order.
std::vector<std::string> simplify_case_values(RecordedCase& recorded, const std::function<bool(const RecordedCase&)>& still_fails,
                                              int max_tries);

}  // namespace bitparity::properties
