// Typed instruction attributes: the ones passes reason about.
//
// Everything an instruction carries that no pass interprets is kept verbatim
// as a RawAttribute (name and value text) so that printing round-trips.
#ifndef HLOVERLAP_HLO_ATTRIBUTES_H_
#define HLOVERLAP_HLO_ATTRIBUTES_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace hloverlap {

using DimensionVector = absl::InlinedVector<int64_t, 4>;

// A value of type T stored out of line, allocated on first write: for the
// large attributes only a few opcodes have (dot dimension numbers, replica
// groups), so that every other instruction carries 8 bytes instead of ~160.
// Value semantics (copies deep-copy, == compares values); reading one that
// was never written gives T's default.
//   attrs.dot->lhs_contracting_dims          // read (or write, non-const)
//   const DotDimensionNumbers& d = attrs.dot;  // read
//   attrs.dot.mutable_value() = d;            // write
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) {
      value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    }
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    mutable_value() = std::move(value);
    return *this;
  }

  const T& value() const { return value_ ? *value_ : Default(); }
  T& mutable_value() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  operator const T&() const { return value(); }  // NOLINT: by design
  const T* operator->() const { return &value(); }
  T* operator->() { return &mutable_value(); }
  bool operator==(const Boxed& other) const { return value() == other.value(); }

 private:
  static const T& Default() {
    static const T* const kDefault = new T();
    return *kDefault;
  }
  std::unique_ptr<T> value_;
};

// A list attribute (std::vector, DimensionVector) stored out of line,
// allocated on first write: 8 bytes for the many instructions that do not
// have it. It reads like the container (range-for, size(), empty(),
// operator[], data(), ==, conversion to const C& and so to absl::Span) and
// is written through assignment, push_back/emplace_back or
// mutable_value(); clear() frees it.
//   for (const SliceRange& r : attrs.slice) ...
//   attrs.slice = {SliceRange{0, 8, 1}};
//   attrs.dynamic_slice_sizes[0] *= 2;
template <typename C>
class BoxedList {
 public:
  using value_type = typename C::value_type;
  using const_iterator = typename C::const_iterator;
  using iterator = typename C::iterator;

  BoxedList() = default;
  BoxedList(C value) { *this = std::move(value); }  // NOLINT: by design
  BoxedList(std::initializer_list<value_type> values) { *this = C(values); }
  BoxedList(const BoxedList& other) = default;
  BoxedList(BoxedList&&) noexcept = default;
  BoxedList& operator=(const BoxedList& other) {
    if (other.empty()) {
      value_ = Boxed<C>();
    } else {
      value_ = other.value_;
    }
    return *this;
  }
  BoxedList& operator=(BoxedList&&) noexcept = default;
  BoxedList& operator=(C value) {
    if (value.empty()) {
      value_ = Boxed<C>();
    } else {
      value_ = std::move(value);
    }
    return *this;
  }
  BoxedList& operator=(std::initializer_list<value_type> values) {
    return *this = C(values);
  }

  const C& value() const { return value_.value(); }
  C& mutable_value() { return value_.mutable_value(); }
  operator const C&() const { return value(); }  // NOLINT: by design

  bool empty() const { return value().empty(); }
  size_t size() const { return value().size(); }
  const value_type* data() const { return value().data(); }
  const_iterator begin() const { return value().begin(); }
  const_iterator end() const { return value().end(); }
  const value_type& operator[](size_t i) const { return value()[i]; }
  value_type& operator[](size_t i) { return mutable_value()[i]; }
  const value_type& front() const { return value().front(); }
  const value_type& back() const { return value().back(); }
  void push_back(value_type v) { mutable_value().push_back(std::move(v)); }
  template <typename... Args>
  value_type& emplace_back(Args&&... args) {
    return mutable_value().emplace_back(std::forward<Args>(args)...);
  }
  void clear() { value_ = Boxed<C>(); }

  bool operator==(const BoxedList& other) const {
    return value() == other.value();
  }
  friend bool operator==(const BoxedList& a, const C& b) {
    return a.value() == b;
  }

 private:
  Boxed<C> value_;
};

