#pragma once
// The web page at `/` (server.web_ui: a chat playground and a live dashboard), compiled into the
// binary from actors/admission/web/ by cmake/embed_files.cmake: it needs no file, no CDN and no
// network beyond this server at run time.
#include <cstddef>
#include <string_view>

namespace courier::admission {

struct web_asset {
  std::string_view path;          // "/" (index.html) or "/ui/<file>"
  std::string_view content_type;  // from the file's extension
  std::string_view body;
};

// The asset served at `path`, or null.
const web_asset* find_web_asset(std::string_view path);
std::size_t num_web_assets();

}  // namespace courier::admission
