#include "bitparity/distributed/gathered_case.hpp"

#include <algorithm>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "case_fields.hpp"

namespace bitparity::distributed {

namespace {

using case_fields::counted;
using case_fields::smaller_sizes;
using case_fields::whole_number;
using fixtures::OperationFamily;
using nlohmann::json;
using properties::CaseFileError;

constexpr std::int64_t kMostElements = std::int64_t{1} << 20;
constexpr int kMostDims = 6;
constexpr std::int64_t kMostPieces = 64;

std::string text(const json& object, const char* key) {
  if (!object.contains(key) || !object.at(key).is_string()) throw CaseFileError(std::string("'") + key + "' must be a name");
  return object.at(key).get<std::string>();
}

bool quantizes(OperationFamily family) { return family == OperationFamily::quantize || family == OperationFamily::dequantize; }

// The values of a tensor of `from` sizes at the indices that a tensor of `to` sizes (each no larger) has.
std::vector<float> kept_values(const std::vector<float>& values, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to) {
  std::int64_t numel = 1;
  for (std::int64_t size : to) numel *= size;
  std::vector<float> kept(static_cast<std::size_t>(numel));
  std::vector<std::int64_t> index(to.size(), 0);
  for (std::int64_t i = 0; i < numel; ++i) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < to.size(); ++d) at = at * from[d] + index[d];
    kept[static_cast<std::size_t>(i)] = values[static_cast<std::size_t>(at)];
    for (std::size_t d = to.size(); d-- > 0;) {
      if (++index[d] < to[d]) break;
      index[d] = 0;
    }
  }
  return kept;
}

// `c` with dimension d of `size` (the values at the kept indices).
GatheredCase with_size(const GatheredCase& c, std::size_t d, std::int64_t size) {
  GatheredCase smaller = c;
  smaller.sizes[d] = size;
  for (auto& tensor : smaller.tensors) tensor = kept_values(tensor, c.sizes, smaller.sizes);
  smaller.initial.resize(c.initial.empty() ? 0 : static_cast<std::size_t>(smaller.numel()));  // a prefix, as a piece takes
  return smaller;
}

// `c` without dimension d (of size 1): the values keep their order; the chunked dimension and the
// pieces' dimension (of the split view, one dimension more) follow.
GatheredCase without_dimension(const GatheredCase& c, int d) {
  GatheredCase smaller = c;
  smaller.sizes.erase(smaller.sizes.begin() + d);
  const int split = d < c.dim ? d : d + 1;  // d's place in the split view
  if (d < c.dim) --smaller.dim;
  if (c.piece_dim == split) {
    smaller.piece_dim = -1, smaller.pieces = 1;  // pieces of a dimension of 1: one piece
  } else if (c.piece_dim > split) {
    --smaller.piece_dim;
  }
  return smaller;
}

}  // namespace

std::string gathered_entry_name(OperationFamily family) {
  switch (family) {
    case OperationFamily::optimizer_step: return "fp32 step";
    case OperationFamily::optimizer8_step: return "8-bit step";
    case OperationFamily::quantize: return "quantize";
    case OperationFamily::dequantize: return "dequantize";
    case OperationFamily::convert: return "convert";
    default: break;
  }
  return "?";
}

OperationFamily parse_gathered_entry(const std::string& name) {
  for (OperationFamily family : {OperationFamily::quantize, OperationFamily::dequantize, OperationFamily::convert,
                                 OperationFamily::optimizer_step, OperationFamily::optimizer8_step}) {
    if (gathered_entry_name(family) == name) return family;
  }
  throw Error(ErrorCode::invalid_argument, "'" + name + "' is not a P2r entry point: use quantize, dequantize, convert, fp32 step or 8-bit step");
}

