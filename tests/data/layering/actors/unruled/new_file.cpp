// A folder without a layering rule, for tests/CMakeLists.txt.
