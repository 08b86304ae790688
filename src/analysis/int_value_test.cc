#include "analysis/int_value.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analysis/while_loop_analysis.h"
#include "gtest/gtest.h"
#include "interp/corpus_cases.h"  // HLOVERLAP_SANITIZED

namespace hloverlap {
namespace {

IntValue V(PrimitiveType type, int64_t v) {
  std::optional<IntValue> x = IntValue::FromInt64(type, v);
  EXPECT_TRUE(x.has_value()) << v;
  return x.value_or(IntValue::Min(type));
}

TEST(IntValueTest, RangesOfEveryType) {
  EXPECT_EQ(IntValue::Min(PrimitiveType::kS8).ToString(), "-128");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kS8).ToString(), "127");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU8).ToString(), "255");
  EXPECT_EQ(IntValue::Min(PrimitiveType::kS16).ToString(), "-32768");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU16).ToString(), "65535");
  EXPECT_EQ(IntValue::Min(PrimitiveType::kS32).ToString(), "-2147483648");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU32).ToString(), "4294967295");
  EXPECT_EQ(IntValue::Min(PrimitiveType::kS64).ToString(),
            "-9223372036854775808");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kS64).ToString(),
            "9223372036854775807");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU64).ToString(),
            "18446744073709551615");
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kS8, 128).has_value());
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kU8, -1).has_value());
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kU64, -1).has_value());
  EXPECT_TRUE(IntValue::FromUint64(PrimitiveType::kU64, ~uint64_t{0}));
  EXPECT_FALSE(IntValue::FromUint64(PrimitiveType::kS64, ~uint64_t{0}));
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kF32, 0).has_value());
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kPred, 0).has_value());
  EXPECT_FALSE(IntValue::FromInt64(PrimitiveType::kS4, 0).has_value());
}

TEST(IntValueTest, ArithmeticWrapsAtTheWidth) {
  const IntValue a = V(PrimitiveType::kS32, -2147483647);
  EXPECT_EQ(a.Add(a).ToString(), "2");
  EXPECT_EQ(V(PrimitiveType::kS8, 125).Add(V(PrimitiveType::kS8, 5)).ToString(),
            "-126");
  EXPECT_EQ(V(PrimitiveType::kU8, 3).Subtract(V(PrimitiveType::kU8, 5)).value(),
            254);
  EXPECT_EQ(V(PrimitiveType::kS16, 300)
                .Multiply(V(PrimitiveType::kS16, 300))
                .ToString(),
            "24464");  // 90000 - 65536
  EXPECT_EQ(IntValue::Min(PrimitiveType::kS64).Negate(),
            IntValue::Min(PrimitiveType::kS64));
  EXPECT_EQ(V(PrimitiveType::kS8, 5).Times(155).ToString(), "7");  // 775-768
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU64).Add(V(PrimitiveType::kU64, 1)),
            V(PrimitiveType::kU64, 0));
}

TEST(IntValueTest, ConvertTruncatesAndExtendsAsHloDoes) {
  EXPECT_EQ(V(PrimitiveType::kS64, (int64_t{1} << 32) + 5)
                .ConvertTo(PrimitiveType::kS32)
                .ToString(),
            "5");
  EXPECT_EQ(V(PrimitiveType::kS64, -8589934590)  // -2^33 + 2
                .ConvertTo(PrimitiveType::kS32)
                .ToString(),
            "2");
  // Sign extension by the source's signedness, then truncation.
  EXPECT_EQ(V(PrimitiveType::kS8, -1).ConvertTo(PrimitiveType::kU32).ToString(),
            "4294967295");
  EXPECT_EQ(
      V(PrimitiveType::kU8, 255).ConvertTo(PrimitiveType::kS32).ToString(),
      "255");
  EXPECT_EQ(V(PrimitiveType::kU8, 255).ConvertTo(PrimitiveType::kS8).ToString(),
            "-1");
  EXPECT_EQ(IntValue::Max(PrimitiveType::kU64)
                .ConvertTo(PrimitiveType::kS64)
                .ToString(),
            "-1");
}

TEST(IntValueTest, ComparesInTheTypesOrder) {
  const IntValue big = IntValue::Max(PrimitiveType::kU64);
  const IntValue four = V(PrimitiveType::kU64, 4);
  EXPECT_FALSE(IntValue::Compare(ComparisonDirection::kLt, big, four));
  EXPECT_TRUE(IntValue::Compare(ComparisonDirection::kGt, big, four));
  const IntValue m1 = V(PrimitiveType::kS64, -1);
  EXPECT_TRUE(IntValue::Compare(ComparisonDirection::kLt, m1,
                                V(PrimitiveType::kS64, 4)));
  EXPECT_EQ(big.bits(), m1.bits());
  EXPECT_NE(big, m1);  // same bits, other type
  EXPECT_EQ(big.ToInt64(), std::nullopt);
  EXPECT_EQ(m1.ToInt64(), -1);
}

