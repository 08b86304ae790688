// The HLO text parser's internals, shared by its units: parser.cc (the
// token path: every rule of the grammar, and every diagnostic) and
// parser_fast_scan.cc (byte-level fast paths for the common spellings of
// shapes, signatures, operand lists and metadata). Include only from
// parser*.cc; the interface is parser.h.
#ifndef HLOVERLAP_HLO_PARSER_INTERNAL_H_
#define HLOVERLAP_HLO_PARSER_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "hlo/lexer.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/raw_attribute_check.h"
#include "hlo/shape_inference.h"
#include "hlo/small_float.h"
#include "hlo/text_hash.h"

namespace hloverlap {
namespace parser_internal {

using TK = TokenKind;

// absl::Hash of std::string_view falls back to std::hash here (this absl's
// string_view is its own type), so std::string_view keys use SvHash.
// A small fast hash (names are short): 8-byte chunks, multiply-xor mixing,
// murmur3 finalizer so that all bits are usable by the swiss table.
struct SvHash {
  size_t operator()(std::string_view s) const { return HashText(s); }
};
// Equality as a length check and a memcmp (std::string_view's operator==
// goes through an out-of-line compare() here, as expensive as the probe).
struct SvEq {
  bool operator()(std::string_view a, std::string_view b) const {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
  }
};
// Whether the n bytes at d start with `text` (a compare of constant size).
template <size_t N>
bool At(const char* d, size_t n, const char (&text)[N]) {
  return n >= N - 1 && std::memcmp(d, text, N - 1) == 0;
}

template <typename V>
using SvMap = absl::flat_hash_map<std::string_view, V, SvHash, SvEq>;
using SvSet = absl::flat_hash_set<std::string_view, SvHash, SvEq>;

enum AttrId : uint8_t {
  kAttrDimensions,
  kAttrIndex,
  kAttrIotaDimension,
  kAttrSlice,
  kAttrDynamicSliceSizes,
  kAttrPadding,
  kAttrLhsBatchDims,
  kAttrLhsContractingDims,
  kAttrRhsBatchDims,
  kAttrRhsContractingDims,
  kAttrDirection,
  kAttrType,
  kAttrChannelId,
  kAttrReplicaGroups,
  kAttrUseGlobalDeviceIds,
  kAttrConstrainLayout,
  kAttrSourceTargetPairs,
  kAttrKind,
  kAttrCustomCallTarget,
  kAttrMetadata,
  kAttrFrontendAttributes,
  kAttrBackendConfig,
  kAttrSharding,
  kAttrIsComposite,
  kAttrToApply,
  kAttrCalls,
  kAttrCondition,
  kAttrBody,
  kAttrTrueComputation,
  kAttrFalseComputation,
  kAttrBranchComputations,
  kAttrSelect,
  kAttrScatter,
  kAttrCalledComputations,
  kAttrControlPredecessors,
  kAttrRaw,
};

enum class Sugar { kNone, kStart, kUpdate, kDone };

// Per-instruction attribute bookkeeping.
struct AttrState {
  uint64_t seen = 0;
  // Single called computations by AttrId (kAttrToApply..kAttrScatter), with
  // the offset of their attribute for diagnostics.
  Computation*& single(AttrId id) { return single_[id - kAttrToApply]; }
  size_t& offset(AttrId id) { return offset_[id - kAttrToApply]; }
  Computation* single_[kAttrCalledComputations - kAttrToApply + 1] = {};
  size_t offset_[kAttrCalledComputations - kAttrToApply + 1] = {};
  std::vector<Computation*> branches;
  std::vector<Computation*> called_list;
  absl::InlinedVector<Instruction*, 4> control_preds;
  SvSet raw_names;  // names of raw attributes seen (duplicate check)
};

// An array shape scanned by the fast path.
struct FastShape {
  static constexpr int kMaxRank = 12;
  PrimitiveType type;
  int rank;
  bool has_layout;
  size_t end;
  int64_t dims[kMaxRank];
  int64_t minor_to_major[kMaxRank];
};

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : lex_(text), opts_(options) {}

  // Turns the byte-level fast paths (parser_fast_scan.cc) off, so that
  // every construct is read by the token path: for tests that hold the two
  // paths to the same result.
  void DisableFastPaths() { fast_paths_ = false; }

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();
  absl::StatusOr<Shape> ParseStandaloneShape();
  // `{(P0, P1, ...)->R}` (an entry_computation_layout value); false when it
  // is not of that form.
  bool ParseStandaloneProgramShape(ProgramShape* program);

