#include "interp/rendezvous.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/diagnostic.h"
#include "interp/collectives.h"
#include "interp/errors.h"

namespace hloverlap::interp {

Rendezvous::Rendezvous(int64_t num_devices, int64_t max_running)
    : num_devices_(num_devices),
      max_running_(max_running),
      next_seq_(num_devices, 0),
      finished_(num_devices, false),
      last_instr_(num_devices, nullptr),
      arrivals_(num_devices),
      blocked_at_(num_devices, -1),
      waiting_for_(num_devices) {}

absl::Status Rendezvous::BlockedLocked(int64_t device, const Instruction* instr,
                                       std::string what) {
  blocked_at_[device] = epoch_;
  waiting_for_[device] = std::move(what);
  for (int64_t d = 0; d < num_devices_; ++d) {
    if (!finished_[d] && blocked_at_[d] != epoch_) return absl::OkStatus();
  }
  std::string msg = "deadlock: every device that has not finished waits:";
  int64_t listed = 0;
  for (int64_t d = 0; d < num_devices_; ++d) {
    if (finished_[d]) continue;
    if (++listed > 8) {
      absl::StrAppend(&msg, " ...");
      break;
    }
    absl::StrAppend(&msg, listed > 1 ? ";" : "", " device ", d, " ",
                    waiting_for_[d]);
  }
  return absl::FailedPreconditionError(msg);
}

void Rendezvous::Send(int64_t device, int64_t channel,
                      const std::vector<int64_t>& targets, const Value& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t t : targets) {
      mail_[std::make_tuple(channel, device, t)].push_back(value);
      ++sent_[std::make_tuple(channel, device, t)];
    }
    ChangedLocked();
  }
  cv_.notify_all();
}

absl::StatusOr<Value> Rendezvous::Receive(int64_t device,
                                          const Instruction* instr,
                                          int64_t channel, int64_t source) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto key = std::make_tuple(channel, source, device);
  bool released = false;
  auto finish = [&](absl::StatusOr<Value> v) -> absl::StatusOr<Value> {
    blocked_at_[device] = -1;
    lock.unlock();
    if (released) AcquireSlot();
    return v;
  };
  auto fail = [&](absl::Status st) -> absl::StatusOr<Value> {
    st = AtInstruction(std::move(st), instr);
    if (error_.ok()) error_ = st;
    failed_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
    return finish(st);
  };
  while (true) {
    if (!error_.ok()) {
      return finish(absl::AbortedError(absl::StrCat(
          "device ", device, " stopped at ", DescribeCollective(instr),
          " because the run failed: ", error_.message())));
    }
    auto it = mail_.find(key);
    if (it != mail_.end() && !it->second.empty()) {
      Value v = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) mail_.erase(it);
      return finish(std::move(v));
    }
    const std::string what = absl::StrCat("at ", DescribeCollective(instr),
                                          " for data from device ", source);
    if (source < 0 || source >= num_devices_) {
      return fail(Invalid(absl::StrCat("device ", device, " ", what,
                                       ", which does not exist")));
    }
    if (finished_[source]) {
      auto s = sent_.find(key);
      return fail(absl::FailedPreconditionError(absl::StrCat(
          "deadlock: device ", device, " waits ", what,
          ", which finished "
          "after sending it ",
          s == sent_.end() ? 0 : s->second, " values on channel ", channel)));
    }
    if (absl::Status st = BlockedLocked(device, instr, "waits " + what);
        !st.ok()) {
      return fail(st);
    }
    if (!released) {
      released = true;
      ReleaseSlot();
    }
    cv_.wait(lock);
  }
}

void Rendezvous::AcquireSlot() {
  if (max_running_ <= 0) return;
  std::unique_lock<std::mutex> lock(slot_mu_);
  slot_cv_.wait(lock, [&] { return running_ < max_running_; });
  ++running_;
}

void Rendezvous::ReleaseSlot() {
  if (max_running_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(slot_mu_);
    --running_;
  }
  slot_cv_.notify_one();
}

