#include "hlo/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"

namespace hloverlap {

Module::Module(std::string name) : name_(std::move(name)) {}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation,
                                    const Computation* before) {
  Computation* raw = computation.get();
  raw->parent_ = this;
  if (raw->HasPendingEdits()) raw->ApplyPendingEdits();
  computation_set_.insert(raw);
  // Instructions added before the computation joined the module get ids now.
  for (auto& inst : raw->instructions_) inst->unique_id_ = NextUniqueId();
  if (before == nullptr) {
    computations_.push_back(std::move(computation));
  } else {
    auto it = std::find_if(computations_.begin(), computations_.end(),
                           [&](const std::unique_ptr<Computation>& c) {
                             return c.get() == before;
                           });
    computations_.insert(it, std::move(computation));
  }
  if (name_cache_valid_) {
    used_names_.insert(raw->name());
    for (auto& inst : raw->instructions_) used_names_.insert(inst->name());
  }
  return raw;
}

absl::Status Module::RemoveComputation(Computation* computation) {
  if (computation == entry_) {
    return absl::InternalError(
        absl::StrCat("cannot remove entry computation ", computation->name()));
  }
  for (const auto& c : computations_) {
    if (c.get() == computation) continue;
    for (const auto& inst : c->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (callee == computation) {
          return absl::InternalError(
              absl::StrCat("cannot remove computation ", computation->name(),
                           ": called by ", inst->name(), " in ", c->name()));
        }
      }
    }
  }
  computations_.erase(
      std::remove_if(computations_.begin(), computations_.end(),
                     [&](const std::unique_ptr<Computation>& c) {
                       return c.get() == computation;
                     }),
      computations_.end());
  computation_set_.erase(computation);
  return absl::OkStatus();
}

void Module::SortComputationsCalleesFirst() {
  // Iterative DFS post-order over callees, visiting roots in stored order.
  std::vector<std::unique_ptr<Computation>> sorted;
  sorted.reserve(computations_.size());
  absl::flat_hash_map<Computation*, size_t> index;
  for (size_t i = 0; i < computations_.size(); ++i) {
    index[computations_[i].get()] = i;
  }
  std::vector<uint8_t> state(computations_.size(), 0);
  for (size_t root = 0; root < computations_.size(); ++root) {
    if (state[root] != 0) continue;
    std::vector<std::pair<size_t, std::vector<Computation*>>> stack;
    state[root] = 1;
    stack.push_back({root, computations_[root]->CalledComputations()});
    std::reverse(stack.back().second.begin(), stack.back().second.end());
    while (!stack.empty()) {
      auto& top = stack.back();
      if (!top.second.empty()) {
        Computation* callee = top.second.back();
        top.second.pop_back();
        auto it = index.find(callee);
        if (it == index.end() || state[it->second] != 0) continue;
        state[it->second] = 1;
        auto callees = callee->CalledComputations();
        std::reverse(callees.begin(), callees.end());
        stack.push_back({it->second, std::move(callees)});
        continue;
      }
      state[top.first] = 2;
      sorted.push_back(std::move(computations_[top.first]));
      stack.pop_back();
    }
  }
  computations_ = std::move(sorted);
}

SourceLocation Module::GetSourceLocation(const OpMetadata& metadata) const {
  SourceLocation loc;
  if (!metadata.source_file.empty()) {
    loc.file = metadata.source_file;
    loc.line = metadata.source_line;
    loc.column = metadata.source_column;
    return loc;
  }
  int64_t frame_id = metadata.stack_frame_id;
  if (frame_id <= 0 ||
      frame_id > static_cast<int64_t>(stack_frames_.frames.size())) {
    return loc;
  }
  const auto& frame = stack_frames_.frames[frame_id - 1];
  int64_t loc_id = frame.file_location_id;
  if (loc_id <= 0 ||
      loc_id > static_cast<int64_t>(stack_frames_.file_locations.size())) {
    return loc;
  }
  const auto& fl = stack_frames_.file_locations[loc_id - 1];
  if (fl.file_name_id > 0 &&
      fl.file_name_id <=
          static_cast<int64_t>(stack_frames_.file_names.size())) {
    loc.file = stack_frames_.file_names[fl.file_name_id - 1];
  }
  loc.line = fl.line;
  loc.column = fl.column;
  return loc;
}

void Module::BuildNameCache() {
  used_names_.clear();
  next_suffix_.clear();
  max_channel_id_ = 0;
  for (const auto& c : computations_) {
    used_names_.insert(c->name());
    for (const auto& inst : c->instructions()) {
      used_names_.insert(inst->name());
      if (inst->attrs().channel_id.has_value()) {
        max_channel_id_ = std::max(max_channel_id_, *inst->attrs().channel_id);
      }
    }
  }
  name_cache_valid_ = true;
}

void Module::InvalidateNameCache() { name_cache_valid_ = false; }

absl::Status Module::RemoveComputations(
    const absl::flat_hash_set<const Computation*>& computations) {
  if (computations.contains(entry_)) {
    return absl::InternalError(
        absl::StrCat("cannot remove entry computation ", entry_->name()));
  }
  for (const auto& c : computations_) {
    if (computations.contains(c.get())) continue;
    for (const auto& inst : c->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (computations.contains(callee)) {
          return absl::InternalError(
              absl::StrCat("cannot remove computation ", callee->name(),
                           ": called by ", inst->name(), " in ", c->name()));
        }
      }
    }
  }
  computations_.erase(
      std::remove_if(computations_.begin(), computations_.end(),
                     [&](const std::unique_ptr<Computation>& c) {
                       return computations.contains(c.get());
                     }),
      computations_.end());
  for (const Computation* c : computations) computation_set_.erase(c);
  return absl::OkStatus();
}

std::string Module::UniqueInstructionName(std::string_view base) {
  if (!name_cache_valid_) BuildNameCache();
  if (base.empty()) base = "instruction";
  std::string candidate(base);
  if (!used_names_.contains(candidate)) {
    used_names_.insert(candidate);
    return candidate;
  }
  int64_t& next = next_suffix_[candidate];
  for (int64_t i = std::max<int64_t>(next, 1);; ++i) {
    candidate = absl::StrCat(AsAbsl(base), ".", i);
    if (!used_names_.contains(candidate)) {
      used_names_.insert(candidate);
      next = i + 1;
      return candidate;
    }
  }
}

std::string Module::UniqueComputationName(std::string_view base) {
  return UniqueInstructionName(base);
}

int64_t Module::NextChannelId() {
  if (!name_cache_valid_) BuildNameCache();
  return ++max_channel_id_;
}

int64_t Module::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

}  // namespace hloverlap
