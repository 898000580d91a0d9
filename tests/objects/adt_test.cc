// Tests of objects/adt.h (ADTs and closures: tags, fields, reference counting of the
// fields), objects/shape_tuple.h, objects/string_object.h and objects/opaque.h.
#include "objects/adt.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "objects/opaque.h"
#include "objects/shape_tuple.h"
#include "objects/string_object.h"
#include "objects/value.h"

namespace dynvm {
namespace {

TEST(ADTTest, TagAndFields) {
  String s = MakeObject<StringObj>("head");
  std::vector<Value> fields = {Value::Int(1), Value::Float(0.5), Value::Bool(true), Value(s),
                               Value()};
  ADT adt = ADTObj::Create(/*tag=*/7, fields);
  EXPECT_EQ(adt->type_index(), TypeIndex::kADT);
  EXPECT_EQ(adt->tag(), 7u);
  ASSERT_EQ(adt->size(), 5u);
  ASSERT_EQ(adt->fields().size(), 5u);
  EXPECT_EQ(adt->fields()[0].int_value(), 1);
  EXPECT_EQ(adt->fields()[1].float_value(), 0.5);
  EXPECT_TRUE(adt->fields()[2].bool_value());
  EXPECT_EQ(adt->fields()[3].As<StringObj>(), s.get());
  EXPECT_TRUE(adt->fields()[4].is_none());
  // The fields were copied: the caller's vector still holds its own references.
  EXPECT_EQ(s->use_count(), 3);
}

TEST(ADTTest, TupleIsTagZero) {
  ADT t = ADTObj::Tuple({Value::Int(3), Value::Int(4)});
  EXPECT_EQ(t->tag(), 0u);
  EXPECT_EQ(t->size(), 2u);
  EXPECT_EQ(t->fields()[1].int_value(), 4);
}

TEST(ADTTest, EmptyADT) {
  ADT t = ADTObj::Create(/*tag=*/3, {});
  EXPECT_EQ(t->size(), 0u);
  EXPECT_TRUE(t->fields().empty());
  EXPECT_EQ(t->tag(), 3u);
}

TEST(ADTTest, FieldsLieAfterTheHeader) {
  ADT t = ADTObj::Tuple({Value::Int(1)});
  const char* header = reinterpret_cast<const char*>(t.get());
  const char* first = reinterpret_cast<const char*>(t->fields().data());
  EXPECT_EQ(first - header, static_cast<std::ptrdiff_t>(sizeof(ADTObj)));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % alignof(Value), 0u);
}

TEST(ADTTest, DestructionReleasesFields) {
  String s = MakeObject<StringObj>("x");
  int finalized = 0;
  {
    ADT adt = ADTObj::Create(1, {Value(s), Value(s), Value(MakeOpaque([&] { ++finalized; }))});
    EXPECT_EQ(s->use_count(), 3);
    EXPECT_EQ(finalized, 0);
  }
  EXPECT_EQ(s->use_count(), 1);
  EXPECT_EQ(finalized, 1);
}

TEST(ADTTest, NestedADTsAreReleasedRecursively) {
  int finalized = 0;
  {
    ADT inner = ADTObj::Tuple({Value(MakeOpaque([&] { ++finalized; }))});
    ADT outer = ADTObj::Create(2, {Value(inner), Value(inner)});
    EXPECT_EQ(inner->use_count(), 3);
    inner.reset();
    EXPECT_EQ(finalized, 0);
  }
  EXPECT_EQ(finalized, 1);
}

TEST(ADTTest, MutableFieldsCanBeReplaced) {
  String s = MakeObject<StringObj>("x");
  ADT adt = ADTObj::Tuple({Value(s)});
  EXPECT_EQ(s->use_count(), 2);
  adt->mutable_fields()[0] = Value::Int(5);
  EXPECT_EQ(s->use_count(), 1);
  EXPECT_EQ(adt->fields()[0].int_value(), 5);
}

TEST(ADTTest, CreateFromCopiesEachIndex) {
  String s = MakeObject<StringObj>("x");
  std::vector<Value> regs = {Value::Int(10), Value(s), Value::Int(30)};
  const uint32_t picks[] = {2, 1, 0, 1};
  ADT adt = ADTObj::CreateFrom(/*tag=*/4, /*size=*/4,
                               [&](uint32_t i) -> const Value& { return regs[picks[i]]; });
  EXPECT_EQ(adt->tag(), 4u);
  ASSERT_EQ(adt->size(), 4u);
  EXPECT_EQ(adt->fields()[0].int_value(), 30);
  EXPECT_EQ(adt->fields()[1].As<StringObj>(), s.get());
  EXPECT_EQ(adt->fields()[2].int_value(), 10);
  EXPECT_EQ(s->use_count(), 4);  // s, regs[1], two fields
  adt.reset();
  EXPECT_EQ(s->use_count(), 2);
}

TEST(ClosureTest, FunctionIndexAndCaptured) {
  String s = MakeObject<StringObj>("captured");
  Closure c = ClosureObj::Create(/*func_index=*/9, {Value::Int(1), Value(s)});
  EXPECT_EQ(c->type_index(), TypeIndex::kClosure);
  EXPECT_EQ(c->func_index(), 9u);
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ(c->fields()[0].int_value(), 1);
  EXPECT_EQ(c->fields()[1].As<StringObj>()->value(), "captured");
  EXPECT_EQ(s->use_count(), 2);
  c.reset();
  EXPECT_EQ(s->use_count(), 1);
}

TEST(ClosureTest, CreateFromAndEmpty) {
  Closure empty = ClosureObj::Create(0, {});
  EXPECT_EQ(empty->size(), 0u);
  Value v = Value::Int(8);
  Closure c = ClosureObj::CreateFrom(3, 2, [&](uint32_t) -> const Value& { return v; });
  EXPECT_EQ(c->func_index(), 3u);
  EXPECT_EQ(c->fields()[1].int_value(), 8);
  Value as_value(c);
  EXPECT_EQ(as_value.TypeName(), "closure");
  EXPECT_EQ(as_value.As<ADTObj>(), nullptr);  // a closure is not an ADT
  EXPECT_NE(as_value.As<ClosureObj>(), nullptr);
}

TEST(ShapeTupleTest, HoldsDims) {
  const int64_t dims[] = {2, 0, 7};
  ShapeTuple t = MakeObject<ShapeTupleObj>(dims);
  EXPECT_EQ(t->type_index(), TypeIndex::kShapeTuple);
  EXPECT_EQ(t->dims(), (Shape{2, 0, 7}));
  ShapeTuple scalar = MakeObject<ShapeTupleObj>(absl::Span<const int64_t>());
  EXPECT_TRUE(scalar->dims().empty());
}

TEST(ShapeTupleTest, HoldsMoreDimsThanInline) {
  std::vector<int64_t> dims(16);
  for (int i = 0; i < 16; ++i) dims[i] = i + 1;
  ShapeTuple t = MakeObject<ShapeTupleObj>(dims);
  ASSERT_EQ(t->dims().size(), 16u);
  EXPECT_EQ(t->dims()[15], 16);
}

TEST(StringObjTest, HoldsItsValue) {
  String s = MakeObject<StringObj>(std::string_view("with\0nul", 8));
  EXPECT_EQ(s->type_index(), TypeIndex::kString);
  EXPECT_EQ(s->value().size(), 8u);
  EXPECT_EQ(s->value(), std::string("with\0nul", 8));
  String e = MakeObject<StringObj>("");
  EXPECT_TRUE(e->value().empty());
}

TEST(OpaqueTest, FinalizerRunsOnceOnLastRelease) {
  int finalized = 0;
  ObjectRef<Object> a = MakeOpaque([&] { ++finalized; });
  EXPECT_EQ(a->type_index(), TypeIndex::kOpaque);
  ObjectRef<Object> b = a;
  a.reset();
  EXPECT_EQ(finalized, 0);
  b.reset();
  EXPECT_EQ(finalized, 1);
}

TEST(FlattenValueTest, DepthFirstThroughAdts) {
  const Value s(MakeObject<StringObj>("leaf"));
  const Value nested(ADTObj::Tuple(
      {Value::Int(1), Value(ADTObj::Create(2, {s, Value(ADTObj::Tuple({}))})), Value::Bool(true)}));
  const std::vector<Value> leaves = FlattenValue(nested);
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[0].int_value(), 1);
  EXPECT_EQ(leaves[1].object(), s.object());
  EXPECT_TRUE(leaves[2].is_bool());
  EXPECT_EQ(FlattenValue(Value::Float(2)).size(), 1u);
}