json encode_gathered_case(const GatheredCase& c) {
  const GatheredTarget& t = c.target;
  json out = {{"entry", gathered_entry_name(t.family)}, {"dtype", properties::encode_input(t.dtype)}};
  if (quantizes(t.family)) out["format"] = std::string(quant_format_info(t.format).name);
  if (is_optimizer_family(t.family)) out["hyperparameters"] = properties::encode_input(properties::HyperInput{t.kind, c.hyper});
  if (t.family == OperationFamily::convert) out["convert_to"] = properties::encode_input(c.convert_to);
  out["sizes"] = c.sizes;
  out["dim"] = c.dim;
  out["piece_dim"] = c.piece_dim;
  out["pieces"] = c.pieces;
  out["blocksize"] = c.blocksize;
  json tensors = json::array();
  for (const auto& tensor : c.tensors) tensors.push_back(properties::encode_floats(tensor, t.dtype));
  out["tensors"] = tensors;
  if (is_optimizer_family(t.family)) out["initial"] = properties::encode_floats(c.initial, t.dtype);
  return out;
}

GatheredCase decode_gathered_case(const json& j) {
  if (!j.is_object()) throw CaseFileError("the case must be an object");
  case_fields::refuse_unknown_fields(j, {"entry", "dtype", "format", "hyperparameters", "convert_to", "sizes", "dim", "piece_dim",
                                         "pieces", "blocksize", "tensors", "initial"});
  GatheredCase c;
  GatheredTarget& t = c.target;
  try {
    t.family = parse_gathered_entry(text(j, "entry"));
    properties::decode_input(j.value("dtype", json()), t.dtype);
    if (t.dtype != DType::f32 && t.dtype != DType::f16 && t.dtype != DType::bf16) throw CaseFileError("'dtype' must be f32, f16 or bf16");
    if (quantizes(t.family)) t.format = parse_quant_format(text(j, "format"));
    if (is_optimizer_family(t.family)) {
      if (!j.contains("hyperparameters")) throw CaseFileError("'hyperparameters' is missing");
      properties::HyperInput hyper;
      properties::decode_input(j.at("hyperparameters"), hyper);
      t.kind = hyper.kind;
      c.hyper = hyper.hyper;
      validate_hyperparameters(t.kind, c.hyper);
      if (c.hyper.lr == 0.0f) throw CaseFileError("lr is 0, which hides every error in the parameters; these cases draw lr > 0");
      if (t.family == OperationFamily::optimizer8_step && !has_8bit_variant(t.kind)) {
        throw CaseFileError(std::string(optimizer_info(t.kind).name) + " has no 8-bit step; use entry fp32 step");
      }
    }
    if (t.family == OperationFamily::convert) {
      properties::decode_input(j.value("convert_to", json()), c.convert_to);
      if (c.convert_to == t.dtype || (c.convert_to != DType::f32 && c.convert_to != DType::f16 && c.convert_to != DType::bf16)) {
        throw CaseFileError("'convert_to' must be f32, f16 or bf16, other than 'dtype'");
      }
    }
  } catch (const Error& error) {
    throw case_fields::case_file_error("", error);
  }
  const json& sizes = j.value("sizes", json());
  if (!sizes.is_array() || sizes.empty() || sizes.size() > static_cast<std::size_t>(kMostDims)) {
    throw CaseFileError("'sizes' must list 1 to " + std::to_string(kMostDims) + " dimensions");
  }
  for (const json& size : sizes) {
    if (!size.is_number_integer() || size.get<std::int64_t>() < 1 || size.get<std::int64_t>() > kMostElements) {
      throw CaseFileError("'sizes' must hold whole numbers from 1 to " + std::to_string(kMostElements) + ", got " + size.dump());
    }
    c.sizes.push_back(size.get<std::int64_t>());
    if (c.numel() > kMostElements) throw CaseFileError("'sizes' hold more than " + std::to_string(kMostElements) + " elements");
  }
  const int ndim = static_cast<int>(c.sizes.size());
  c.dim = static_cast<int>(whole_number(j, "dim", 0, ndim - 1));
  c.piece_dim = static_cast<int>(whole_number(j, "piece_dim", -1, ndim));  // the split view has ndim + 1 dimensions
  c.pieces = whole_number(j, "pieces", c.piece_dim < 0 ? 1 : 2, c.piece_dim < 0 ? 1 : kMostPieces);
  c.blocksize = whole_number(j, "blocksize", 1, kLargestBlocksize);
  try {
    validate_block_size(quantizes(t.family) ? t.format : QuantFormat::dynamic8_signed, c.blocksize);
  } catch (const Error& error) {
    throw case_fields::case_file_error("'blocksize': ", error);
  }
  const json& tensors = j.value("tensors", json());
  const std::size_t most_steps = is_optimizer_family(t.family) ? 2 : 1;
  if (!tensors.is_array() || tensors.empty() || tensors.size() > most_steps) {
    throw CaseFileError("'tensors' must hold one tensor per step: " + std::string(most_steps == 1 ? "one" : "one or two"));
  }
  const auto values = [&](const json& list, const std::string& what) {
    std::vector<float> decoded;
    try {
      decoded = properties::decode_floats(list, t.dtype, static_cast<std::size_t>(c.numel()));
    } catch (const CaseFileError& error) {
      throw CaseFileError(what + ": " + error.what());
    }
    if (static_cast<std::int64_t>(decoded.size()) != c.numel()) {
      throw CaseFileError(what + " holds " + std::to_string(decoded.size()) + " values, not the " + std::to_string(c.numel()) + " of 'sizes'");
    }
    return decoded;
  };
  for (std::size_t step = 0; step < tensors.size(); ++step) c.tensors.push_back(values(tensors[step], "the tensor of step " + std::to_string(step + 1)));
  if (is_optimizer_family(t.family)) {
    c.initial = values(j.value("initial", json()), "'initial'");
  } else if (j.contains("initial")) {
    throw CaseFileError("'initial' is the optimizers' initial parameter; remove it from a " + gathered_entry_name(t.family) + " case");
  }
  return c;
}

