// Simulated devices and collectives for the reference interpreter.
//
// Devices. A run has replica_count x num_partitions devices; device d is
// replica d / num_partitions, partition d % num_partitions (XLA's default
// device assignment; the global device id is d).
//
// Groups. Which devices take part in a collective follows XLA's
// CollectiveOpGroupMode (collective_ops_utils.cc):
//   no channel_id                          -> cross-replica: replica_groups
//       list replica ids; a group is those replicas of my partition;
//   channel_id, all-reduce/all-gather/reduce-scatter with
//       use_global_device_ids=false       -> cross-replica-and-partition:
//       replica_groups list replica ids; a group is those replicas x every
//       partition (ordered replica-major);
//   channel_id, all-to-all, collective-permute, collective-broadcast
//                                          -> cross-partition: replica_groups
//       (or source_target_pairs) list partition ids within my replica;
//   use_global_device_ids=true             -> flattened ids: replica_groups
//       list global device ids.
// An empty replica_groups is one group of every replica/partition/device.
// All replica group formats (explicit, iota, mesh) are expanded with
// ReplicaGroups::Groups(). The rank of a device in its group is its
// position in the group's list; gathers concatenate in rank order and
// reductions fold in rank order (acc = in[0]; acc = f(acc, in[1]); ...).
//
// Devices meet in a collective through a Rendezvous (interp/rendezvous.h),
// which also carries send / recv.
#ifndef HLOVERLAP_INTERP_COLLECTIVES_H_
#define HLOVERLAP_INTERP_COLLECTIVES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"
#include "interp/reduce.h"
#include "interp/value.h"

namespace hloverlap::interp {

struct DeviceTopology {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  // Set when the count was read from the ids the module's collectives name
  // (ResolveTopology): says from where.
  std::string derived_from;
  int64_t num_devices() const { return replica_count * num_partitions; }
  int64_t replica_of(int64_t device) const { return device / num_partitions; }
  int64_t partition_of(int64_t device) const { return device % num_partitions; }
  int64_t device_id(int64_t replica, int64_t partition) const {
    return replica * num_partitions + partition;
  }
};

enum class CollectiveGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};
std::string_view CollectiveGroupModeName(CollectiveGroupMode mode);

// The group mode of a collective (sync or async start) instruction.
absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(
    const Instruction& instr);

// The ordered devices of the group `device` belongs to.
absl::StatusOr<std::vector<int64_t>> GetParticipants(
    const Instruction& instr, const DeviceTopology& topology, int64_t device);

// collective-permute: every device of `domain` (my replica's partitions, or
// my partition's replicas without channel_id) rendezvous; `source` is the
// index in `domain` of the device whose operand I receive, or -1 (zeros).
struct PermutePlan {
  std::vector<int64_t> domain;
  int64_t source = -1;
};
absl::StatusOr<PermutePlan> GetPermutePlan(const Instruction& instr,
                                           const DeviceTopology& topology,
                                           int64_t device);

// The pairs of a send or recv: its `_xla_send_recv_source_target_pairs`
// frontend attribute, checked against `n` ids (partitions) like
// collective-permute's source_target_pairs. An error without the attribute
// or for a host transfer.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GetSendRecvPairs(
    const Instruction& instr, int64_t n);

// The largest device id (+1) a module's collectives name, by id space:
// what the devices must number for the ids to exist.
struct NamedIds {
  int64_t partitions = 0;  // cross-partition ids (permute / send / recv)
  int64_t replicas = 0;    // cross-replica ids
  int64_t devices = 0;     // flattened ids
  const Instruction* partitions_at = nullptr;  // an instruction naming them
  const Instruction* replicas_at = nullptr;
  const Instruction* devices_at = nullptr;
};
NamedIds MaxNamedIds(const Instruction& instr);

// "all-gather.2 (computation body, channel_id=5)".
std::string DescribeCollective(const Instruction* instr);
// A group as messages write it: "{0,1,2}".
std::string GroupString(const std::vector<int64_t>& group);

// --- Data movement (inputs in group rank order)
// -------------------------------

absl::StatusOr<Value> AllGatherData(absl::Span<const Value> parts,
                                    int64_t dimension);
absl::StatusOr<Value> AllReduceData(absl::Span<const Value> parts,
                                    const Reducer& reducer);
// The `rank`-th of group-size chunks along `dimension` of the reduction.
absl::StatusOr<Value> ReduceScatterData(absl::Span<const Value> parts,
                                        int64_t dimension, int64_t rank,
                                        const Reducer& reducer);
// Array all-to-all: chunk `rank` of every part along `dimension`,
// concatenated along `dimension` in rank order.
absl::StatusOr<Value> AllToAllData(absl::Span<const Value> parts,
                                   int64_t dimension, int64_t rank);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_COLLECTIVES_H_