// Comparisons with text and stream output for the string attributes below
// (BoxedString, SharedString, ConfigText), through Derived::value().
template <typename Derived>
class TextComparisons {
 public:
  friend bool operator==(const Derived& a, std::string_view b) {
    return std::string_view(a.value()) == b;
  }
  friend bool operator==(const Derived& a, const char* b) {
    return std::string_view(a.value()) == b;
  }
  friend bool operator==(const Derived& a, const std::string& b) {
    return a.value() == b;
  }
  friend std::ostream& operator<<(std::ostream& os, const Derived& s) {
    return os << s.value();
  }
};

// A string attribute stored out of line (8 bytes while empty), for the
// ones few instructions have. Reads as a const std::string& or a
// std::string_view (==, empty(), size(), data()); written by assignment.
// absl::StrCat needs .value().
class BoxedString : public BoxedList<std::string>,
                    public TextComparisons<BoxedString> {
 public:
  BoxedString() = default;
  BoxedString(std::string s) : BoxedList(std::move(s)) {}    // NOLINT
  BoxedString(const char* s) : BoxedList(std::string(s)) {}  // NOLINT
  BoxedString& operator=(std::string s) {
    BoxedList::operator=(std::move(s));
    return *this;
  }
  BoxedString& operator=(std::string_view s) { return *this = std::string(s); }
  BoxedString& operator=(const char* s) { return *this = std::string(s); }
  operator std::string_view() const { return value(); }  // NOLINT: by design
  bool operator==(const BoxedString& other) const {
    return value() == other.value();
  }
};

// An immutable string that copies share (they copy a reference, not the
// text), for metadata text that many instructions of a module repeat: a
// JAX dump's 09 module has 5,228 op_names with 119 distinct values. The
// parser gives equal texts one value; clones share it. 16 bytes; reads as a
// const std::string& or a std::string_view, written by assignment (which
// replaces the value, never edits a shared one).
class SharedString : public TextComparisons<SharedString> {
 public:
  SharedString() = default;
  SharedString(std::string s) { *this = std::move(s); }          // NOLINT
  SharedString(const char* s) : SharedString(std::string(s)) {}  // NOLINT
  SharedString& operator=(std::string s) {
    if (s.empty()) {
      value_.reset();
    } else {
      value_ = std::make_shared<const std::string>(std::move(s));
    }
    return *this;
  }
  SharedString& operator=(std::string_view s) { return *this = std::string(s); }
  SharedString& operator=(const char* s) { return *this = std::string(s); }

  const std::string& value() const { return value_ ? *value_ : Empty(); }
  operator const std::string&() const { return value(); }  // NOLINT
  operator std::string_view() const { return value(); }    // NOLINT
  bool empty() const { return value_ == nullptr; }
  size_t size() const { return value().size(); }
  const char* data() const { return value().data(); }

  bool operator==(const SharedString& other) const {
    return value_ == other.value_ || value() == other.value();
  }

 private:
  static const std::string& Empty() {
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }
  std::shared_ptr<const std::string> value_;
};

// The text of an instruction's backend_config. It also remembers whether
// the text is known to be one balanced brace blob because the parser
// scanned it as one (Lexer::ScanBraceBlob, whose grammar is the printer's
// test): the printer prints such text raw and anything else as a quoted
// string, and need not scan ~1 MB of a 09 dump's configs a second time.
// Every write except SetCheckedBlob forgets it; copies keep it. Reads as a
// const std::string& or a std::string_view.
class ConfigText : public TextComparisons<ConfigText> {
 public:
  ConfigText() = default;
  ConfigText(std::string s) : text_(std::move(s)) {}  // NOLINT
  ConfigText& operator=(std::string s) {
    text_ = std::move(s);
    checked_blob_ = false;
    return *this;
  }
  ConfigText& operator=(std::string_view s) { return *this = std::string(s); }
  ConfigText& operator=(const char* s) { return *this = std::string(s); }
  // Text the caller has scanned as one balanced brace blob.
  void SetCheckedBlob(std::string_view blob) {
    text_.assign(blob.data(), blob.size());
    checked_blob_ = true;
  }
  bool checked_blob() const { return checked_blob_; }
  void clear() { *this = std::string(); }

  const std::string& value() const { return text_; }
  operator const std::string&() const { return text_; }  // NOLINT
  operator std::string_view() const { return text_; }    // NOLINT
  bool empty() const { return text_.empty(); }
  size_t size() const { return text_.size(); }
  const char* data() const { return text_.data(); }
  size_t find(std::string_view s, size_t pos = 0) const {
    return text_.find(s, pos);
  }

  bool operator==(const ConfigText& other) const {
    return text_ == other.text_;
  }

