"""agentckpt: the Python client of the agentckpt sidecar (docs/sdk.md). Standard library only."""

from .client import AgentCkptClient, EffectCall, GateHandle, args_sha256
from .errors import AgentCkptError, OutcomeUnknownError, RecordedFailureError

__all__ = ["AgentCkptClient", "AgentCkptError", "EffectCall", "GateHandle",
           "OutcomeUnknownError", "RecordedFailureError", "args_sha256"]
