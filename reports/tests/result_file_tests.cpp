#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/result_file.hpp"

namespace bitparity::reports {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ResultFile, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path folder = fs::temp_directory_path() / "bitparity_result_file_test";
  fs::remove_all(folder);
  const fs::path target = folder / "sub" / "out.json";
  check_result_path("--json", target.string());  // makes the folder
  write_result_file(target.string(), "first\n");
  write_result_file(target.string(), "second\n");
  EXPECT_EQ(read(target), "second\n");
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(target.parent_path())) ++entries;
  EXPECT_EQ(entries, 1);
  fs::remove_all(folder);
}

TEST(ResultFile, RefusesPathsThatCannotHoldAResult) {
  EXPECT_THROW(check_result_path("--json", ""), UsageError);
  EXPECT_THROW(check_result_path("--json", "/dev/full"), UsageError);
  EXPECT_THROW(check_result_path("--json", "/dev/null/x.json"), UsageError);
  EXPECT_THROW(check_result_path("--json", fs::temp_directory_path().string()), UsageError);
  EXPECT_THROW(check_result_path("--json", "/" + std::string(5000, 'a') + "/x.json"), UsageError);
}

}  // namespace
}  // namespace bitparity::reports
