#pragma once
// Commands printed for a user to paste (replay, rerun): each word quoted for a POSIX shell where it
// needs it, so a corpus or map path with a space or a quote reruns as printed.
#include <string>
#include <vector>

namespace bitparity::reports {

// The word as is when it holds only characters no shell treats specially, else in single quotes
// (a quote inside as '\'').
std::string shell_word(const std::string& word);
// The words, each as shell_word gives it, joined by spaces.
std::string shell_words(const std::vector<std::string>& words);

}  // namespace bitparity::reports
