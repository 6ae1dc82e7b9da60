#pragma once
// Every JSON file bitparity reads (saved cases, code maps, reports, states, rank cases, safetensors
// headers) is parsed here. nlohmann keeps the last of two equal keys in one object, so an edited
// file holding "values" twice would run on whichever came last without a word; such a file is
// refused instead, naming the key.
#include <string_view>

#include <nlohmann/json.hpp>

namespace bitparity::properties {

// The parsed document; nlohmann::json::parse_error for text that is not JSON, and
// nlohmann::json::other_error (id 598) "key 'K' appears twice in one object" for a repeated key.
nlohmann::json parse_json_document(std::string_view text);

}  // namespace bitparity::properties
