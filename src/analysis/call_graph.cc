#include "analysis/call_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloverlap {

CallGraph::CallGraph(const Module& module) {
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (callee != nullptr) callers_[callee].push_back(inst.get());
      }
    }
  }
  // Iterative DFS post-order from the entry.
  if (module.entry() == nullptr) return;
  absl::flat_hash_map<const Computation*, uint8_t> state;
  std::vector<std::pair<Computation*, std::vector<Computation*>>> stack;
  auto push = [&](Computation* c) {
    state[c] = 1;
    auto callees = c->CalledComputations();
    std::reverse(callees.begin(), callees.end());
    stack.push_back({c, std::move(callees)});
  };
  push(module.entry());
  while (!stack.empty()) {
    auto& top = stack.back();
    if (!top.second.empty()) {
      Computation* next = top.second.back();
      top.second.pop_back();
      if (state[next] == 0) push(next);
      continue;
    }
    state[top.first] = 2;
    reachable_[top.first] = true;
    post_order_.push_back(top.first);
    stack.pop_back();
  }
}

const std::vector<Instruction*>& CallGraph::CallSites(
    const Computation* computation) const {
  auto it = callers_.find(computation);
  return it == callers_.end() ? empty_ : it->second;
}

bool CallGraph::IsReachable(const Computation* computation) const {
  return reachable_.contains(computation);
}

LoopNest::LoopNest(const Module& module) {
  if (module.entry() == nullptr) return;
  // Walk computations from the entry, carrying the innermost enclosing loop.
  struct Item {
    Computation* computation;
    LoopNode* loop;
  };
  std::vector<Item> work = {{module.entry(), nullptr}};
  absl::flat_hash_set<std::pair<const Computation*, const LoopNode*>> seen;
  while (!work.empty()) {
    Item item = work.back();
    work.pop_back();
    if (!seen.insert({item.computation, item.loop}).second) continue;
    // Visit in stored order, pushing callees in reverse so they pop in order.
    std::vector<Item> next;
    for (const auto& inst : item.computation->instructions()) {
      if (inst->opcode() == Opcode::kWhile &&
          inst->called_computations().size() == 2) {
        LoopNode* node = nullptr;
        auto it = by_instr_.find(inst.get());
        if (it == by_instr_.end()) {
          nodes_.push_back(std::make_unique<LoopNode>());
          node = nodes_.back().get();
          node->while_instr = inst.get();
          node->parent = item.loop;
          node->depth = item.loop == nullptr ? 0 : item.loop->depth + 1;
          node->path = item.loop == nullptr
                           ? inst->name()
                           : absl::StrCat(item.loop->path, "/", inst->name());
          if (item.loop == nullptr) {
            roots_.push_back(node);
          } else {
            item.loop->children.push_back(node);
          }
          by_instr_[inst.get()] = node;
        } else {
          node = it->second;
        }
        for (Computation* callee : inst->called_computations()) {
          if (callee != nullptr) next.push_back({callee, node});
        }
        continue;
      }
      for (Computation* callee : inst->called_computations()) {
        if (callee != nullptr) next.push_back({callee, item.loop});
      }
    }
    for (auto it = next.rbegin(); it != next.rend(); ++it) work.push_back(*it);
  }
  // Innermost first: post-order over the forest.
  std::vector<std::pair<LoopNode*, size_t>> stack;
  for (LoopNode* root : roots_) {
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [node, next_child] = stack.back();
      if (next_child < node->children.size()) {
        LoopNode* child = node->children[next_child++];
        stack.push_back({child, 0});
        continue;
      }
      post_order_.push_back(node);
      stack.pop_back();
    }
  }
}

const LoopNode* LoopNest::Find(const Instruction* while_instr) const {
  auto it = by_instr_.find(while_instr);
  return it == by_instr_.end() ? nullptr : it->second;
}

void LoopNest::Remap(
    const absl::flat_hash_map<const Instruction*, Instruction*>& moved) {
  for (const auto& node : nodes_) {
    auto it = moved.find(node->while_instr);
    if (it == moved.end()) continue;
    auto found = by_instr_.find(node->while_instr);
    if (found != by_instr_.end() && found->second == node.get()) {
      by_instr_.erase(found);
      by_instr_[it->second] = node.get();
    }
    node->while_instr = it->second;
  }
}

}  // namespace hloverlap
