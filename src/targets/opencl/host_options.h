// What the machine that runs the `opencl` target offers it besides the
// generic targets::HostOptions: the work-group tuning cache, the queue
// window and command-buffer replay. Like HostOptions, no compiled model
// records them; they change how a run is cached, paced or submitted, never
// its results. A plain struct, with no OpenCL header, so that whoever fills
// it (the CLI, through targets::TargetHostOptions) builds with or without
// OpenCL.
#pragma once

#include <filesystem>

namespace tessel::opencl {

struct OpenClHostOptions {
  // The cache of tuned local sizes (src/tuning), read when a model is
  // prepared if the file exists, and where tuning saves; empty: none.
  std::filesystem::path tune_cache;
  // Tune what the cache lacks when a model is prepared, and save the cache.
  bool tune_online = false;
  // MACE's queue window: wait for the device after every N launches (0: never).
  int queue_window = 0;
  // Record a prepared model's launches once and replay them where the
  // device has cl_khr_command_buffer (ExecutorOptions::replay).
  bool replay = true;
};

}  // namespace tessel::opencl