 private:
  // --- Tokens and diagnostics ---------------------------------------------
  void Advance() { lex_.Next(&tok_); }
  [[gnu::noinline, gnu::cold]] bool Error(size_t offset,
                                          std::string_view message);
  // "expected X, got 'tok'" (or the lexer's message for an invalid token).
  [[gnu::noinline, gnu::cold]] bool Unexpected(std::string_view expected);
  bool Expect(TK kind, std::string_view expected) {
    if (tok_.kind != kind) return Unexpected(expected);
    Advance();
    return true;
  }
  // At the ',' before an attribute: takes `, name=` (or `, name =`) and
  // sets *name and *offset; "expected <what>" when no name follows.
  bool ParseAttributeName(std::string_view what, std::string_view* name,
                          size_t* offset);
  bool ParseInt(int64_t* v, std::string_view what);
  bool ParseBool(bool* v);
  bool ParseString(std::string* out);
  // `{1,2,3}` or `{}` into a DimensionVector or std::vector<int64_t>.
  template <typename List>
  bool ParseIntList(List* out);
  bool CaptureRawValue(std::string_view* out);
  bool CaptureBraceBlob(std::string_view* out);
  // Skips a balanced '(' ... ')' group; *end is the offset after ')'.
  bool SkipParenGroup(size_t* end);
  // Line and column of `offset` for Instruction::source_position. Offsets
  // grow as the parser moves on, so each newline is counted once (linear in
  // the text, unlike Lexer::LineCol from the start).
  SourcePosition PositionOf(size_t offset);

  // --- Module structure ---------------------------------------------------
  bool ParseHeader();
  bool ParseStackFrameTables();
  bool ParseComputation();
  // At the '(' of a computation's parameter list: the common spelling
  // `(name: type[dims]{layout}, ...)` (array shapes ScanShapeFast takes,
  // ", " between) checked straight from the characters, moving past the
  // ')'. False, with the position as it was, when the tokens must read it
  // (and find the same, or the error).
  bool SkipSignatureParamsFast();
  bool ParseInstruction();
  bool LookupLineOpcode(std::string_view opcode_text, size_t opcode_offset,
                        Opcode* op, Sugar* sugar);
  bool ParseLineOperands(Opcode line_op, Instruction* inst);
  bool SplitSugarStart(std::string_view opcode_text, size_t shape_offset,
                       Opcode op, std::string_view name, SharedShape* shape,
                       Shape* start_shape, std::string* wrapped_name);
  bool Finalize();
  // The parsed entry_computation_layout against the entry's signature
  // (shapes compared without layouts, as XLA's parser requires them equal
  // up to layout): a mismatch is an error at the attribute.
  bool CheckEntryLayout(const Computation& entry);
  bool RenameSynthesizedInstructions();
  static uint32_t NameSignature(std::string_view name);
  void NoteParsedName(std::string_view name, Instruction* inst);
  void RenameRepeatedParsedNames();
  void NoteSynthesized(Instruction* inst);

  // --- Shapes ---------------------------------------------------------------
  bool ParseShape(Shape* out, int depth);
  // An array, token or opaque shape (no tuples).
  bool ParseArrayShape(Shape* out);
  [[gnu::noinline, gnu::cold]] bool NestingError(std::string_view what,
                                                 size_t offset);
  bool ParseLayout(int64_t rank, Layout* layout);
  // The common `type[d,...]{l,...}` spelling scanned straight from the
  // characters (no tokens); false (nothing consumed) when the token path
  // must handle it. Sizes and layouts are checked by the token path's
  // rules (ArrayShapeSizeError, IsMinorToMajorPermutation), so the two
  // paths accept the same shapes. ApplyFastShape fills a default Shape and
  // moves past the shape.
  bool ScanShapeFast(PrimitiveType type, FastShape* fs) const;
  // Checks the syntax of a shape without building it (ignored shapes).
  bool SkipShape(int depth);
  void ApplyFastShape(const FastShape& fs, Shape* out);
  // An instruction's result shape: one shared with the earlier
  // instructions whose shape is spelled the same (shapes_).
  // `*absent` (when given) is set when the text names an opcode where the
  // shape would be (`sum = add(a, b)`): nothing is consumed then.
  bool ParseInstructionShape(SharedShape* out, bool* absent = nullptr);
  // The cached shape spelled `key`, moving past it (to `end`); null if
  // there is none.
  const SharedShape* TakeCachedShape(std::string_view key, size_t end);
  // Element count of the tuple shape at `open` and its closing ')' (npos
  // when not found nearby).
  size_t ScanTupleExtent(size_t open, size_t* close) const;
  // The ` = SHAPE opcode` that follows an instruction name ending at
  // `after_name`, when SHAPE is an array shape spelled exactly like one in
  // shapes_: *out shares it, *shape_offset is where it starts, and the
  // opcode is the current token. False, with nothing consumed, otherwise
  // (the token path then reads the same text to the same result: an array
  // key in shapes_ is only ever the text ScanShapeFast took, which reads
  // nothing after it when a layout ends it and, when not, takes it when a
  // space and a letter follow, as here).
  bool TakeCachedLineShape(size_t after_name, SharedShape* out,
                           size_t* shape_offset);

