// A scheduler file that starts a thread of its own: refused (not a listed cross-thread
// structure). Asking the machine's thread count is not one.
#include <thread>

unsigned cores() { return std::thread::hardware_concurrency(); }
void start() { std::thread t([] {}); t.join(); }
