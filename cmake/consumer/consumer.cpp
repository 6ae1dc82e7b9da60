// One Adam step through the installed kernels and one property through the installed catalogue.
#include <cstdio>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/properties/property.hpp"

int main() {
  using namespace bitparity;
  auto param = fixtures::HostTensor::contiguous(DType::f32, {4});
  auto grad = fixtures::HostTensor::contiguous(DType::f32, {4});
  auto m = fixtures::HostTensor::contiguous(DType::f32, {4});
  auto v = fixtures::HostTensor::contiguous(DType::f32, {4});
  const float ones[] = {1, 1, 1, 1};
  fixtures::write_logical(param.view(), ones);
  fixtures::write_logical(grad.view(), ones);
  optimizer_step(OptimizerKind::adam, Hyperparameters{}, param.view(), grad.view(), {m.view(), v.view()});
  const float stepped = fixtures::read_logical(param.view())[0];
  const auto cpu = fixtures::make_implementation("cpu");
  for (const auto& property : properties::property_catalogue()) {
    if (property.id != "P4o") continue;
    for (const auto& spec : properties::suite_targets(property.suite)) {
      const auto result = properties::run_property(property, properties::make_target(property, spec, cpu.get(), nullptr, 0), {});
      if (!result.passed) return 1;
    }
  }
  std::printf("consumer: adam step 1 -> %a, P4o holds\n", stepped);
  return stepped < 1.0f ? 0 : 1;
}