TEST(AdtTest, ChainsOfAnyDepthFlattenAndFreeInConstantStack) {
  // A million nested tuples: recursion per level in flattening or freeing would
  // overflow the stack.
  constexpr int kDepth = 1'000'000;
  Value chain = Value::Int(42);
  for (int i = 0; i < kDepth; ++i) chain = Value(ADTObj::Tuple({chain}));
  const std::vector<Value> leaves = FlattenValue(chain);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0].int_value(), 42);
  chain = Value();  // frees the whole chain
  EXPECT_EQ(chain.kind(), Value::Kind::kNone);
}

// Holds a chain of nested tuples, released when the thread's thread-locals are destroyed.
struct ChainHolder {
  Value chain;
  int* finalized = nullptr;
};

TEST(AdtTest, ObjectsReleasedAfterTheThreadsOwnThreadLocalsAreFreed) {
  // A static that holds an executable is destroyed at exit after the main thread's
  // thread-locals, among them the list Destroy() defers nested objects to. A
  // thread-local constructed before that list is destroyed after it, the same order.
  int finalized = 0;
  std::thread([&finalized] {
    thread_local ChainHolder holder;  // constructed first, destroyed last
    holder.finalized = &finalized;
    Value chain = Value(MakeOpaque([&finalized] { ++finalized; }));
    for (int i = 0; i < 100'000; ++i) chain = Value(ADTObj::Tuple({chain}));
    holder.chain = chain;
    // Freeing nested tuples here sets up this thread's deferral list.
    Value nested = Value::Int(1);
    for (int i = 0; i < 3; ++i) nested = Value(ADTObj::Tuple({nested}));
    nested = Value();
  }).join();
  EXPECT_EQ(finalized, 1);  // the chain was freed, down to its leaf, without a fault
}

}  // namespace
}  // namespace dynvm
