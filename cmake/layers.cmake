# Which project headers each folder's code may include (cmake/check_layers.cmake enforces it in
# every build). A file may always include the files of its own folder; anything else it includes
# must match one of its folder's patterns (CMake regexes over the include path). Every folder
# under the layered trees needs a line here: a new folder fails the check until it has one.
# Folders not layered: actors/cli and actors/main.cpp (the composition root), tools/, bench/,
# tests/.
set(courier_layered_trees base messages cache cluster storage grammar text gpu actors)
set(courier_layers
  # base/: what every layer may use; it uses nothing of the project.
  "base="
  "messages="
  "cache="
  "cluster=^cache/"
  "storage=^base/"
  "grammar=^base/"
  "text/tokenizer=^base/"
  "text/jinja=^base/"
  "text/output_parsers=^base/"
  # gpu/ holds the device interface; its backends and the model see only that, never each other.
  "gpu="
  "gpu/sim=^gpu/[^/]+$"
  "gpu/model=^gpu/[^/]+$,^base/"
  "gpu/cuda=^gpu/[^/]+$,^gpu/cuda/kernels/"
  "gpu/cuda/kernels=^gpu/[^/]+$"
  # The CUDA emulator: std only, nothing of the project (tests run courier's CUDA code on it).
  "gpu/cuda_emu="
  # Its cuBLASLt and NCCL: on the emulator's runtime, as NVIDIA's are on theirs.
  "gpu/cuda_emu/libs=^gpu/cuda_emu/[^/]+$"
  "actors=^actors/cli/"
  "actors/config="
  "actors/telemetry=^messages/,^cache/cache_events\\.hpp$"
  # The engine drives the model; callers of actors see only their typed handles.
  "actors/engine=^base/,^messages/,^gpu/[^/]+$,^gpu/model/,^grammar/,^actors/telemetry/trace\\.hpp$"
  "actors/scheduler=^messages/,^cache/,^actors/engine/engine_handle\\.hpp$,^actors/disk/disk_handle\\.hpp$,^actors/telemetry/telemetry_handle\\.hpp$,^actors/telemetry/trace\\.hpp$"
  "actors/admission/http="
  "actors/admission=^base/,^actors/admission/http/,^messages/,^text/,^grammar/,^actors/config/,^actors/scheduler/scheduler_handle\\.hpp$,^actors/telemetry/telemetry_handle\\.hpp$,^actors/telemetry/trace\\.hpp$,^actors/telemetry/scrape_merge\\.hpp$"
  # The disk actor moves the KV disk tier's bytes between host memory and the file.
  "actors/disk=^base/,^messages/,^storage/,^actors/telemetry/trace\\.hpp$"
  "actors/cluster=^messages/,^cluster/,^cache/,^actors/scheduler/scheduler_handle\\.hpp$,^actors/telemetry/(telemetry_handle|scrape_merge)\\.hpp$"
  "actors/runtime=^actors/(cluster|config|disk|engine|scheduler|telemetry)/,^messages/,^gpu/,^storage/,^cache/"
  "actors/cli=.")

# The only files that may use std::mutex, std::thread, std::atomic or std::condition_variable:
# each is a cross-thread structure that docs/ARCHITECTURE.md ("Cross-thread structures") names.
# Anything else runs on one actor's thread or on a job lane (base/job_lane); a new structure
# fails the build until it is listed here and there.
set(courier_concurrency_files
  "^base/job_lane\\.(hpp|cpp)$"                          # lanes: the one way off the actors
  "^actors/admission/admission_context\\.hpp$"           # the adapter list, swapped atomically
  "^actors/admission/grammar_registry\\.(hpp|cpp)$"      # compiled grammars, shared by lanes
  "^actors/admission/response_store\\.(hpp|cpp)$"        # kept responses: lanes and requests
  "^actors/admission/http/(connection|exchange)\\.hpp$"  # I/O thread <-> request actors state
  "^actors/admission/http/(io_gate\\.(hpp|cpp)|server\\.cpp)$"  # the HTTP I/O thread, its gate
  "^actors/cli/serve\\.cpp$"                             # the signal thread's stop
  "^actors/cluster/replica_gate\\.(hpp|cpp)$"            # the wire grammars, set once
  "^actors/disk/disk_actor\\.cpp$"                       # a batch's next op, shared by its jobs
  "^actors/engine/lora_loader\\.cpp$"                    # reads never waited for (detached)
  "^actors/telemetry/kv_event_publisher\\.(hpp|cpp)$"    # the KV-event publisher's thread
  "^actors/telemetry/trace\\.(hpp|cpp)$"                 # per-thread lock-free span queues
  "^gpu/cuda/host_staging\\.(hpp|cpp)$"                  # pinned staging blocks
  "^gpu/cuda/kernels/attention\\.cu$"                    # kernel attributes, once per device
  "^gpu/cuda/nccl_collectives\\.cpp$"                    # NCCL communicators' setup
  "^gpu/cuda_emu/"                                       # the CUDA emulator: streams as threads
  "^gpu/model/(tp_peers\\.(hpp|cpp)|model_group\\.cpp)$"  # tensor-parallel ranks' threads
  "^gpu/sim/(copy_engine|host_collectives|sim_device|thread_pool)\\.(hpp|cpp)$"  # the sim's threads
  "^grammar/token_mask\\.(hpp|cpp)$"                     # a grammar's mask cache, shared
  "^text/tokenizer/bpe_cache\\.hpp$")                    # lock-free per-word cache