  // --- Operands -------------------------------------------------------------
  bool ParseOperands();
  // At the '(' of the operand list: the common spelling `(%a, %b)` (names
  // with '%' already defined in this computation, ", " between them, no
  // tuple indices, declared shapes or comments) read straight from the
  // characters into operands_, moving past the ')'. False, with operands_
  // and the position as they were, when ParseOperands must read it (which
  // finds the same operands, or the error).
  bool ScanOperandsFast();
  Instruction* GetOrCreateGte(Instruction* base, int64_t index, size_t offset);
  bool UndefinedInstruction(std::string_view name, size_t offset,
                            std::string_view what);
  bool DefinedLater(std::string_view name, size_t from) const;

  // --- Literals ---------------------------------------------------------
  bool ParseConstantLiteral(const Shape& shape, Literal* out, int depth);
  bool ParseArrayLiteral(const Shape& shape, Literal* lit);
  [[gnu::noinline]] bool ParseArrayConstant(const Shape& shape, Literal* out);
  [[gnu::noinline]] bool CheckTupleLiteralSize(const Shape& shape);
  [[gnu::noinline]] void MakeTupleLiteral(const Shape& shape,
                                          std::vector<Literal> elements,
                                          Literal* out);
  bool ParseElement(PrimitiveType type, Literal* lit, int64_t index);
  bool ParseFloatValue(FloatValue* v);
  bool StoreFloat(PrimitiveType type, const FloatValue& v, Literal* lit,
                  int64_t index, size_t offset);

  // --- Attributes ---------------------------------------------------------
  bool ParseAttributes(Instruction* inst, Opcode op, AttrState* st);
  bool ParseAttribute(Instruction* inst, Opcode op, std::string_view name,
                      size_t offset, AttrState* st);
  bool ParseMetadata(OpMetadata* md);
  bool ParseBackendConfig(Opcode op, InstructionAttributes* a);
  // The common spelling `{op_name="..." scheduling_name="..."
  // stack_frame_id=N}` (known keys, strings of plain ASCII without escapes,
  // spaces or commas between entries) read straight from the characters,
  // into an empty *md. False, with *md and the position as they were, when
  // the token path must read it.
  bool ScanMetadataFast(OpMetadata* md);
  // The field of *md that `key` names: a string (*str), a shared string
  // (*shared) or an integer (*num); none for other keys.
  static void MetadataField(std::string_view key, OpMetadata* md,
                            std::string** str, SharedString** shared,
                            int64_t** num);
  // The module's one SharedString of `text` (made on first use).
  const SharedString& Interned(std::string_view text);
  const SharedString& InternedSlow(std::string_view text);
  bool ParseFrontendAttributes(FrontendAttributes* out);
  bool ParseReplicaGroups(ReplicaGroups* rg);
  bool ParseSlice(std::vector<SliceRange>* out);
  bool ParsePadding(std::vector<PaddingDim>* out);
  bool ParseSourceTargetPairs(std::vector<std::pair<int64_t, int64_t>>* out);
  bool ParseComputationRef(Computation** out);
  bool ParseComputationList(std::vector<Computation*>* out);
  bool ParseControlPredecessors(AttrState* st);
  bool FinishCalledComputations(Instruction* inst, Opcode op, AttrState* st,
                                size_t opcode_offset);
  // The attributes kept verbatim that XLA's parser checks: a custom-call's
  // api_version and operand_layout_constraints, result_accuracy.
  bool CheckVerbatimAttributes(const Instruction& inst, size_t opcode_offset);
  // `{shape, shape, ...}` and the end of the input.
  bool ParseStandaloneShapeList(std::vector<Shape>* shapes);
  bool CheckRequiredAttributes(Instruction* inst, Opcode op,
                               const AttrState& st, size_t opcode_offset);

