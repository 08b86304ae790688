// Chrome trace export (see the header).
#include "sim/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nlohmann/json.hpp"

namespace hloverlap {
namespace {

// Overlaps shorter than this are rounding (a kernel ending where the
// collective starts, at times summed in different orders), not overlap.
constexpr double kMinOverlapUs = 1e-6;

}  // namespace

std::string ChromeTraceJson(const SimResult& r) {
  // Track ids (threads of process 1).
  auto tid = [](SimEvent::Track t) {
    switch (t) {
      case SimEvent::Track::kCompute:
        return 1;
      case SimEvent::Track::kCollective:
        return 2;
      case SimEvent::Track::kAsyncCompute:
        return 3;
    }
    return 1;
  };
  nlohmann::json events = nlohmann::json::array();
  auto meta = [&](int t, const char* name, const char* value, int sort) {
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", t},
                      {"name", name},
                      {"args", {{"name", value}}}});
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", t},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", sort}}}});
  };
  events.push_back({{"ph", "M"},
                    {"pid", 1},
                    {"name", "process_name"},
                    {"args", {{"name", "hloverlap sim (" + r.gpu + ")"}}}});
  meta(1, "thread_name", "compute stream", 0);
  meta(2, "thread_name", "collective stream", 1);
  meta(3, "thread_name", "async compute stream", 2);

  // Compute kernels in start order, to find what overlaps a collective.
  std::vector<const SimEvent*> kernels;
  for (const SimEvent& e : r.events) {
    if (e.track == SimEvent::Track::kCompute && e.category == "kernel") {
      kernels.push_back(&e);
    }
  }
  int64_t flow_id = 0;
  for (const SimEvent& e : r.events) {
    nlohmann::json ev = {{"ph", "X"},
                         {"pid", 1},
                         {"tid", tid(e.track)},
                         {"name", e.name},
                         {"cat", e.category},
                         {"ts", e.start_us},
                         {"dur", std::max(0.0, e.duration_us)}};
    if (e.track != SimEvent::Track::kCollective) {
      if (e.category == "kernel") {
        ev["args"] = {{"flops", e.flops}, {"bytes", e.bytes}};
        if (e.contention_us > 0) ev["args"]["contention_us"] = e.contention_us;
      }
      events.push_back(std::move(ev));
      continue;
    }
    // Compute overlapping [start, end): count, time and the first names.
    double s = e.start_us;
    double end = e.start_us + e.duration_us;
    auto first = std::lower_bound(kernels.begin(), kernels.end(), s,
                                  [](const SimEvent* k, double v) {
                                    return k->start_us + k->duration_us <= v;
                                  });
    double overlapped = 0;
    int64_t n = 0;
    nlohmann::json names = nlohmann::json::array();
    for (auto it = first; it != kernels.end() && (*it)->start_us < end; ++it) {
      double a = std::max(s, (*it)->start_us);
      double b = std::min(end, (*it)->start_us + (*it)->duration_us);
      if (b - a <= kMinOverlapUs) continue;
      overlapped += b - a;
      if (n < 8) names.push_back((*it)->name);
      ++n;
    }
    nlohmann::json args = {{"overlapped_compute_us", overlapped},
                           {"overlapped_kernels", n},
                           {"overlapped", names}};
    if (e.collective >= 0 &&
        e.collective < static_cast<int64_t>(r.collectives.size())) {
      const SimCollective& c = r.collectives[e.collective];
      args["kind"] = c.kind;
      args["bytes"] = c.bytes;
      args["loop_path"] = c.loop_path;
      args["source"] = c.source;
    }
    args["exposed_us"] = e.exposed_us;
    ev["args"] = std::move(args);
    events.push_back(std::move(ev));
    // Flows: issue point (compute) -> collective, collective -> done.
    if (e.issue_us >= 0) {
      int64_t id = ++flow_id;
      events.push_back({{"ph", "s"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 1},
                        {"name", "issue"},
                        {"cat", "flow"},
                        {"ts", e.issue_us},
                        {"bp", "e"}});
      events.push_back({{"ph", "f"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 2},
                        {"name", "issue"},
                        {"cat", "flow"},
                        {"ts", s},
                        {"bp", "e"}});
    }
    if (e.done_us >= 0) {
      int64_t id = ++flow_id;
      events.push_back({{"ph", "s"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 2},
                        {"name", "done"},
                        {"cat", "flow"},
                        {"ts", std::max(s, end - 1e-3)},
                        {"bp", "e"}});
      events.push_back({{"ph", "f"},
                        {"id", id},
                        {"pid", 1},
                        {"tid", 1},
                        {"name", "done"},
                        {"cat", "flow"},
                        {"ts", e.done_us},
                        {"bp", "e"}});
    }
  }
  nlohmann::json j = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ms"},
      {"otherData",
       {{"step_time_ms", r.step_time_us / 1000},
        {"exposed_communication_ms", r.exposed_communication_us / 1000}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace hloverlap