void Rendezvous::Start(int64_t device) { AcquireSlot(); }

void Rendezvous::Finish(int64_t device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (device >= 0 && device < num_devices_) finished_[device] = true;
    ChangedLocked();
  }
  cv_.notify_all();
  ReleaseSlot();
}

void Rendezvous::Fail(int64_t device, const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (device >= 0 && device < num_devices_) finished_[device] = true;
    if (error_.ok()) error_ = status;
    failed_.store(true, std::memory_order_relaxed);
    ChangedLocked();
  }
  cv_.notify_all();
  if (device >= 0) ReleaseSlot();
}

absl::Status Rendezvous::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

int64_t Rendezvous::collectives_executed(int64_t device) const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_[device];
}

absl::StatusOr<std::vector<std::vector<Value>>> Rendezvous::Exchange(
    int64_t device, const Instruction* instr,
    const std::vector<int64_t>& participants, std::vector<Value> inputs) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t k = next_seq_[device]++;
  last_instr_[device] = instr;
  {
    Arrival& a = arrivals_[device][k];
    a.instr = instr;
    a.participants = participants;
    a.inputs = std::move(inputs);
    a.pending_reads = static_cast<int64_t>(participants.size());
  }
  ChangedLocked();
  cv_.notify_all();
  bool released = false;
  auto fail = [&](absl::Status st) -> absl::Status {
    st = AtInstruction(std::move(st), instr);
    if (error_.ok()) error_ = st;
    failed_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
    return st;
  };
  while (true) {
    if (!error_.ok()) {
      absl::Status st = absl::AbortedError(absl::StrCat(
          "device ", device, " stopped at ", DescribeCollective(instr),
          " because the run failed: ", error_.message()));
      lock.unlock();
      if (released) AcquireSlot();
      return st;
    }
    bool ready = true;
    absl::Status problem;
    for (int64_t p : participants) {
      if (p == device) continue;
      auto it = arrivals_[p].find(k);
      if (it != arrivals_[p].end()) {
        const Arrival& other = it->second;
        if (other.instr != instr || other.participants != participants) {
          problem = absl::FailedPreconditionError(absl::StrCat(
              "collective mismatch at collective #", k, ": device ", device,
              " executes ", DescribeCollective(instr), " with group ",
              GroupString(participants), ", device ", p, " executes ",
              DescribeCollective(other.instr), " with group ",
              GroupString(other.participants)));
          break;
        }
        continue;
      }
      ready = false;
      if (finished_[p]) {
        problem = absl::FailedPreconditionError(absl::StrCat(
            "deadlock: device ", device, " waits at collective #", k, ", ",
            DescribeCollective(instr), ", for device ", p,
            ", which finished after ", next_seq_[p],
            " collectives (last: ", DescribeCollective(last_instr_[p]), ")"));
        break;
      }
    }
    if (!problem.ok()) {
      absl::Status st = fail(problem);
      blocked_at_[device] = -1;
      lock.unlock();
      if (released) AcquireSlot();
      return st;
    }
    if (ready) break;
    if (absl::Status st =
            BlockedLocked(device, instr,
                          absl::StrCat("waits at collective #", k, ", ",
                                       DescribeCollective(instr)));
        !st.ok()) {
      st = fail(st);
      blocked_at_[device] = -1;
      lock.unlock();
      if (released) AcquireSlot();
      return st;
    }
    if (!released) {
      released = true;
      ReleaseSlot();
    }
    cv_.wait(lock);
  }
  blocked_at_[device] = -1;
  std::vector<std::vector<Value>> result;
  result.reserve(participants.size());
  for (int64_t p : participants) {
    auto it = arrivals_[p].find(k);
    result.push_back(it->second.inputs);
    if (--it->second.pending_reads == 0) arrivals_[p].erase(it);
  }
  lock.unlock();
  if (released) AcquireSlot();
  return result;
}

}  // namespace hloverlap::interp
