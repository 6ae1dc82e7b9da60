#pragma once
// The types every optimizer descriptor is written in: the hyperparameters as the user gives them,
// the scalars the host derives from them once per step, the values of one element, and the
// descriptions of states and hyperparameters that generators, validation, the CLI and drift read.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

namespace bitparity {

// Hyperparameters as the user gives them (fp32, as the kernel will see them), and the step t >= 1.
struct Hyperparameters {
  float lr = 1e-3f;
  float beta1 = 0.9f;          // Adam/AdamW/AdEMAMix/Lion first beta
  float beta2 = 0.999f;        // second beta (Lion: the momentum update beta)
  float beta3 = 0.9999f;       // AdEMAMix slow EMA
  float smoothing = 0.99f;     // RMSprop alpha (torch's name)
  float ademamix_alpha = 5.0f; // AdEMAMix mixing coefficient of the slow EMA
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;       // SGD, RMSprop
  float dampening = 0.0f;      // SGD
  float lr_decay = 0.0f;       // Adagrad
  float grad_scale = 1.0f;     // AMP loss scale: the gradient is multiplied by 1/grad_scale
  std::int64_t alpha_warmup = 0;  // AdEMAMix: steps of linear ademamix_alpha warm-up (0 = none)
  std::int64_t beta3_warmup = 0;  // AdEMAMix: steps of beta3 warm-up (0 = none)
  float max_unorm = 0.0f;            // update-norm clipping: ||update|| <= max_unorm * ||p||; 0 = off
  float trust_coefficient = 0.001f;  // LARS eta
  float max_trust_ratio = 10.0f;     // LAMB: trust ratio clipped to [0, max]; 0 = no clipping
  bool exclude_from_adaptation = false;   // LAMB/LARS: trust ratio 1 for this tensor (biases, norms)
  bool exclude_from_weight_decay = false; // LAMB/LARS: no weight decay for this tensor
  bool nesterov = false;
  bool centered = false;
  bool maximize = false;
  std::int64_t step = 1;
  // Hyperparameters only one optimizer has, named by its descriptor (set_hyperparameter() by name);
  // a new optimizer adds its own without touching this struct. typical_hyperparameters() fills them.
  std::array<float, 4> specific = {0, 0, 0, 0};
};

// Scalars that depend only on hyperparameters and the step, computed once on the host (in double,
// rounded once to fp32) and passed unchanged to every device.
// A yes/no scalar of a step, held as an int: GCC 12 vectorizes a select on an invariant comparison
// (flag != 0) but not one on an invariant bool, which would keep the CPU launchers' loops scalar.
using StepFlag = std::int32_t;

struct StepScalars {
  float lr = 0;
  float beta1 = 0, one_minus_beta1 = 0;
  float beta2 = 0, one_minus_beta2 = 0;
  float beta3 = 0, one_minus_beta3 = 0;  // AdEMAMix: beta3 of this step (warm-up applied)
  float alpha = 0, one_minus_alpha = 0;  // RMSprop alpha; AdEMAMix alpha of this step
  float eps = 0;
  float weight_decay = 0;
  float decay = 1;                    // 1 - lr * weight_decay (decoupled decay)
  float step_size = 0;                // Adam: lr / (1 - beta1^t); Adagrad: lr / (1 + (t-1) lr_decay)
  float inverse_bias_correction1 = 1; // AdEMAMix: 1 / (1 - beta1^t)
  float bias_correction2_sqrt = 1;    // sqrt(1 - beta2^t)
  float momentum = 0, one_minus_dampening = 1;
  float inverse_grad_scale = 1;
  float trust_scaled_lr = 0;          // LAMB: lr * trust ratio; LARS: the local lr (after the norm pass)
  int trust_exponent = 0;             // the factor is trust_scaled_lr * 2^trust_exponent (non-zero only past FLT_MAX)
  float update_scale = 1;             // max_unorm: the clipping factor of this step (after the norm pass)
  StepFlag clip_update = false;
  StepFlag unscale = false, maximize = false, nesterov = false, centered = false, first_step = false;
  // Scalars only one optimizer has, named by its descriptor (each rounded once from double).
  float coefficient[4] = {0, 0, 0, 0};
  StepFlag variant = false;  // a descriptor-named switch between two forms of its step
};

// The values of one element: parameter and gradient widened to fp32, and up to three states.
struct ElementValues {
  float p = 0, g = 0;
  float s[3] = {0, 0, 0};
  float update = 0;  // the amount subtracted from the parameter (before max_unorm clipping)
};

// The two squares the norm pass accumulates for an element (LAMB/LARS, or max_unorm clipping).
struct NormTerms {
  float param = 0, direction = 0;
};

inline constexpr int kMaxOptimizerStates = 3;

// What a state holds: its 8-bit map and the values generators draw for it follow from this.
enum class StateRole : std::uint8_t {
  momentum,           // a first moment, signed; generators sometimes make its update cancel exactly
  signed_buffer,      // a signed running value (momentum buffer, slow EMA)
  second_moment,      // an EMA of squares: non-negative (unsigned 8-bit map)
  running_maximum,    // a maximum of second moments: non-negative (unsigned 8-bit map)
  centered_average,   // an EMA of gradients with |avg|^2 <= the second moment (RMSprop centered)
};

constexpr bool nonnegative_role(StateRole role) {
  return role == StateRole::second_moment || role == StateRole::running_maximum;
}

struct StateSpec {
  std::string_view name;
  StateRole role;
};

// The valid values of a hyperparameter (checked before any work; the message names the range).
enum class ValueRange : std::uint8_t {
  nonnegative,    // finite, >= 0
  positive,       // finite, > 0
  unit_interval,  // [0, 1)
  closed_unit,    // [0, 1]
  flag,           // false or true
  count,          // an integer >= 0
};

// One hyperparameter an optimizer reads: where it lives, its range, the values generators draw
// (repeat one to weight it), and its typical value (drift runs, typical_hyperparameters()).
struct HyperparameterSpec {
  std::string_view name;
  ValueRange range;
  double (*get)(const Hyperparameters&);
  void (*set)(Hyperparameters&, double);
  std::array<double, 8> samples;
  int sample_count;
  double typical;
  bool blind_at_zero;  // 0 hides errors in the update (lr): generators draw it only now and then
};

namespace detail {
template <class Get, class Set>
constexpr HyperparameterSpec make_spec(std::string_view name, ValueRange range, Get get, Set set,
                                       std::initializer_list<double> samples, double typical, bool blind_at_zero) {
  HyperparameterSpec spec{name, range, get, set, {}, 0, typical, blind_at_zero};
  for (double v : samples) spec.samples[static_cast<std::size_t>(spec.sample_count++)] = v;
  return spec;
}
}  // namespace detail

// A hyperparameter kept in a field of Hyperparameters.
template <auto Field>
constexpr HyperparameterSpec hyperparameter(std::string_view name, ValueRange range, std::initializer_list<double> samples,
                                            double typical, bool blind_at_zero = false) {
  using Value = std::remove_cvref_t<decltype(std::declval<Hyperparameters&>().*Field)>;
  return detail::make_spec(
      name, range, [](const Hyperparameters& h) { return static_cast<double>(h.*Field); },
      [](Hyperparameters& h, double v) {
        if constexpr (std::is_same_v<Value, bool>) {
          h.*Field = v != 0.0;
        } else {
          h.*Field = static_cast<Value>(v);
        }
      },
      samples, typical, blind_at_zero);
}

// A hyperparameter only one optimizer has, in slot `Slot` of Hyperparameters::specific.
template <int Slot>
constexpr HyperparameterSpec specific_hyperparameter(std::string_view name, ValueRange range,
                                                     std::initializer_list<double> samples, double typical) {
  static_assert(Slot >= 0 && Slot < 4);
  return detail::make_spec(
      name, range, [](const Hyperparameters& h) { return static_cast<double>(h.specific[Slot]); },
      [](Hyperparameters& h, double v) { h.specific[Slot] = static_cast<float>(v); }, samples, typical, false);
}

// A descriptor's cross-field rule was broken: throws Error(invalid_argument) "<optimizer>: <message>".
void require_hyperparameters(bool condition, std::string_view optimizer, std::string_view message);

}  // namespace bitparity
