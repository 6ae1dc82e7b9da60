#pragma once
// Every JSON file bitparity reads (saved cases, code maps, reports, states, rank cases, safetensors
// headers) is parsed here. nlohmann keeps the last of two equal keys in one object, so an edited
// file holding "values" twice would run on whichever came last without a word; such a file is
// refused instead, naming the key.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bitparity::properties {

// Deeper nesting is refused while parsing: a value 200000 lists deep ended the process (SIGSEGV)
// where a message or a reader walked it recursively. bitparity's own files nest fewer than 10 levels.
inline constexpr int kDeepestJson = 64;

// The parsed document; nlohmann::json::parse_error for text that is not JSON, and
// nlohmann::json::other_error (id 598) "key 'K' appears twice in one object" for a repeated key,
// (id 597) for nesting deeper than kDeepestJson, (id 596) for a NUL byte anywhere, and (id 595)
// for a number past a double's range. A parse error's quote of what it read is cut to 60 characters.
nlohmann::json parse_json_document(std::string_view text);

// The exception's message without nlohmann's tag ("[json.exception.other_error.598] "): what a
// user reads in a refusal.
std::string json_error_message(const nlohmann::json::exception& error);

}  // namespace bitparity::properties
