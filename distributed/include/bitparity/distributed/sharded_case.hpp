#pragma once
// One case of P6 (rank parity) or P11 (resume) as data: the groups, their hyperparameters and
// parameters, the microbatches, the steps, the resume's worlds, and every value the run reads
// (initial parameters, every microbatch's gradients) as "hexfloat bits". `bitparity fuzz` shrinks a
// failing case with smaller_cases() and saves it; `sharded --case` runs it without the generator.
// The fault and the 8-bit maps are not part of it: they are the command's options.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/distributed/resume_parity.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

struct ShardedCase {
  ShardedConfig config;              // config.recorded holds the values once recorded or read
  int steps = 3;                     // P6: the steps taken (P11: resume's steps_before + steps_after)
  std::optional<ResumeCase> resume;  // P11
  // Every step the case takes, before and after a resume.
  int total_steps() const { return resume ? resume->steps_before + resume->steps_after : steps; }
};

// The values the case reads, drawn from config.seed: initial values of every parameter, and the
// gradients of every microbatch of steps 1..total_steps() in the gradient dtype of that step's group.
RecordedValues record_values(const ShardedCase& sharded_case);

// The case with its recorded values (recorded from the seed first where it has none).
nlohmann::json encode_sharded_case(const ShardedCase& sharded_case);
// Reads and checks a case: every parameter id once, the regrouped groups holding the same ids,
// every value there and representable in its dtype. Throws properties::CaseFileError naming the
// field and what is wrong.
ShardedCase decode_sharded_case(const nlohmann::json& json);

// One step of shrinking: a smaller case (over `world` ranks) and what was taken away.
struct SmallerCase {
  ShardedCase smaller;
  int world = 1;
  std::string change;  // "2 steps", "drop parameter 17", ...
  bool simplifies_values = false;  // the same case with simpler values, not a smaller one
};
// The candidates one step smaller than `sharded_case` over `world` ranks, most shrinking first:
// fewer ranks, steps and microbatches, no regrouping, fewer groups and parameters, fewer elements.
// Each is a valid case; the values of what remains are the same (recorded values are kept).
std::vector<SmallerCase> smaller_cases(const ShardedCase& sharded_case, int world);

}  // namespace bitparity::distributed
