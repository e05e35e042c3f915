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
  "actors/engine=^messages/,^gpu/[^/]+$,^gpu/model/,^grammar/,^actors/telemetry/trace\\.hpp$"
  "actors/scheduler=^messages/,^cache/,^actors/engine/engine_handle\\.hpp$,^actors/disk/disk_handle\\.hpp$,^actors/telemetry/telemetry_handle\\.hpp$,^actors/telemetry/trace\\.hpp$"
  "actors/admission/http="
  "actors/admission=^base/,^actors/admission/http/,^messages/,^text/,^grammar/,^actors/config/,^actors/scheduler/scheduler_handle\\.hpp$,^actors/telemetry/telemetry_handle\\.hpp$,^actors/telemetry/trace\\.hpp$,^actors/telemetry/scrape_merge\\.hpp$"
  # The disk actor moves the KV disk tier's bytes between host memory and the file.
  "actors/disk=^messages/,^storage/,^actors/telemetry/trace\\.hpp$"
  "actors/cluster=^messages/,^cluster/,^cache/,^actors/scheduler/scheduler_handle\\.hpp$,^actors/telemetry/(telemetry_handle|scrape_merge)\\.hpp$"
  "actors/runtime=^actors/(cluster|config|disk|engine|scheduler|telemetry)/,^messages/,^gpu/,^storage/,^cache/"
  "actors/cli=.")
