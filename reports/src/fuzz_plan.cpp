// The fuzzer's round-robin: units from the run planner, and what visit v runs.
#include <algorithm>
#include <map>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/reports/fuzz.hpp"

namespace bitparity::reports {

namespace {


const fixtures::MutantInfo* mutant_of(const std::string& implementation) {
  const fixtures::ImplementationId id = fixtures::parse_implementation_id(implementation);
  if (id.kind != fixtures::ImplementationKind::mutant) return nullptr;
  return fixtures::find_mutant(id.name);
}

}  // namespace

std::vector<PlannedRow> plan_fuzz(const FuzzOptions& options, std::vector<std::string>* not_applicable) {
  CheckOptions selection = options.selection;
  selection.devices = options.implementations;
  std::vector<PlannedRow> rows = plan_check(selection);
  // A mutant is hunted where it alters the target: elsewhere a failure would be a harness error.
  std::erase_if(rows, [](const PlannedRow& row) {
    const fixtures::MutantInfo* mutant = mutant_of(row.device);
    return mutant != nullptr && !mutant->alters(row.property->suite, row.spec.entry());
  });
  // A unit that cannot run would count visits that check nothing (a quantize-only plugin's fuzz ran
  // 315103 visits and no case).
  const std::vector<std::string> reasons = not_applicable_reasons(rows);
  std::vector<PlannedRow> applicable;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (reasons[k].empty()) {
      applicable.push_back(rows[k]);
    } else if (not_applicable != nullptr) {
      not_applicable->push_back(reasons[k]);
    }
  }
  rows = std::move(applicable);
  // Interleave: the k-th unit of every property, then the (k+1)-th, so neighbours differ most.
  std::vector<const properties::PropertyDef*> order;
  std::map<const properties::PropertyDef*, std::vector<PlannedRow>> by_property;
  for (const auto& row : rows) {
    if (!by_property.contains(row.property)) order.push_back(row.property);
    by_property[row.property].push_back(row);
  }
  std::vector<PlannedRow> units;
  for (std::size_t k = 0; units.size() < rows.size(); ++k) {
    for (const auto* property : order) {
      const auto& list = by_property[property];
      if (k < list.size()) units.push_back(list[k]);
    }
  }
  return units;
}

FuzzVisit fuzz_visit(const std::vector<PlannedRow>& units, std::uint64_t seed, std::int64_t visit) {
  FuzzVisit v;
  const auto count = static_cast<std::int64_t>(units.size());
  const std::int64_t index = visit % count;
  v.unit = &units[static_cast<std::size_t>(index)];
  v.round = visit / count;
  const auto& sizes = v.unit->block_sizes;
  v.blocksize = sizes[static_cast<std::size_t>((v.round + index) % static_cast<std::int64_t>(sizes.size()))];
  v.seed = mix_seed(seed ^ mix_seed(static_cast<std::uint64_t>(visit))) >> 1;
  for (std::int64_t passes = v.round + 1; passes > 1 && v.size_scale < 16; passes /= 2) v.size_scale *= 2;
  // An exhaustive sweep is deterministic: once per run, in round 1 (after a first pass over the
  // random properties), or round 0 when nothing else is selected.
  if (v.unit->property->exhaustive) {
    const bool only_sweeps = std::all_of(units.begin(), units.end(), [](const PlannedRow& u) { return u.property->exhaustive; });
    v.skipped = v.round != (only_sweeps ? 0 : 1);
  }
  return v;
}

}  // namespace bitparity::reports