std::vector<SmallerGatheredCase> smaller_gathered_cases(const GatheredCase& c, int world) {
  std::vector<SmallerGatheredCase> out;
  const std::size_t dim = static_cast<std::size_t>(c.dim);
  for (int w = 1; w < world; ++w) {
    if (c.sizes[dim] % w == 0) out.push_back({c, w, counted(w, "rank", "ranks")});
  }
  if (c.steps() > 1) {
    GatheredCase smaller = c;
    smaller.tensors.resize(1);
    out.push_back({std::move(smaller), world, "1 step"});
  }
  if (c.piece_dim >= 0) {
    GatheredCase whole = c;
    whole.piece_dim = -1, whole.pieces = 1;
    out.push_back({std::move(whole), world, "the gathered view whole, no pieces"});
    if (c.pieces > 2) {
      GatheredCase fewer = c;
      --fewer.pieces;
      out.push_back({std::move(fewer), world, counted(fewer.pieces, "piece", "pieces")});
    }
  }
  for (int d = 0; d < static_cast<int>(c.sizes.size()); ++d) {
    if (d != c.dim && c.sizes[static_cast<std::size_t>(d)] == 1 && c.sizes.size() > 1) {
      out.push_back({without_dimension(c, d), world, "dimension " + std::to_string(d) + " (of size 1) dropped"});
    }
  }
  for (std::size_t d = 0; d < c.sizes.size(); ++d) {
    // The chunked dimension stays a multiple of the world: one chunk per rank.
    const std::int64_t unit = d == dim ? world : 1;
    for (std::int64_t n : smaller_sizes(c.sizes[d] / unit, 1)) {
      out.push_back({with_size(c, d, n * unit), world, "dimension " + std::to_string(d) + " of size " + std::to_string(n * unit)});
    }
  }
  if (is_optimizer_family(c.target.family) && c.blocksize > 64) {
    GatheredCase smaller = c;
    smaller.blocksize = 64;
    out.push_back({std::move(smaller), world, "block size 64"});
  }
  case_fields::add_simpler_values(
      c,
      [](GatheredCase& simpler) {
        std::vector<std::vector<float>*> lists = {&simpler.initial};
        for (auto& tensor : simpler.tensors) lists.push_back(&tensor);
        return lists;
      },
      [&](GatheredCase simpler, std::string change) { out.push_back({std::move(simpler), world, std::move(change), true}); });
  return out;
}

}  // namespace bitparity::distributed
