// Text that crosses trust boundaries: JSON escaping of any bytes, excerpts of untrusted
// input, and the log rate limit.
#include <gtest/gtest.h>

#include "pkg/log/rate_limit.h"
#include "pkg/text/escape.h"
#include "pkg/text/json.h"

namespace rdmadp {
namespace {

TEST(JsonString, EscapesControlsAndReplacesInvalidUtf8) {
  EXPECT_EQ(JsonString("a\"b\\c\n\t\x01"), R"("a\"b\\c\n\t\u0001")");
  EXPECT_EQ(JsonString("caf\xc3\xa9 \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
  // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate, > U+10FFFF.
  EXPECT_EQ(JsonString("\x80"), R"("\ufffd")");
  EXPECT_EQ(JsonString("\xc3"), R"("\ufffd")");
  EXPECT_EQ(JsonString("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(JsonString("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
}

TEST(QuotedExcerpt, QuotesAndCutsLongText) {
  EXPECT_EQ(QuotedExcerpt("7"), "\"7\"");
  EXPECT_EQ(QuotedExcerpt(std::string(100, 'x'), 4), "\"xxxx\"... (100 bytes)");
}

// H11 of the hardening round at 050f44e (discover's table): a control character in a value
// is written as the log writes it, \xNN, line breaks and tabs too; the rest is kept.
TEST(EscapeControls, WritesEachControlCharacterAsHex) {
  constexpr char kControls[] = "a\nb\x1b[31m\0c\td\x7f\r";  // NUL inside: sized below
  EXPECT_EQ(EscapeControls(std::string_view(kControls, sizeof(kControls) - 1)),
            R"(a\x0ab\x1b[31m\x00c\x09d\x7f\x0d)");
  EXPECT_EQ(EscapeControls("caf\xc3\xa9 mlx5_0/1:ACTIVE \\x41"),
            "caf\xc3\xa9 mlx5_0/1:ACTIVE \\x41");
  EXPECT_EQ(EscapeControls(""), "");
}

TEST(RateLimit, AFewPerWindowThenACountOfWhatWasLeftOut) {
  log::RateLimit limit(2, std::chrono::seconds(10));
  const auto t0 = log::RateLimit::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(limit.Admit(t0), 0u);
  EXPECT_EQ(limit.Admit(t0), 0u);
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(limit.Admit(t0 + std::chrono::seconds(1)), log::kRateLimited);
  EXPECT_EQ(limit.Admit(t0 + std::chrono::seconds(10)), 7u);  // a new window says how many
  EXPECT_EQ(limit.Admit(t0 + std::chrono::seconds(11)), 0u);
}

}  // namespace
}  // namespace rdmadp
