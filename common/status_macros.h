// RETURN_IF_ERROR(expr): evaluates a Status expression and returns it from the enclosing
// function when it is not ok.
// ASSIGN_OR_RETURN(lhs, expr): evaluates a StatusOr<T> expression; returns its status when not
// ok, otherwise moves the value into `lhs` (which may be a declaration, e.g. `auto x`).
#pragma once

#include "common/status.h"

#define AGENTCKPT_CONCAT_INNER(a, b) a##b
#define AGENTCKPT_CONCAT(a, b) AGENTCKPT_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::agentckpt::Status _agentckpt_status = (expr);    \
    if (!_agentckpt_status.ok()) return _agentckpt_status; \
  } while (0)

#define AGENTCKPT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  AGENTCKPT_ASSIGN_OR_RETURN_IMPL(AGENTCKPT_CONCAT(_agentckpt_statusor_, __LINE__), lhs, expr)
