// The meeting point of the reference interpreter's devices (one thread
// each): collectives exchange their inputs here, send / recv pass values
// here, and a run's first failure stops every device. Which devices take
// part in a collective, and what it computes from their inputs, is
// interp/collectives.h.
//
// Collectives. Every device counts the collectives it executes; the n-th
// collective of device d meets the n-th collective of each device in its
// group. The devices must agree on the instruction and the group, else the
// run fails with a "collective mismatch" error naming both instructions. A
// device that finishes (or fails) while another waits for it ends the run
// with a "deadlock" error naming the waiting instruction. Nothing hangs.
//
// Point to point. send / recv (paired by channel_id, as XLA's GPU backend
// pairs them) move data along the `_xla_send_recv_source_target_pairs`
// frontend attribute ("{{0,1},{1,2}}"): ids of partitions within my
// replica (send and recv always carry a channel_id: cross-partition mode,
// as for collective-permute). A send deposits its operand, when it runs,
// for each of its targets; a recv-done takes the oldest value its source
// sent on the channel, waiting for it (first in, first out per channel,
// source and target), or zeros when no pair names the device as a target.
// Sends never wait. When every device that has not finished waits (in a
// collective or a recv-done) and none can go on, the run fails with a
// "deadlock" error naming what each device waits for.
#ifndef HLOVERLAP_INTERP_RENDEZVOUS_H_
#define HLOVERLAP_INTERP_RENDEZVOUS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "interp/value.h"

namespace hloverlap::interp {

// Meeting point of the devices of one run (see the file comment). Also
// limits how many devices compute at once (a device that waits in a
// collective does not count).
class Rendezvous {
 public:
  // max_running <= 0: no limit.
  Rendezvous(int64_t num_devices, int64_t max_running);

  // Called by a device's thread before it starts computing.
  void Start(int64_t device);
  // Contributes `inputs` for the next collective of `device` and blocks
  // until every participant contributed; returns every participant's
  // inputs in `participants` order.
  absl::StatusOr<std::vector<std::vector<Value>>> Exchange(
      int64_t device, const Instruction* instr,
      const std::vector<int64_t>& participants, std::vector<Value> inputs);
  // Point to point (file comment): `device` sends `value` to each of
  // `targets` on `channel`; never waits.
  void Send(int64_t device, int64_t channel,
            const std::vector<int64_t>& targets, const Value& value);
  // The oldest value `source` sent to `device` on `channel`, waiting for it.
  absl::StatusOr<Value> Receive(int64_t device, const Instruction* instr,
                                int64_t channel, int64_t source);
  // The device's program ended normally.
  void Finish(int64_t device);
  // The device failed with `status`; every waiting device is woken and
  // fails too. The first failure is kept as the run's error.
  void Fail(int64_t device, const absl::Status& status);

  // The first error of the run (OK if none).
  absl::Status error() const;
  // Whether the run failed: a device still computing polls this (cheaply)
  // and stops, so a failure or a reached limit ends every device.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  int64_t collectives_executed(int64_t device) const;

 private:
  struct Arrival {
    const Instruction* instr = nullptr;
    std::vector<int64_t> participants;
    std::vector<Value> inputs;
    int64_t pending_reads = 0;
  };
  void AcquireSlot();
  void ReleaseSlot();
  // Under mu_: `device` found its wait condition false at the current
  // epoch. Returns a deadlock error when every unfinished device did.
  absl::Status BlockedLocked(int64_t device, const Instruction* instr,
                             std::string what);
  // Under mu_: the state changed (an arrival, a send, a finish).
  void ChangedLocked() { ++epoch_; }

  const int64_t num_devices_;
  const int64_t max_running_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> next_seq_;
  std::vector<bool> finished_;
  std::vector<const Instruction*> last_instr_;
  std::vector<std::map<int64_t, Arrival>> arrivals_;
  // Point to point: values in flight and the number sent so far, by
  // (channel, source, target).
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<Value>> mail_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> sent_;
  // Deadlock detection: the epoch counts state changes; blocked_at_[d] is
  // the epoch at which device d last found its wait condition false (-1:
  // not waiting), waiting_for_[d] says for what.
  int64_t epoch_ = 0;
  std::vector<int64_t> blocked_at_;
  std::vector<std::string> waiting_for_;
  absl::Status error_;
  std::atomic<bool> failed_{false};  // !error_.ok(), readable without mu_

  std::mutex slot_mu_;
  std::condition_variable slot_cv_;
  int64_t running_ = 0;
};

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_RENDEZVOUS_H_
