"""Typed errors: every non-2xx answer of the sidecar becomes an AgentCkptError with the HTTP
status and the body's error.code and error.field (docs/http-api.md "Errors")."""


class AgentCkptError(Exception):
    """A non-2xx reply. status is 0 (code UNREACHABLE) when the sidecar could not be reached."""

    def __init__(self, status, code, message, field="", body=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field
        self.message = message
        self.body = body

    def __str__(self):
        where = f" (field {self.field})" if self.field else ""
        return f"{self.status} {self.code}: {self.message}{where}"


class OutcomeUnknownError(AgentCkptError):
    """409 OUTCOME_UNKNOWN from begin: the key was begun and never ended. It may or may not
    have taken effect: verify, then reconcile (client.reconcile_tool_call(err.call["callId"], ...)).
    """

    def __init__(self, message, body):
        super().__init__(409, "OUTCOME_UNKNOWN", message, "", body)
        self.call = {k: v for k, v in body.items() if k != "error"}


class RecordedFailureError(Exception):
    """effect(): the key's recorded result is a failure (the call ran before and failed)."""

    def __init__(self, call_id, result):
        super().__init__(f"recorded failure of call {call_id}: {result.get('outputSummary', '')}")
        self.call_id = call_id
        self.result = result


def error_from_reply(status, body, text):
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    code = err.get("code") if isinstance(err.get("code"), str) else f"HTTP_{status}"
    message = err.get("message") if isinstance(err.get("message"), str) else text[:200]
    field = err.get("field") if isinstance(err.get("field"), str) else ""
    if status == 409 and code == "OUTCOME_UNKNOWN" and isinstance(body, dict):
        return OutcomeUnknownError(message, body)
    return AgentCkptError(status, code, message, field, body)