 private:
  std::string text_;
  bool checked_blob_ = false;
};

// `slice={[0:8:2], [1:4]}`: one range per dimension.
struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceRange&) const = default;
};

// `padding=0_0x1_2_1` of the pad instruction: per dimension low, high,
// interior.
struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDim&) const = default;
};

// Dot dimension numbers (`lhs_batch_dims={0}, lhs_contracting_dims={2}, ...`).
struct DotDimensionNumbers {
  DimensionVector lhs_batch_dims;
  DimensionVector lhs_contracting_dims;
  DimensionVector rhs_batch_dims;
  DimensionVector rhs_contracting_dims;
  bool operator==(const DotDimensionNumbers&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
std::string_view ComparisonDirectionName(ComparisonDirection d);  // "LT"

// Replica groups in the three text formats XLA uses:
//   kExplicit: {{0,1},{2,3}} (an empty list {} means one group of everyone)
//   kIota:     [num_groups,group_size]<=[reshape dims]T(perm)
//   kMesh:     mesh['a'=2,'b'=2] {'b'} (kept verbatim; expanded lazily)
// The format is preserved for printing; Groups() expands any of them.
struct ReplicaGroups {
  enum class Format : uint8_t { kNone, kExplicit, kIota, kMesh };
  Format format = Format::kNone;
  std::vector<std::vector<int64_t>> explicit_groups;  // kExplicit
  int64_t iota_num_groups = 0;                        // kIota
  int64_t iota_group_size = 0;
  DimensionVector iota_reshape_dims;
  DimensionVector iota_transpose_perm;  // empty = identity
  std::string mesh_text;  // kMesh: the whole text after `replica_groups=`

  bool present() const { return format != Format::kNone; }
  // The groups as explicit device/replica id lists. An empty result means
  // "all participants in one group" ({} in text). kMesh groups are expanded
  // from mesh_text when it can be understood, else nullopt.
  std::optional<std::vector<std::vector<int64_t>>> Groups() const;
  // Size of each group, or nullopt when unknown / empty list.
  std::optional<int64_t> GroupSize() const;
  // Text as printed after `replica_groups=`.
  std::string ToString() const;
  bool operator==(const ReplicaGroups&) const = default;
};

// `metadata={op_type="..." op_name="..." source_file="..." source_line=N ...}`
// Current JAX dumps set op_name, scheduling_name and stack_frame_id (and
// deduplicated_name on some instructions); the other strings are stored out
// of line. op_type, op_name and source_file repeat across a module's
// instructions and are shared (SharedString).
struct OpMetadata {
  SharedString op_type;
  SharedString op_name;
  SharedString source_file;
  int64_t source_line = 0;
  int64_t source_end_line = 0;
  int64_t source_column = 0;
  int64_t source_end_column = 0;
  BoxedString profile_type;  // verbatim braces text, e.g. "{1,2}"
  BoxedString deduplicated_name;
  std::string scheduling_name;
  int64_t stack_frame_id = 0;
  BoxedString metadata_payload;
  bool empty() const;
  bool operator==(const OpMetadata&) const = default;
};

// `frontend_attributes={key="value",other={raw braces}}`. Entries stay in
// text order; the printer sorts keys as XLA does.
struct FrontendAttribute {
  std::string key;
  std::string value;    // unescaped string value, or raw text when is_raw
  bool is_raw = false;  // printed as a brace blob instead of a quoted string
  bool operator==(const FrontendAttribute&) const = default;
};
using FrontendAttributes = std::vector<FrontendAttribute>;
// Value of key, or nullptr.
const FrontendAttribute* FindFrontendAttribute(const FrontendAttributes& attrs,
                                               std::string_view key);
// Sets or replaces key.
void SetFrontendAttribute(FrontendAttributes& attrs, std::string_view key,
                          std::string value, bool is_raw = false);
inline void SetFrontendAttribute(BoxedList<FrontendAttributes>& attrs,
                                 std::string_view key, std::string value,
                                 bool is_raw = false) {
  SetFrontendAttribute(attrs.mutable_value(), key, std::move(value), is_raw);
}

// An attribute no pass interprets, kept as its text: `name=value`.
struct RawAttribute {
  std::string name;
  std::string value;  // exactly as written (balanced braces, quotes kept)
  bool operator==(const RawAttribute&) const = default;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_ATTRIBUTES_H_
