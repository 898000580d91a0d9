// The tools' whole-file reader: contents, errors naming the file, and the size limit.
#include "tools/file_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm::tools {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ReadFileOrStdinTest, ReadsWholeFiles) {
  const std::string contents(200000, 'x');  // several reads' worth
  absl::StatusOr<std::string> got = ReadFileOrStdin(WriteTemp("whole.txt", contents));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, contents);
}

TEST(ReadFileOrStdinTest, MissingFileIsNotFoundNamingIt) {
  absl::StatusOr<std::string> got = ReadFileOrStdin("/nonexistent/dynvm.relay");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("/nonexistent/dynvm.relay"));
}

TEST(ReadFileOrStdinTest, LargerThanTheLimitIsResourceExhausted) {
  const std::string path = WriteTemp("big.txt", std::string(100001, 'y'));
  EXPECT_TRUE(ReadFileOrStdin(path, 100001).ok());
  absl::StatusOr<std::string> got = ReadFileOrStdin(path, 100000);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("larger than the limit of 100000 bytes"));
}

}  // namespace
}  // namespace dynvm::tools
