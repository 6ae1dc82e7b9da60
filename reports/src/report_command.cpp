// `bitparity report --out DIR [--baseline FILE]`: the release campaign, its three files and the gate.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "bitparity/fixtures/plugin_notes.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_format.hpp"
#include "bitparity/properties/json_document.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/folder_lock.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/report.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/text_file.hpp"

namespace bitparity::reports {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_baseline(const std::string& path, const nlohmann::json& settings) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) throw UsageError("--baseline " + path + " is not a file; give an earlier report.json");
  const std::string what = "the unedited report.json of an earlier `bitparity report` (--baseline)";
  const std::string text = read_text_file(path, 256 * kMiB, "an earlier report.json (--baseline)");
  nlohmann::json baseline;
  try {
    baseline = properties::parse_json_document(text);
  } catch (const nlohmann::json::other_error& error) {
    throw UsageError("--baseline " + path + ": " + json_error_text(error) + "; give an earlier report.json");
  } catch (const nlohmann::json::exception& error) {
    throw UsageError("--baseline " + path + " is not valid JSON (" + json_error_text(error) + "); give an earlier report.json");
  }
  read_json_fields("--baseline " + path, what, [&] { check_baseline(baseline, path, settings); });
  return baseline;
}

std::vector<std::string> cuda_devices_found() {
  std::vector<std::string> devices;
  for (const auto& found : fixtures::device_implementation_names()) {
    if (found.starts_with("cuda:")) devices.push_back(found);
  }
  return devices;
}

std::vector<std::string> parity_devices(const ReportCommand& command) {
  if (command.devices.empty()) return cuda_devices_found();
  refuse_repeats("--device", command.devices);  // as given: "cpu" twice, or "all" with a device it names
  if (command.devices.size() > 1 && std::find(command.devices.begin(), command.devices.end(), "all") != command.devices.end()) {
    throw UsageError("--device all names every device already; give it alone, or name the devices");
  }
  std::vector<std::string> devices;
  for (const auto& name : command.devices) {
    if (name == "all") {
      for (const auto& found : cuda_devices_found()) devices.push_back(found);
    } else if (name != "cpu") {
      if (!name.starts_with("cuda:")) throw UsageError("--device " + name + " is not a device; use cpu, cuda:N or all");
      try {
        fixtures::make_implementation(name);
      } catch (const Error& error) {
        throw UsageError("--device " + name + ": " + error.message());
      }
      devices.push_back(name);
    }
  }
  refuse_repeats("--device", devices);
  return devices;
}

}  // namespace

void add_report_command(CLI::App& app, ReportCommand& command) {
  auto* report = app.add_subcommand("report", "the release drift campaign: report.json, report.md and report.html in --out, gated against --baseline");
  report->add_option("--out", command.out, "folder for report.json, report.md and report.html")->required();
  report->add_option("--baseline", command.baseline, "an earlier report.json: every figure is compared, regressions fail (exit 1)");
  report->add_option("--steps", command.steps, "optimizer steps per drift run (default 200)")->transform(integer_in(1, 100000));
  report->add_option("--elements", command.elements, "parameters per drift run (default 256)")->transform(integer_in(1, 65536));
  report->add_option("--block-size", command.blocksize, "block size of the 8-bit states (default 256)")->transform(integer_in(1, 1 << 20));
  report->add_option("--seed", command.seed, "the campaign's seed (default 1)")->transform(seed_value());
  report->add_option("--check-cases", command.check_cases, "random cases per block size of each check row (default 20)")
      ->transform(integer_in(1, 100000));
  report->add_flag("--skip-sweeps", command.skip_sweeps, "leave the exhaustive conversion sweeps (P12, about a minute) out of the check summary");
  report->add_option("--implementation", command.implementation,
                     "what is drifted and checked: cpu (default), or mutant:NAME to see a worse build fail the gate");
  report->add_option("--device", command.devices, "CUDA devices whose parity is measured: cuda:N, all or cpu for none (default all found)");
  report->add_flag("--require-gpu", command.require_gpu, "fail (exit 4) when no CUDA device is usable; also BITPARITY_REQUIRE_GPU=1");
}

