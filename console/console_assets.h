// The web console's static files (console/assets/), embedded in the binary at build time:
// console/embed_assets.cmake turns each file into bytes of a generated source, so the console
// needs no file on disk and no network. Immutable: thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace agentckpt {

struct ConsoleAsset {
  const char* path;          // "/index.html", "/assets/app.js", ...
  const char* content_type;  // "text/html; charset=utf-8", ...
  const char* data;
  size_t size;
};

// The asset served at `path`, or null when there is none.
const ConsoleAsset* FindConsoleAsset(const std::string& path);

}  // namespace agentckpt
