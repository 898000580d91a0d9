// The List ADT and a generic map over it, in the text format: the start of the test
// programs that exercise ADTs, generics and match (parser, type inference, codegen).
#ifndef DYNVM_TESTS_COMPILER_LIST_PRELUDE_H_
#define DYNVM_TESTS_COMPILER_LIST_PRELUDE_H_

#include <string>
#include <string_view>

namespace dynvm::compiler::testing {

inline constexpr std::string_view kListPrelude = R"(
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @map[A, B](%f: fn (A) -> B, %l: List[A]) -> List[B] {
  match (%l) {
    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),
    Nil => Nil,
  }
}
)";

// `rest` after the prelude.
inline std::string WithListPrelude(std::string_view rest) {
  return std::string(kListPrelude) + std::string(rest);
}

}  // namespace dynvm::compiler::testing

#endif  // DYNVM_TESTS_COMPILER_LIST_PRELUDE_H_