TEST(IntValueTest, OrdinalsFollowTheOrder) {
  for (PrimitiveType t : {PrimitiveType::kS8, PrimitiveType::kU8}) {
    for (int a = 0; a < 256; ++a) {
      IntValue x = IntValue::FromOrdinal(t, a);
      EXPECT_EQ(x.Ordinal(), static_cast<uint64_t>(a));
      if (a > 0) {
        EXPECT_TRUE(IntValue::Compare(ComparisonDirection::kLt,
                                      IntValue::FromOrdinal(t, a - 1), x));
      }
    }
  }
}

TEST(IntValueTest, LiteralsRoundTrip) {
  for (PrimitiveType t :
       {PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32,
        PrimitiveType::kS64, PrimitiveType::kU8, PrimitiveType::kU16,
        PrimitiveType::kU32, PrimitiveType::kU64}) {
    for (IntValue v : {IntValue::Min(t), IntValue::Max(t), V(t, 1)}) {
      std::optional<IntValue> back = IntValue::FromLiteral(v.ToLiteral());
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(*back, v);
    }
  }
  EXPECT_FALSE(
      IntValue::FromLiteral(Literal(Shape::Scalar(PrimitiveType::kF32))));
  EXPECT_FALSE(IntValue::FromLiteral(
      Literal::Elided(Shape::Scalar(PrimitiveType::kS32))));
  EXPECT_FALSE(IntValue::FromLiteral(Literal(Shape(PrimitiveType::kS32, {2}))));
}

// Every start, step and interval at widths 1..6 against the first hit of
// the simulated sequence.
TEST(FirstInIntervalTest, ExhaustiveAtSmallWidths) {
  for (int w = 1; w <= 6; ++w) {
    const uint64_t m = uint64_t{1} << w;
    constexpr uint64_t kNever = ~uint64_t{0};
    std::vector<uint64_t> first(m);
    for (uint64_t start = 0; start < m; ++start) {
      for (uint64_t step = 0; step < m; ++step) {
        std::fill(first.begin(), first.end(), kNever);
        uint64_t x = start;
        for (uint64_t k = 0; k < m; ++k) {
          if (first[x] == kNever) first[x] = k;
          x = (x + step) % m;
        }
        for (uint64_t lo = 0; lo < m; ++lo) {
          uint64_t best = kNever;
          for (uint64_t hi = lo; hi < m; ++hi) {
            best = std::min(best, first[hi]);
            std::optional<uint64_t> got =
                FirstInInterval(w, start, step, lo, hi);
            ASSERT_EQ(got.value_or(kNever), best)
                << "w=" << w << " start=" << start << " step=" << step << " ["
                << lo << ", " << hi << "]";
          }
        }
      }
    }
  }
}

TEST(FirstInIntervalTest, WideWidths) {
  // 2^64 - 1 by 1 enters [0, 3] after one step.
  EXPECT_EQ(FirstInInterval(64, ~uint64_t{0}, 1, 0, 3), 1u);
  // Step 2 from an odd start never reaches an even point.
  EXPECT_EQ(FirstInInterval(64, 1, 2, 10, 10), std::nullopt);
  // From 0 by 3 (mod 2^32), the first k with 3k = 2^32 - 2 (mod 2^32).
  std::optional<uint64_t> k =
      FirstInInterval(32, 0, 3, 4294967294u, 4294967294u);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ((*k * 3) % (uint64_t{1} << 32), 4294967294u);
  EXPECT_EQ(*k, 2863311530u);
  // A step of 2^63 alternates between two values.
  EXPECT_EQ(FirstInInterval(64, 5, uint64_t{1} << 63, 6, ~uint64_t{0}), 1u);
  EXPECT_EQ(FirstInInterval(64, 5, uint64_t{1} << 63, 6, 100), std::nullopt);
  EXPECT_EQ(FirstInInterval(0, 0, 1, 0, 0), std::nullopt);  // bad width
  EXPECT_EQ(FirstInInterval(8, 0, 1, 5, 4), std::nullopt);  // empty
}

// Trip counts of `x = start; while (x DIR bound) x += step` for every s8
// and u8 start, step, bound and direction, against the simulated loop: the
// first iteration whose value leaves the condition, found through the
// first time the sequence reaches each value.
// Under sanitizers (ten times slower) every 16th start; else all of them.
#ifdef HLOVERLAP_SANITIZED
constexpr int kStartStride = 16;
#else
constexpr int kStartStride = 1;
#endif

