// Tests of objects/value.h and objects/object.h: the register Value (kinds, reference
// counting through copies, moves and the interpreter's fast paths) and ObjectRef
// (counting, upcasts, checked downcasts, release/Adopt).
#include "objects/value.h"

#include <cmath>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/object.h"
#include "objects/opaque.h"
#include "objects/shape_tuple.h"
#include "objects/string_object.h"

namespace dynvm {
namespace {

static_assert(sizeof(Value) == 16, "a register is 16 bytes");

TEST(ValueTest, IsSixteenBytes) { EXPECT_EQ(sizeof(Value), 16u); }

TEST(ValueTest, DefaultIsNone) {
  Value v;
  EXPECT_TRUE(v.is_none());
  EXPECT_EQ(v.kind(), Value::Kind::kNone);
  EXPECT_FALSE(v.is_int() || v.is_float() || v.is_bool() || v.is_object());
  EXPECT_EQ(v.TypeName(), "none");
}

TEST(ValueTest, ScalarKindsAndPayloads) {
  Value i = Value::Int(-1234567890123);
  EXPECT_TRUE(i.is_int());
  EXPECT_EQ(i.kind(), Value::Kind::kInt);
  EXPECT_EQ(i.int_value(), -1234567890123);
  EXPECT_EQ(i.TypeName(), "int");

  Value f = Value::Float(2.5);
  EXPECT_TRUE(f.is_float());
  EXPECT_EQ(f.float_value(), 2.5);  // exactly representable
  EXPECT_EQ(f.TypeName(), "float");

  Value t = Value::Bool(true);
  Value n = Value::Bool(false);
  EXPECT_TRUE(t.is_bool());
  EXPECT_TRUE(t.bool_value());
  EXPECT_FALSE(n.bool_value());
  EXPECT_EQ(t.TypeName(), "bool");
}

TEST(ValueTest, FloatKeepsEveryBit) {
  // Negative zero and a value with a full mantissa survive a copy and a move.
  Value z = Value::Float(-0.0);
  Value copy = z;
  EXPECT_TRUE(std::signbit(copy.float_value()));
  Value big = Value::Float(0.1);
  Value moved = std::move(big);
  EXPECT_EQ(moved.float_value(), 0.1);
}

TEST(ValueTest, ObjectKindAndTypeName) {
  String s = MakeObject<StringObj>("hi");
  Value v(s);
  EXPECT_TRUE(v.is_object());
  EXPECT_EQ(v.TypeName(), "string");
  EXPECT_EQ(v.object(), s.get());
  Value shape(MakeObject<ShapeTupleObj>(std::vector<int64_t>{2, 3}));
  EXPECT_EQ(shape.TypeName(), "shape");
  Value adt(ADTObj::Tuple({}));
  EXPECT_EQ(adt.TypeName(), "adt");
}

TEST(ValueTest, NullObjectRefIsNone) {
  Value v(ObjectRef<StringObj>(nullptr));
  EXPECT_TRUE(v.is_none());
}

TEST(ValueTest, ConstructingFromRefTakesOneReference) {
  String s = MakeObject<StringObj>("x");
  EXPECT_EQ(s->use_count(), 1);
  {
    Value v(s);  // copies the ref: +1
    EXPECT_EQ(s->use_count(), 2);
  }
  EXPECT_EQ(s->use_count(), 1);
  {
    String tmp = s;
    Value v(std::move(tmp));  // moved ref: no net change beyond tmp's
    EXPECT_FALSE(tmp);
    EXPECT_EQ(s->use_count(), 2);
  }
  EXPECT_EQ(s->use_count(), 1);
}

TEST(ValueTest, CopyAndMoveCount) {
  String s = MakeObject<StringObj>("x");
  Value a(s);
  EXPECT_EQ(s->use_count(), 2);
  Value b = a;  // copy
  EXPECT_EQ(s->use_count(), 3);
  Value c = std::move(a);  // move: no change, source becomes none
  EXPECT_EQ(s->use_count(), 3);
  EXPECT_TRUE(a.is_none());  // NOLINT(bugprone-use-after-move): documented state
  Value d;
  d = b;  // copy assignment over none
  EXPECT_EQ(s->use_count(), 4);
  d = std::move(c);  // move assignment releases d's old reference
  EXPECT_EQ(s->use_count(), 3);
  EXPECT_TRUE(c.is_none());  // NOLINT(bugprone-use-after-move)
  d = Value::Int(3);         // assignment of a scalar releases
  EXPECT_EQ(s->use_count(), 2);
  b.Clear();
  EXPECT_TRUE(b.is_none());
  EXPECT_EQ(s->use_count(), 1);
}

TEST(ValueTest, SelfAssignmentKeepsTheReference) {
  String s = MakeObject<StringObj>("x");
  Value a(s);
  Value& alias = a;
  a = alias;
  EXPECT_EQ(s->use_count(), 2);
  a = std::move(alias);
  EXPECT_TRUE(a.is_object());
  EXPECT_EQ(s->use_count(), 2);
}

TEST(ValueTest, SwapExchangesWithoutCounting) {
  String s = MakeObject<StringObj>("x");
  Value a(s);
  Value b = Value::Int(7);
  a.swap(b);
  EXPECT_TRUE(a.is_int());
  EXPECT_EQ(a.int_value(), 7);
  EXPECT_EQ(b.object(), s.get());
  EXPECT_EQ(s->use_count(), 2);
}

TEST(ValueTest, SetIntAndSetBoolReleaseTheObject) {
  String s = MakeObject<StringObj>("x");
  Value v(s);
  EXPECT_EQ(s->use_count(), 2);
  v.SetInt(42);
  EXPECT_EQ(s->use_count(), 1);
  EXPECT_TRUE(v.is_int());
  EXPECT_EQ(v.int_value(), 42);

  Value w(s);
  EXPECT_EQ(s->use_count(), 2);
  w.SetBool(true);
  EXPECT_EQ(s->use_count(), 1);
  EXPECT_TRUE(w.is_bool());
  EXPECT_TRUE(w.bool_value());
  w.SetBool(false);
  EXPECT_FALSE(w.bool_value());
  w.SetInt(-5);  // scalar over scalar
  EXPECT_EQ(w.int_value(), -5);
}

TEST(ValueTest, SetIntDestroysTheLastReference) {
  int finalized = 0;
  Value v(MakeOpaque([&finalized] { ++finalized; }));
  EXPECT_EQ(finalized, 0);
  v.SetInt(1);
  EXPECT_EQ(finalized, 1);
  Value w(MakeOpaque([&finalized] { ++finalized; }));
  w.SetBool(false);
  EXPECT_EQ(finalized, 2);
}

TEST(ValueTest, CopyIntoNoneAddsAReference) {
  String s = MakeObject<StringObj>("x");
  Value src(s);
  Value dst;
  dst.CopyIntoNone(src);
  EXPECT_EQ(s->use_count(), 3);
  EXPECT_EQ(dst.object(), s.get());
  EXPECT_TRUE(src.is_object());

  Value scalar_dst;
  scalar_dst.CopyIntoNone(Value::Float(1.5));
  EXPECT_TRUE(scalar_dst.is_float());
  EXPECT_EQ(scalar_dst.float_value(), 1.5);
}

TEST(ValueTest, MoveIntoNoneTransfersTheReference) {
  String s = MakeObject<StringObj>("x");
  Value src(s);
  Value dst;
  dst.MoveIntoNone(src);
  EXPECT_EQ(s->use_count(), 2);
  EXPECT_TRUE(src.is_none());
  EXPECT_EQ(dst.object(), s.get());

  Value isrc = Value::Int(9);
  Value idst;
  idst.MoveIntoNone(isrc);
  EXPECT_TRUE(isrc.is_none());
  EXPECT_EQ(idst.int_value(), 9);
}

TEST(ValueTest, AsChecksTheType) {
  Value v(MakeObject<StringObj>("x"));
  EXPECT_NE(v.As<StringObj>(), nullptr);
  EXPECT_EQ(v.As<ADTObj>(), nullptr);
  EXPECT_EQ(Value::Int(1).As<StringObj>(), nullptr);
  EXPECT_EQ(Value().As<StringObj>(), nullptr);

  String ref = v.AsRef<StringObj>();
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->use_count(), 2);
  EXPECT_FALSE(v.AsRef<ShapeTupleObj>());
}

TEST(ObjectRefTest, CountsCopiesAndMoves) {
  String a = MakeObject<StringObj>("x");
  EXPECT_EQ(a->use_count(), 1);
  String b = a;
  EXPECT_EQ(a->use_count(), 2);
  String c = std::move(b);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a->use_count(), 2);
  c.reset();
  EXPECT_FALSE(c);
  EXPECT_EQ(a->use_count(), 1);
  EXPECT_TRUE(a == String(a));
}

