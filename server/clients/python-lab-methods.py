# The Python client's Lab class's own methods (server/clients/python.ts): waiting for a run to end. Their
# names are reserved: an instrument named like one is lab.<name>_. The generator copies the methods of the
# class below (everything after its `class` line) into each client's Lab class, after the route methods
# it generates (runner_status, queue, record, queued_task, ... which these call).
from __future__ import annotations

import time
from typing import Any, Dict, Optional, Tuple, Union

from python_runtime import LabError, RunError, WaitTimeout  # noqa: F401  (in the client: defined above Lab)


class Lab:  # ---- copied into every generated client's Lab class from the next line ----
    def wait_for_run(self, task: Union[int, Dict[str, Any]], timeout: Optional[float] = None, poll: float = 0.5, wait_for_operator: bool = False) -> Dict[str, Any]:
        """Wait until a queued task's run ends, and return its record (see record()).

        Args:
            task: a task id, or what queue_run or start_campaign returned.
            timeout: seconds to wait at most (None: as long as it takes). Then WaitTimeout is raised;
                the run goes on.
            poll: seconds between two looks at the runner.
            wait_for_operator: when a step fails, the run waits for an operator to retry it, skip it or
                abort (in the web app, or with retry(), pause_resume(), abort_next_task()); so does a run
                interrupted by a restart of labdeck. False: raise RunError at once ("step_failed" or
                "interrupted"). True: keep waiting for the operator's decision.

        Returns the record of a run that completed (record["skipped_steps"] counts skipped failed steps).
        Raises RunError (status, error, record) when the run failed, was stopped or aborted.
        """
        task_id = int(task["task_id"] if isinstance(task, dict) else task)
        deadline = None if timeout is None else time.monotonic() + timeout
        state = "unknown"
        while True:
            try:
                record, state = self._look(task_id, wait_for_operator)
                if record is not None:
                    return record
            except LabError as e:
                if e.status != 0:
                    raise
                state = "unreachable"  # labdeck restarting: look again until the timeout
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout(task_id, timeout, state)
            time.sleep(poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic())))

    def _look(self, task_id: int, wait_for_operator: bool) -> Tuple[Optional[Dict[str, Any]], str]:
        """One look at a task: (its record, "done") once its run completed, else (None, its state)."""
        status = self.runner_status()
        # every task the server runs (several with lab serve --parallel N); older servers: the current one only
        running = status.get("running")
        if running is None:
            current = status.get("current_task") or {}
            running = [dict(current, state=status.get("state"), failed_step=status.get("failed_step"))] if current else []
        current = next((t for t in running if t.get("id") == task_id), None)
        if current is not None:
            if current.get("state") == "failed" and not wait_for_operator:
                step = current.get("failed_step") or {}
                record = self.record(current["run_id"]) if current.get("run_id") else None
                raise RunError(task_id, "step_failed", step.get("error"), record, step)
            return None, current.get("state") or "running"
        for t in self.queue().get("tasks", []):
            if t.get("id") == task_id:
                if t.get("status") == "interrupted" and not wait_for_operator:
                    record = self.record(t["run_id"]) if t.get("run_id") else None
                    raise RunError(task_id, "interrupted", record.get("error") if record else None, record)
                return None, t.get("status", "pending")
        # not running, not queued: it has ended
        task = self.queued_task(task_id)
        record = self.record(task["run_id"]) if task.get("run_id") else None
        if record is not None and record.get("status") == "completed":
            return record, "done"
        raise RunError(task_id, record["status"] if record else task.get("status", "failed"), record.get("error") if record else None, record)