  // --- Async syntax sugar -----------------------------------------------
  Instruction* BuildSugarStart(std::unique_ptr<Instruction> wrapped,
                               Shape start_shape, std::string_view name,
                               size_t offset);
  static std::optional<Opcode> WrappedOpcode(const Instruction* async_op);

  Lexer lex_;
  Token tok_;
  const ParseOptions& opts_;
  bool fast_paths_ = true;
  // PositionOf's cursor: the line of `position_offset_` and where it starts.
  size_t position_offset_ = 0;
  size_t position_line_start_ = 0;
  uint32_t position_line_ = 1;
  // Position of the instruction line being parsed (given to the
  // instructions synthesized for it too).
  SourcePosition line_position_;
  absl::Status status_;
  std::string scratch_;

  std::unique_ptr<Module> module_;
  bool has_header_ = false;
  // entry_computation_layout, when it parsed as a program shape: checked
  // against the entry computation's signature in Finalize().
  size_t entry_layout_offset_ = 0;
  // input_output_alias / buffer_donor entries, checked against the entry
  // computation once it is known (CheckAliasEntries).
  std::vector<AliasEntry> alias_entries_;
  std::vector<AliasEntry> donor_entries_;
  size_t alias_offset_ = 0;
  size_t donor_offset_ = 0;
  bool CheckAliasEntries(const Computation& entry);
  std::optional<ProgramShape> entry_layout_;
  SvMap<Computation*> computations_;
  Computation* entry_ = nullptr;

  // Current computation.
  Computation* comp_ = nullptr;
  std::unique_ptr<Computation> comp_owned_;
  // Instruction shapes and top-level tuple shapes by their exact text:
  // instructions spelled alike share one (SharedShape).
  SvMap<SharedShape> shapes_;
  // Wrapped computations synthesized for async sugar in comp_.
  std::vector<std::unique_ptr<Computation>> pending_wrapped_;
  SvMap<Instruction*> names_;
  // Metadata texts many instructions repeat, one value each (keys view the
  // values' own text).
  SvMap<SharedString> interned_;
  // A direct-mapped cache in front of interned_ (indexed by the length and
  // last bytes of the text; ~120 distinct op_names per 09 dump): a hit
  // costs one memcmp instead of hashing a ~100-byte text and probing. Each
  // slot holds a copy of interned_'s value, so hits give the same value.
  struct InternSlot {
    std::string_view text;  // the value's own text
    SharedString value;
  };
  static constexpr size_t kInternSlots = 256;
  std::unique_ptr<InternSlot[]> intern_cache_ =
      std::make_unique<InternSlot[]>(kInternSlots);
  absl::flat_hash_map<std::pair<const Instruction*, int64_t>, Instruction*>
      gte_cache_;
  Instruction* root_ = nullptr;
  size_t root_offset_ = 0;
  absl::flat_hash_set<int64_t> param_numbers_;
  int64_t max_param_number_ = -1;
  absl::InlinedVector<Instruction*, 16> operands_;
  // Unresolved control predecessors of the current computation.
  std::vector<std::pair<size_t, std::string_view>> comp_pending_preds_;

  // Module-wide.
  bool uses_compact_gte_ = false;
  std::vector<std::pair<size_t, std::string_view>> pending_preds_;
  std::vector<Instruction*> synth_instructions_;
  // Every parsed instruction name with signatures for the collision check.
  struct ParsedName {
    std::string_view name;
    Instruction* inst;
    uint32_t prefix_len;  // of "<prefix>.<digits>", 0 if not that form
    uint16_t sig;
    uint16_t prefix_sig;
  };
  std::vector<ParsedName> parsed_names_;
  SvMap<int64_t> synth_counts_;  // synthesized name -> count
  bool synth_self_collision_ = false;
  std::vector<uint64_t> synth_bitmap_ = std::vector<uint64_t>(1024, 0);
  std::vector<Computation*> synth_computations_;
};

// ParseHloModule with the fast paths off (Parser::DisableFastPaths); for
// tests.
absl::StatusOr<std::unique_ptr<Module>> ParseHloModuleTokenPathOnly(
    std::string_view text, const ParseOptions& options = {});

// The element type named by s (the names ParsePrimitiveType reads), looked
// up as a keyword; nullopt for any other text.
std::optional<PrimitiveType> LookupElementType(std::string_view s);

}  // namespace parser_internal
}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_PARSER_INTERNAL_H_
