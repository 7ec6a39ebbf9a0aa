// What a matrix engine computes, inferred from what it returns: inputs that
// separate competing hypotheses about its arithmetic, derived by running
// the candidate models (core/matrix_arithmetic.hpp) on the host, and the
// inference from the bits a device returned for them.
//
// The candidates. Float types: every canonical combination (the same
// behaviour counted once) of products {exact, rounded to the input type,
// rounded to the accumulator type}, an internal sum exact or of
// kNumericsMinSumBits .. kNumericsMaxSumBits bits, each with its rounding
// {nearest-even, toward zero} and alignment {exact, truncate}, blocks of 1,
// 2, 4, ... products up to k with order {fused, pairwise}, and the result's
// rounding: the core, read with normal values only (stage 1). Then, with the
// core found, subnormal inputs and outputs {kept, flushed} and overflow
// {infinity, saturate} (stage 2). Integer types: overflow {wrap, saturate}.
//
// The patterns: each one dot product d = c + sum a_i b_i of the shape's k.
// Drawn proposals (a running value c and products spread over 2^-36 of it
// and above, with signs, cancellations and sparse positions; for stage 2
// the types' extremes) are kept where they split a class of candidates that
// gave the same results on every pattern kept so far, until every class is
// one candidate or the proposals run out; this is done kNumericsRounds
// times afresh, so any two candidates the proposals can separate are
// separated by at least that many independent patterns.
//
// The inference: the candidates whose results equal what the device gave on
// every pattern. One: each property is its value, with a confidence from the
// fewest patterns that rule out any other value of it (the candidate with
// that one field changed). None: the device behaves like none of the models,
// reported so with what it gave, never as the nearest one. Several (the
// patterns could not separate them): each property they all agree on.
#pragma once

#include "core/finding.hpp"
#include "core/matrix_arithmetic.hpp"
#include "core/results.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpuscope::analysis {

constexpr int kNumericsMinSumBits =
    8;  // below the fp8 accumulations reported (DeepSeek-V3: about 14 on Hopper)
constexpr int kNumericsMaxSumBits = 28;  // f32's 24 and 4 bits of carry room: wider reads as "more than 28"
constexpr int kNumericsRounds = 3;       // independent pattern sets, each separating the candidates

// One dot product of the shape's k.
struct NumericsPattern {
  std::vector<double> a, b;  // k values each, exact in types A and B
  double c = 0;              // exact in type C
  int stage = 1;  // 1: the core arithmetic (every value normal); 2: subnormals and overflow; integers 2
};

struct NumericsPlan {
  MatrixChainShape shape;
  std::vector<NumericsPattern> patterns;
  size_t candidates = 0;  // core candidates (float) or overflow candidates (integers)
  size_t unresolved = 0;  // classes of several candidates no proposal separated (in the last round)
};

// "" where the shape's numerics can be read; else why not (f64 results,
// whose bits a series cannot hold, and shapes without float or integer
// values on both sides).
std::string numerics_unsupported(const MatrixChainShape& s);

// The candidates of stage 1 (float types) or of the integer overflow.
std::vector<MatrixArithmetic> numerics_core_candidates(const MatrixChainShape& s);
// Stage 2's: `core` with each subnormal and overflow behaviour.
std::vector<MatrixArithmetic> numerics_special_candidates(const MatrixChainShape& s,
                                                          const MatrixArithmetic& core);

// The patterns for a shape, the same on every call (seeded by the shape).
NumericsPlan numerics_plan(const MatrixChainShape& s);

// The plan as launch inputs of the matrix family's `numerics` kernel: per
// subgroup g one A (m x k), B (k x n) and C (m x n), row-major, one after
// the other; pattern p sits in subgroup p / d on the diagonal at i = p % d
// (d = min(m, n)): row i of A, column i of B, C[i][i]; the rest is zero.
struct NumericsInputs {
  uint64_t subgroups = 0;
  std::vector<std::byte> a_bytes, b_bytes, c_bytes;
  size_t out_bytes = 0;  // the stored D of every subgroup, in the result type
};
NumericsInputs numerics_inputs(const NumericsPlan& plan);
// Each pattern's result bits from the stored D's.
std::vector<uint64_t> numerics_observed(const NumericsPlan& plan, std::span<const std::byte> out);

// The plan and what the device gave as a series ("matrix.<tag>.numerics":
// x the pattern's index, y its result bits; meta the shape and the
// patterns), and back.
Series numerics_series(const NumericsPlan& plan, std::span<const uint64_t> observed);

// Every compute.matrix.<tag>.numerics.* finding of one shape; unfound (with
// why) for each property the patterns could not decide.
std::vector<Finding> numerics_findings(const NumericsPlan& plan, std::span<const uint64_t> observed,
                                       const std::string& series_id);
// The same for every numerics series in r.
std::vector<Finding> matrix_numerics_findings(const Results& r);

}  // namespace gpuscope::analysis
