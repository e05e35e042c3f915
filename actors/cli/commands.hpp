#pragma once
// The courier subcommands. Each returns the process exit status.
namespace courier::cli {

int run_generate(int argc, char** argv);       // courier generate ...
int run_bench_forward(int argc, char** argv);  // courier bench-forward ...

}  // namespace courier::cli