TEST(ObjectRefTest, UpcastAndCheckedDowncast) {
  String s = MakeObject<StringObj>("x");
  ObjectRef<Object> any = s;
  EXPECT_EQ(s->use_count(), 2);
  EXPECT_EQ(any->type_index(), TypeIndex::kString);

  String back = any.As<StringObj>();
  ASSERT_TRUE(back);
  EXPECT_EQ(back.get(), s.get());
  EXPECT_EQ(s->use_count(), 3);

  EXPECT_FALSE(any.As<ADTObj>());
  EXPECT_FALSE(any.As<ShapeTupleObj>());
  EXPECT_EQ(s->use_count(), 3);  // failed downcasts took no reference
  EXPECT_FALSE(ObjectRef<Object>().As<StringObj>());

  ObjectRef<Object> moved = std::move(back);  // upcast by move: no change
  EXPECT_EQ(s->use_count(), 3);
}

TEST(ObjectRefTest, ReleaseAndAdopt) {
  String s = MakeObject<StringObj>("x");
  String t = s;
  StringObj* raw = t.release();
  EXPECT_FALSE(t);
  EXPECT_EQ(s->use_count(), 2);  // the released reference is still counted
  String adopted = String::Adopt(raw);
  EXPECT_EQ(s->use_count(), 2);
  adopted.reset();
  EXPECT_EQ(s->use_count(), 1);
}

TEST(ObjectTest, TypeIndexNames) {
  EXPECT_EQ(TypeIndexName(TypeIndex::kStorage), "storage");
  EXPECT_EQ(TypeIndexName(TypeIndex::kNDArray), "tensor");
  EXPECT_EQ(TypeIndexName(TypeIndex::kADT), "adt");
  EXPECT_EQ(TypeIndexName(TypeIndex::kClosure), "closure");
  EXPECT_EQ(TypeIndexName(TypeIndex::kShapeTuple), "shape");
  EXPECT_EQ(TypeIndexName(TypeIndex::kString), "string");
  EXPECT_EQ(TypeIndexName(TypeIndex::kOpaque), "opaque");
  EXPECT_EQ(TypeIndexName(static_cast<TypeIndex>(99)), "unknown");
}

}  // namespace
}  // namespace dynvm
