#pragma once
// Drift reports for people (a table per run) and for machines (JSON).
#include <cstdint>

#include <nlohmann/json.hpp>

#include "bitparity/properties/drift.hpp"

namespace bitparity::reports {

nlohmann::json drift_json(const properties::DriftReport& report);
void print_drift(const properties::DriftReport& report, std::int64_t every);

}  // namespace bitparity::reports
