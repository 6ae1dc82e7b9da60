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

// A report's three files change together: when the last rename fails (its target is a folder
// holding a file), the first file goes back to its earlier text and the second, new, is removed.
// A run writing its rows along the way must not replace a complete result that another run wrote
// to the same path meanwhile: its later rows go beside it.
TEST(ResultFile, RowsAlongTheWayKeepAResultAnotherRunCompleted) {
  const fs::path folder = fs::temp_directory_path() / "bitparity_result_file_concurrent_test";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string target = (folder / "rows.json").string();
  EXPECT_EQ(write_results_document(target, {{"complete", false}, {"rows", 1}}), target);  // nothing to keep yet
  write_result_file(target, "{\"complete\": true, \"rows\": 123, \"by\": \"another run\"}\n");
  EXPECT_EQ(write_results_document(target, {{"complete", false}, {"rows", 2}}), partial_result_path(target));
  EXPECT_NE(read(target).find("another run"), std::string::npos);
  fs::remove_all(folder);
}

TEST(ResultFile, FilesWrittenTogetherChangeTogetherOrNotAtAll) {
  const fs::path folder = fs::temp_directory_path() / "bitparity_result_files_test";
  fs::remove_all(folder);
  fs::create_directories(folder / "report.html");
  std::ofstream(folder / "report.html" / "keep") << "x";
  std::ofstream(folder / "report.json") << "old json";
  const auto file = [&](const char* name) { return (folder / name).string(); };
  EXPECT_THROW(write_result_files({{file("report.json"), "new json"}, {file("report.md"), "new md"}, {file("report.html"), "new html"}}),
               WriteError);
  EXPECT_EQ(read(folder / "report.json"), "old json");
  EXPECT_FALSE(fs::exists(folder / "report.md"));
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 2) << "a temporary or backup file was left";
  fs::remove_all(folder / "report.html");
  write_result_files({{file("report.json"), "new json"}, {file("report.md"), "new md"}, {file("report.html"), "new html"}});
  EXPECT_EQ(read(folder / "report.json"), "new json");
  EXPECT_EQ(read(folder / "report.md"), "new md");
  EXPECT_EQ(read(folder / "report.html"), "new html");
  entries = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 3) << "a temporary or backup file was left";
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