int64_t CheckEveryLoop(PrimitiveType t) {
  constexpr std::array<ComparisonDirection, 6> kDirections = {
      ComparisonDirection::kEq, ComparisonDirection::kNe,
      ComparisonDirection::kLt, ComparisonDirection::kLe,
      ComparisonDirection::kGt, ComparisonDirection::kGe};
  constexpr uint64_t kNever = ~uint64_t{0};
  int64_t checked = 0;
  {
    std::vector<IntValue> values;
    for (int o = 0; o < 256; ++o) values.push_back(IntValue::FromOrdinal(t, o));
    std::array<uint64_t, 256> first;
    std::array<uint64_t, 257> prefix, suffix;  // min of first[] over ordinals
    for (int s = 0; s < 256; s += kStartStride) {
      const IntValue& start = values[s];
      for (const IntValue& step : values) {
        first.fill(kNever);
        IntValue x = start;
        for (uint64_t k = 0; k <= 256; ++k) {
          if (first[x.Ordinal()] == kNever) first[x.Ordinal()] = k;
          x = x.Add(step);  // the body: x = wrap(x + step)
        }
        prefix[0] = kNever;
        for (int o = 0; o < 256; ++o) {
          prefix[o + 1] = std::min(prefix[o], first[o]);
        }
        suffix[256] = kNever;
        for (int o = 255; o >= 0; --o) {
          suffix[o] = std::min(suffix[o + 1], first[o]);
        }
        for (const IntValue& bound : values) {
          const int b = static_cast<int>(bound.Ordinal());
          for (ComparisonDirection dir : kDirections) {
            // min over the values that end the loop of their first visit.
            uint64_t want = kNever;
            switch (dir) {
              case ComparisonDirection::kEq:
                want = std::min(prefix[b], suffix[b + 1]);
                break;
              case ComparisonDirection::kNe:
                want = first[b];
                break;
              case ComparisonDirection::kLt:
                want = suffix[b];
                break;
              case ComparisonDirection::kLe:
                want = suffix[b + 1];
                break;
              case ComparisonDirection::kGt:
                want = prefix[b + 1];
                break;
              case ComparisonDirection::kGe:
                want = prefix[b];
                break;
            }
            std::string why;
            std::optional<uint64_t> got =
                CountTrips(start, step, dir, bound, &why);
            if (got.value_or(kNever) != want) {
              ADD_FAILURE()
                  << PrimitiveTypeName(t) << " start " << start.ToString()
                  << " step " << step.ToString() << " "
                  << ComparisonDirectionName(dir) << " " << bound.ToString()
                  << ": got "
                  << (got ? std::to_string(*got) : "never (" + why + ")")
                  << ", simulated "
                  << (want == kNever ? "never" : std::to_string(want));
              return checked;
            }
            if (!got.has_value()) EXPECT_FALSE(why.empty());
            ++checked;
          }
        }
      }
    }
  }
  return checked;
}

TEST(CountTripsTest, ExhaustiveOverS8) {
  EXPECT_EQ(CheckEveryLoop(PrimitiveType::kS8),
            256 / kStartStride * 256 * 256 * 6);
}

TEST(CountTripsTest, ExhaustiveOverU8) {
  EXPECT_EQ(CheckEveryLoop(PrimitiveType::kU8),
            256 / kStartStride * 256 * 256 * 6);
}

// Random loops of every type, run step by step (a plain loop, nothing
// shared with the analysis but IntValue's add and compare).
TEST(CountTripsTest, RandomLoopsOfEveryWidthAgainstAPlainLoop) {
  std::mt19937_64 rng(13);
  constexpr int64_t kLimit = 20000;
  for (PrimitiveType t :
       {PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32,
        PrimitiveType::kS64, PrimitiveType::kU8, PrimitiveType::kU16,
        PrimitiveType::kU32, PrimitiveType::kU64}) {
    for (int n = 0; n < 1500; ++n) {
      // Values near the ends of the range and near zero, small steps of
      // either sign: the interesting corners.
      auto pick = [&]() {
        const uint64_t r = rng();
        switch (r % 4) {
          case 0:
            return IntValue::FromOrdinal(t, r >> 50);  // near Min
          case 1:
            return IntValue::FromOrdinal(t, ~(r >> 50));  // near Max
          case 2:
            return *IntValue::FromBits(t, (r >> 52) - 2048);  // near 0
          default:
            return *IntValue::FromBits(t, r);
        }
      };
      const IntValue start = pick();
      const IntValue bound = pick();
      const int64_t small = static_cast<int64_t>(rng() % 64) - 32;
      const IntValue step =
          rng() % 8 == 0 ? pick() : *IntValue::FromBits(t, small);
      const ComparisonDirection dir =
          static_cast<ComparisonDirection>(rng() % 6);
      int64_t simulated = -1;
      IntValue x = start;
      for (int64_t k = 0; k <= kLimit; ++k) {
        if (!IntValue::Compare(dir, x, bound)) {
          simulated = k;
          break;
        }
        x = x.Add(step);
      }
      std::string why;
      std::optional<uint64_t> got = CountTrips(start, step, dir, bound, &why);
      const std::string what = std::string(PrimitiveTypeName(t)) + " start " +
                               start.ToString() + " step " + step.ToString() +
                               " " + std::string(ComparisonDirectionName(dir)) +
                               " " + bound.ToString();
      if (simulated >= 0) {
        ASSERT_EQ(got, static_cast<uint64_t>(simulated)) << what;
      } else {
        // Longer than the plain loop ran: more iterations, or never.
        ASSERT_TRUE(!got.has_value() || *got > static_cast<uint64_t>(kLimit))
            << what << ": " << *got;
      }
    }
  }
}

}  // namespace
}  // namespace hloverlap
