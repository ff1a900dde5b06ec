"""agentckpt: the Python client of the agentckpt sidecar (docs/sdk.md). Standard library only."""

from .aio import AsyncAgentCkptClient, AsyncGateHandle
from .client import AgentCkptClient, EffectCall, GateHandle, args_sha256
from .errors import AgentCkptError, OutcomeUnknownError, RecordedFailureError

__all__ = ["AgentCkptClient", "AgentCkptError", "AsyncAgentCkptClient", "AsyncGateHandle",
           "EffectCall", "GateHandle", "OutcomeUnknownError", "RecordedFailureError",
           "args_sha256"]
