// The register `Value`: 16 bytes holding an int64, a float64, a bool, or a reference
// to an Object (or nothing). Loop counters, conditions and shape dimensions stay
// unboxed in registers, so arithmetic on them never allocates.
//
//   Value n = Value::Int(10);
//   Value t = Value(ndarray);                  // holds one reference
//   if (NDArrayObj* a = t.As<NDArrayObj>()) ...
#ifndef DYNVM_OBJECTS_VALUE_H_
#define DYNVM_OBJECTS_VALUE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "objects/object.h"

namespace dynvm {

class Value {
 public:
  enum class Kind : uint8_t { kNone = 0, kInt, kFloat, kBool, kObject };

  Value() : i_(0), kind_(Kind::kNone) {}
  template <typename T>
  Value(ObjectRef<T> ref) {  // NOLINT: implicit, a Value is any of these
    obj_ = static_cast<Object*>(ref.release());
    kind_ = obj_ == nullptr ? Kind::kNone : Kind::kObject;
  }
  static Value Int(int64_t v) { return Value(Kind::kInt, v); }
  static Value Float(double v) {
    Value out;
    out.kind_ = Kind::kFloat;
    out.f_ = v;
    return out;
  }
  static Value Bool(bool v) { return Value(Kind::kBool, v ? 1 : 0); }

  Value(const Value& other) : i_(other.i_), kind_(other.kind_) {
    if (kind_ == Kind::kObject) obj_->IncRef();
  }
  Value(Value&& other) noexcept : i_(other.i_), kind_(other.kind_) {
    other.kind_ = Kind::kNone;
  }
  // Assignments read `other` before releasing what this held: the release may destroy
  // the object `other` lives in (r0 := field 0 of the ADT in r0).
  Value& operator=(const Value& other) {
    const int64_t bits = other.i_;
    const Kind kind = other.kind_;
    if (kind == Kind::kObject) other.obj_->IncRef();
    Clear();
    i_ = bits;
    kind_ = kind;
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    const int64_t bits = other.i_;
    const Kind kind = std::exchange(other.kind_, Kind::kNone);
    Clear();
    i_ = bits;
    kind_ = kind;
    return *this;
  }
  ~Value() { Clear(); }

  void swap(Value& other) noexcept {
    std::swap(i_, other.i_);
    std::swap(kind_, other.kind_);
  }
  // Drops what the value holds, leaving kNone.
  void Clear() {
    if (kind_ == Kind::kObject) obj_->DecRef();
    kind_ = Kind::kNone;
  }

  // Overwrite with an unboxed scalar, releasing what was held (the hot path of
  // register arithmetic: no temporary Value).
  void SetInt(int64_t v) {
    Clear();
    i_ = v;
    kind_ = Kind::kInt;
  }
  void SetBool(bool v) {
    Clear();
    i_ = v ? 1 : 0;
    kind_ = Kind::kBool;
  }

  // Fast paths for the interpreter's register moves. Both require this value to be
  // kNone (as a freshly cleared register is): no release, no temporary.
  void CopyIntoNone(const Value& other) {
    i_ = other.i_;
    kind_ = other.kind_;
    if (kind_ == Kind::kObject) obj_->IncRef();
  }
  void MoveIntoNone(Value& other) {
    i_ = other.i_;
    kind_ = std::exchange(other.kind_, Kind::kNone);
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_object() const { return kind_ == Kind::kObject; }

  // Accessors assume the kind was checked.
  int64_t int_value() const { return i_; }
  double float_value() const { return f_; }
  bool bool_value() const { return i_ != 0; }
  Object* object() const { return obj_; }

  // The object as `T` if this holds one of that type, else null (borrowed).
  template <typename T>
  T* As() const {
    if (kind_ != Kind::kObject || obj_->type_index() != T::kTypeIndex) return nullptr;
    return static_cast<T*>(obj_);
  }
  // A new reference to the object as `T`, or null.
  template <typename T>
  ObjectRef<T> AsRef() const {
    return ObjectRef<T>(As<T>());
  }

  // "int", "float", "bool", "none" or the object's type name, for messages.
  std::string_view TypeName() const;

 private:
  Value(Kind kind, int64_t v) : i_(v), kind_(kind) {}

  union {
    int64_t i_;
    double f_;
    Object* obj_;
  };
  Kind kind_;
};

static_assert(sizeof(Value) == 16, "registers are 16 bytes");

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_VALUE_H_
