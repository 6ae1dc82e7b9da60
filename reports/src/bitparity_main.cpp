// The front door: parses the command line and hands over to the check and mutant runners.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/mutant_hunt.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"bitparity: numerical-consistency harness for quantization and optimizer kernels"};
  app.require_subcommand(1);
  bitparity::reports::CheckCommand check;
  bitparity::reports::MutantsCommand mutants;
  bitparity::reports::DriftCommand drift;
  bitparity::reports::StatePlanCommand plan;
  bitparity::reports::add_check_command(app, check);
  bitparity::reports::add_mutants_command(app, mutants);
  bitparity::reports::add_drift_command(app, drift);
  bitparity::reports::add_state_plan_command(app, plan);
  bitparity::reports::add_list_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    if (app.got_subcommand("check")) return bitparity::reports::run_check_command(check);
    if (app.got_subcommand("mutants")) return bitparity::reports::run_mutants_command(mutants);
    if (app.got_subcommand("drift")) return bitparity::reports::run_drift_command(drift);
    if (app.got_subcommand("state-plan")) return bitparity::reports::run_state_plan_command(plan);
    if (app.got_subcommand("list")) return bitparity::reports::run_list_command();
  } catch (const bitparity::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 2;
  }
  return 0;
}
