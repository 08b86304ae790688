// Generated scaling modules (see the header).
#include "sim/generated_modules.h"

#include "absl/strings/str_cat.h"

namespace hloverlap {

std::string GenerateChain(int n) {
  const std::string f = "f32[256,256]{1,0}";
  const std::string g = "f32[512,256]{1,0}";
  std::string out = absl::StrCat(
      "HloModule chain, is_scheduled=true, num_partitions=2\n\n",
      "ENTRY %main (p: f32[256,256]) -> f32[256,256] {\n", "  %p = ", f,
      " parameter(0)\n", "  %v0 = ", f, " exponential(%p)\n");
  int count = 2;
  int v = 0;        // last value of the chain
  int open = -1;    // all-gather in flight (its number), -1: none
  int open_at = 0;  // instruction count when it was issued
  while (count < n - 1) {
    if (open < 0 && count % 64 == 0 && count + 20 < n) {
      open = count;
      open_at = count;
      absl::StrAppend(&out, "  %ag", open, " = (", f, ", ", g,
                      ") all-gather-start(%v0), channel_id=", count,
                      ", replica_groups={{0,1}}, use_global_device_ids=true, "
                      "dimensions={0}\n");
      ++count;
      continue;
    }
    if (open >= 0 && count - open_at >= 16) {
      absl::StrAppend(&out, "  %agd", open, " = ", g, " all-gather-done(%ag",
                      open, ")\n  %s", open, " = ", f, " slice(%agd", open,
                      "), slice={[0:256], [0:256]}\n  %v", v + 1, " = ", f,
                      " add(%v", v, ", %s", open, ")\n");
      count += 3;
      ++v;
      open = -1;
      continue;
    }
    absl::StrAppend(&out, "  %v", v + 1, " = ", f, " add(%v", v, ", %v0)\n");
    ++count;
    ++v;
  }
  absl::StrAppend(&out, "  ROOT %r = ", f, " negate(%v", v, ")\n}\n");
  return out;
}

std::string GenerateNest(int depth, int trips) {
  const std::string f = "f32[256,256]{1,0}";
  const std::string g = "f32[512,256]{1,0}";
  const std::string state = "(s32[], f32[256,256])";
  const std::string state_l = "(s32[], f32[256,256]{1,0})";
  std::string out = "HloModule nest, is_scheduled=true, num_partitions=2\n\n";
  for (int k = depth; k >= 1; --k) {
    absl::StrAppend(&out, "%c", k, " (p: ", state, ") -> pred[] {\n",
                    "  %p = ", state_l, " parameter(0)\n",
                    "  %i = s32[] get-tuple-element(%p), index=0\n",
                    "  %n = s32[] constant(", trips, ")\n",
                    "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n");
    absl::StrAppend(&out, "%b", k, " (p: ", state, ") -> ", state, " {\n",
                    "  %p = ", state_l, " parameter(0)\n",
                    "  %i = s32[] get-tuple-element(%p), index=0\n",
                    "  %x = ", f, " get-tuple-element(%p), index=1\n",
                    "  %ags = (", f, ", ", g,
                    ") all-gather-start(%x), channel_id=", k,
                    ", replica_groups={{0,1}}, use_global_device_ids=true, "
                    "dimensions={0}\n",
                    "  %y = ", f, " exponential(%x)\n");
    std::string z = "%y";
    if (k < depth) {
      absl::StrAppend(
          &out, "  %zero = s32[] constant(0)\n", "  %init = ", state_l,
          " tuple(%zero, %y)\n", "  %w = ", state_l,
          " while(%init), condition=%c", k + 1, ", body=%b", k + 1,
          ", backend_config={\"known_trip_count\":{\"n\":\"", trips, "\"}}\n",
          "  %z = ", f, " get-tuple-element(%w), index=1\n");
      z = "%z";
    }
    absl::StrAppend(&out, "  %agd = ", g, " all-gather-done(%ags)\n",
                    "  %s = ", f, " slice(%agd), slice={[0:256], [0:256]}\n",
                    "  %o = ", f, " add(", z, ", %s)\n",
                    "  %one = s32[] constant(1)\n",
                    "  %next = s32[] add(%i, %one)\n", "  ROOT %t = ", state_l,
                    " tuple(%next, %o)\n}\n\n");
  }
  absl::StrAppend(
      &out, "ENTRY %main (x: f32[256,256]) -> f32[256,256] {\n", "  %x = ", f,
      " parameter(0)\n", "  %zero = s32[] constant(0)\n", "  %init = ", state_l,
      " tuple(%zero, %x)\n", "  %w = ", state_l,
      " while(%init), condition=%c1, body=%b1, ",
      "backend_config={\"known_trip_count\":{\"n\":\"", trips, "\"}}\n",
      "  ROOT %out = ", f, " get-tuple-element(%w), index=1\n}\n");
  return out;
}

}  // namespace hloverlap