int run_report_command(const ReportCommand& command) {
  if (gpu_required(command.require_gpu)) require_usable_gpu();
  std::error_code error;
  if (command.out.empty()) throw UsageError("--out is empty; give a folder for the report");
  if (fs::exists(command.out, error) && !fs::is_directory(command.out, error)) {
    throw UsageError("--out " + command.out + " is not a folder; give a folder for the report");
  }
  try {
    validate_block_size(QuantFormat::dynamic8_signed, command.blocksize);
  } catch (const Error& refused) {
    throw UsageError("--block-size: " + refusal_text(refused));
  }
  std::unique_ptr<fixtures::Implementation> implementation;
  try {
    implementation = fixtures::make_implementation(command.implementation);
  } catch (const Error& refused) {
    if (refused.code() == ErrorCode::implementation_fault) throw;  // a library that crashed loading: exit 5
    throw UsageError("--implementation " + command.implementation + ": " + refusal_text(refused));
  }
  // The drift runs step it in 32 and 8 bits: one that cannot was refused after the header, leaving
  // an empty --out behind.
  if (!implementation->offers(fixtures::OperationFamily::optimizer_step) || !implementation->offers(fixtures::OperationFamily::optimizer8_step)) {
    throw UsageError("--implementation " + command.implementation + " does not offer both the 32-bit and the 8-bit optimizer step, which the "
                     "report's drift runs take; check what it offers with `bitparity check --implementation " + command.implementation + "`");
  }
  for (const char* name : {"report.json", "report.md", "report.html"}) {
    if (!command.baseline.empty()) {
      check_result_apart_from_input("--out", (fs::path(command.out) / name).string(), command.baseline, "the --baseline");
    }
  }
  // What decides the figures the gate compares (check_cases: the check rows' cases).
  const nlohmann::json settings_now = {{"steps", command.steps},   {"elements", command.elements},
                                       {"blocksize", command.blocksize}, {"seed", command.seed},
                                       {"check_cases", command.check_cases}, {"sweeps", !command.skip_sweeps}};
  const nlohmann::json baseline = command.baseline.empty() ? nlohmann::json() : read_baseline(command.baseline, settings_now);
  const std::vector<std::string> devices = parity_devices(command);
  // Last: this may create the folder.
  for (const char* name : {"report.json", "report.md", "report.html"}) check_result_path("--out", (fs::path(command.out) / name).string());
  const FolderLock lock(command.out, "--out");  // one campaign at a time writes a report folder
  ReportOptions options;
  options.steps = command.steps;
  options.elements = command.elements;
  options.blocksize = command.blocksize;
  options.seed = command.seed;
  options.check_cases = command.check_cases;
  options.sweeps = !command.skip_sweeps;
  options.implementation = command.implementation;
  options.devices = devices;
  std::printf("bitparity report: drift of every optimizer x dtype (fp32 and 8-bit states), %lld steps of %lld elements, on %s; "
              "device parity on %s; check summary with %d cases per block size%s; seed %llu\n",
              static_cast<long long>(options.steps), static_cast<long long>(options.elements), options.implementation.c_str(),
              options.devices.empty() ? (command.devices.empty() ? "no device (none found)" : "no device (--device cpu)") : [&] {
                std::string list;
                for (const auto& d : options.devices) list += (list.empty() ? "" : ", ") + d;
                return list;
              }().c_str(),
              options.check_cases, options.sweeps ? " and the exhaustive sweeps" : "", static_cast<unsigned long long>(options.seed));
  std::fflush(stdout);
  fixtures::print_plugin_notes();
  Progress progress("report: runs", 1);
  ReportCallbacks callbacks;
  callbacks.cancelled = [] { return interrupted(); };
  Progress* shown = &progress;
  std::int64_t total_seen = 0;
  std::unique_ptr<Progress> sized;
  callbacks.progress = [&](std::int64_t done, double fraction, std::int64_t total, const std::string& current) {
    if (total != total_seen) {
      sized = std::make_unique<Progress>("report: runs and rows", total);
      shown = sized.get();
      total_seen = total;
    }
    shown->update(done, fraction, current);
  };
  nlohmann::json report = run_report_campaign(options, callbacks);
  if (sized) sized->finish();
  progress.finish();
  const bool passed = apply_gate(report, baseline.is_null() ? nullptr : &baseline, command.baseline);
  // A complete report is never replaced by a partial one (a CI job killed by its timeout would have
  // destroyed the baseline it meant to extend): an interrupted campaign writes into DIR/partial/.
  const bool complete = report.value("complete", false);
  fs::path out = complete ? fs::path(command.out) : fs::path(command.out) / "partial";
  std::optional<FolderLock> partial_lock;
  if (!complete) {
    // DIR/partial may be another run's --out, holding its complete report or in use: neither is
    // replaced; the partial report then goes to DIR/partial-PID.
    if (holds_complete_result((out / "report.json").string())) out += "-" + std::to_string(::getpid());
    check_result_path("--out", (out / "report.json").string());
    try {
      partial_lock.emplace(out.string(), "--out");
    } catch (const UsageError&) {
      out = fs::path(command.out) / ("partial-" + std::to_string(::getpid()));
      check_result_path("--out", (out / "report.json").string());
      partial_lock.emplace(out.string(), "--out");
    }
  }
  // The three change together: a failed rename leaves the earlier report whole, not mixed.
  write_result_files({{(out / "report.json").string(), json_file_text(report, 1)},
                      {(out / "report.md").string(), report_markdown(report)},
                      {(out / "report.html").string(), report_html(report, baseline.is_null() ? nullptr : &baseline)}});
  const auto& gate = report.at("gate");
  std::printf("drift runs: %zu, device parity runs: %zu, check rows: %lld (%lld violations)\n", report.at("drift").size(),
              report.at("device_parity").at("runs").size(),
              static_cast<long long>(report.at("check").at("summary").value("rows_run", 0)),
              static_cast<long long>(report.at("check").at("summary").value("violations", 0)));
  std::printf("gate: %s (%s, factor %g, %lld comparisons, %zu regressions)\n", gate_verdict(gate).c_str(),
              command.baseline.empty() ? "no baseline" : ("baseline " + command.baseline).c_str(), gate.value("factor", 0.0),
              static_cast<long long>(gate.value("comparisons", 0)), gate.at("regressions").size());
  std::size_t shown_regressions = 0;
  for (const auto& r : gate.at("regressions")) {
    if (shown_regressions++ == 20) {
      std::printf("  ... and %zu more (report.md lists them all)\n", gate.at("regressions").size() - 20);
      break;
    }
    const std::string ratio = r.at("ratio").is_number() ? std::to_string(r.at("ratio").get<double>()) : r.at("ratio").dump();
    std::printf("  REGRESSION %s: %s (baseline %g, now %g, ratio %s)\n", r.value("kind", "").c_str(), r.value("what", "").c_str(),
                r.value("baseline", 0.0), r.value("now", 0.0), ratio.c_str());
  }
  std::printf("report: %s, %s, %s%s\n", printable_text((out / "report.json").string()).c_str(),
              printable_text((out / "report.md").string()).c_str(), printable_text((out / "report.html").string()).c_str(),
              complete ? "" : " (partial: interrupted; a complete report in --out is left as it was)");
  if (interrupted()) return interrupted_exit_code();
  return passed ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
