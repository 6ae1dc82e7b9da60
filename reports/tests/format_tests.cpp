#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include <unistd.h>

#include "../src/shell_words.hpp"
#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/progress.hpp"

namespace bitparity::reports {
namespace {

TEST(FormatRatio, NeverRoundsUpToOne) {
  EXPECT_EQ(format_ratio(0.99999987), "0.999999");
  EXPECT_EQ(format_ratio(1.0), "1.000000");
  EXPECT_EQ(format_ratio(0.0), "0.000000");
  EXPECT_EQ(format_ratio(2e-5), "2.0e-05");
  EXPECT_EQ(format_ratio(INFINITY), "inf");
  EXPECT_EQ(format_ratio(NAN), "nan");
}

// fuzz's live line ran to about 290 columns: in a 180-column terminal every redraw left a row behind.
TEST(TerminalLine, ALiveLineFitsOneRowOfTheTerminal) {
  if (::isatty(STDERR_FILENO) == 1) GTEST_SKIP() << "stderr is a terminal: its own width decides";
  ::setenv("COLUMNS", "60", 1);
  EXPECT_EQ(terminal_columns(), 60);
  const std::string line(290, 'x');
  EXPECT_EQ(fit_to_terminal(line).size(), 59u);
  EXPECT_TRUE(fit_to_terminal(line).ends_with("..."));
  EXPECT_EQ(fit_to_terminal("short"), "short");
  ::unsetenv("COLUMNS");
  EXPECT_EQ(terminal_columns(), 80);
}

TEST(ShellWords, QuoteOnlyWhatAShellWouldTreatSpecially) {
  EXPECT_EQ(shell_word("--map"), "--map");
  EXPECT_EQ(shell_word("/tmp/corpus-1/cases/P7-x.json"), "/tmp/corpus-1/cases/P7-x.json");
  EXPECT_EQ(shell_word("mutant:nf4-ties"), "mutant:nf4-ties");
  EXPECT_EQ(shell_word("my corpus"), "'my corpus'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_words({"bitparity", "replay", "a b"}), "bitparity replay 'a b'");
}

TEST(ReplayCommand, NarrowsToTheFailingRow) {
  CheckRow row;
  row.suite = fixtures::Suite::optim32;
  row.property_id = "P1";
  row.format = "lars";
  row.dtype = "f32";
  row.device = "cpu";
  row.replay_cases = 20;
  EXPECT_EQ(replay_command(row, 7),
            "bitparity check --suite optim32 --property P1 --optimizer lars --dtype f32 --device cpu --seed 7 --cases 20");
}

}  // namespace
}  // namespace bitparity::reports
