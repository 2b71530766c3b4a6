# The Python client's runtime (server/clients/python.ts): the errors and the HTTP client every generated
# labdeck_client.py carries, standard library only. A real file, so Python reads and checks it as it is
# (python3 -m py_compile); the generator copies everything below the marker line into each client, after
# the imports above (which the client has too).
from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

DEFAULT_BASE_URL = "http://127.0.0.1:8000/app"

# ---- copied into every generated client from the next line ----
class LabError(Exception):
    """An error answered by labdeck: HTTP status, error code, message and details (which field, why).

    task_id is the record of a failed instrument call (a 502: the instrument raised; a 503 in-doubt: its
    host went away mid-call), None otherwise: look it up with lab.call_record(task_id). data holds every
    top-level field of the error answer besides "error" (task_id, instrument, method, in_doubt, retry_after).
    A status of 0 means labdeck could not be reached.
    """

    def __init__(self, status: int, code: str, message: str, details: Any = None, data: Optional[Dict[str, Any]] = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.data = dict(data or {})
        self.task_id = self.data.get("task_id")
        text = "%s %s: %s" % (status, code, message)
        super().__init__(text if self.task_id is None else "%s (task %s)" % (text, self.task_id))


class RunError(Exception):
    """A run that did not complete, raised by Lab.wait_for_run.

    status is the run record's: "failed", "stopped", "aborted" or "interrupted" (labdeck stopped during
    the run; the task waits for an operator); or "step_failed" while a step has failed and the run waits
    for an operator to retry it, skip it or abort. error says why (the record's error, or the failed
    step's), record is the run record (None when the task never started), failed_step the step
    ({"phase", "iteration", "path", "error"}) for "step_failed".
    """

    def __init__(self, task_id: int, status: str, error: Optional[str], record: Optional[Dict[str, Any]] = None, failed_step: Optional[Dict[str, Any]] = None) -> None:
        self.task_id = task_id
        self.run_id = record.get("id") if record else None
        self.status = status
        self.error = error
        self.record = record
        self.failed_step = failed_step
        where = "task %s" % task_id if self.run_id is None else "run %s (task %s)" % (self.run_id, task_id)
        super().__init__("%s %s%s" % (where, status.replace("_", " "), ": %s" % error if error else ""))


class WaitTimeout(TimeoutError):
    """Lab.wait_for_run gave up after its timeout. The run goes on; state is the task's last known state."""

    def __init__(self, task_id: int, timeout: float, state: str) -> None:
        super().__init__("task %s did not end within %s s (it is %s); the run goes on" % (task_id, timeout, state))
        self.task_id = task_id
        self.timeout = timeout
        self.state = state


def _fields(values: Dict[str, Any]) -> Dict[str, Any]:
    """A request body: the fields given (None: left out, so labdeck's default applies)."""
    return {k: v for k, v in values.items() if v is not None}


class _Client:
    def __init__(self, base_url: str, token: Optional[str], timeout: Optional[float]) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, Any]] = None) -> Any:
        """Send one request (a JSON body when given) and return the JSON answer; raise LabError for an error."""
        url = self.base_url + path
        query = {k: v for k, v in (query or {}).items() if v is not None}
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            raw = e.read().decode("utf-8", "replace")
            try:
                answer = json.loads(raw)
                error = answer["error"]
                code, message, details = error.get("code", "http_error"), error.get("message", raw), error.get("details")
                extra = {k: v for k, v in answer.items() if k != "error"}
            except (ValueError, KeyError, TypeError, AttributeError):
                code, message, details, extra = "http_error", raw.strip() or str(e.reason), None, {}
            raise LabError(e.code, code, message, details, extra) from None
        except urllib.error.URLError as e:
            raise LabError(0, "unreachable", "cannot reach %s: %s" % (url, e.reason)) from None
        return json.loads(text) if text else None

    def call(self, instrument: str, method: str, args: Dict[str, Any], drop_if_none: tuple = ()) -> Any:
        args = {k: v for k, v in args.items() if not (v is None and k in drop_if_none)}
        payload = self.request("POST", "/instruments/" + urllib.parse.quote(instrument, safe=""), {"method": method, "args": args})
        return payload.get("output") if isinstance(payload, dict) else payload
