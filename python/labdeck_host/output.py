"""Where a driver's output goes: during a call, its prints and log lines become `event` messages of that
call; in the console they are collected for the answer; anywhere else they go to the host's stderr (the
runtime writes it to its log). `sys.stdout`, `sys.stderr` and logging are routed here by channel.py.
"""
import contextvars
import io
import logging
import os
import threading

MAX_EVENT_LINES = 2000  # per call; more is dropped with one notice
MAX_LINE = 8000

_sink = contextvars.ContextVar("labdeck_sink", default=None)


class StderrSink:
    """Outside any call: text goes to the host's stderr (the server log)."""

    def write(self, stream, text):
        _write_fd(2, text)

    def log(self, level, text):
        _write_fd(2, "%s %s\n" % (level.upper(), text))

    def close(self):
        pass


def _write_fd(fd, text):
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass


class CallSink:
    """During a call: whole lines become `event` messages of that call (partial lines wait for a newline)."""

    def __init__(self, channel, call_id):
        self.channel = channel
        self.call_id = call_id
        self.partial = {}
        self.lines = 0
        self.lock = threading.Lock()

    def _event(self, kind, text, level=None):
        with self.lock:
            self.lines += 1
            if self.lines > MAX_EVENT_LINES:
                if self.lines == MAX_EVENT_LINES + 1:
                    text, kind, level = "[more output dropped: over %d lines in one call]" % MAX_EVENT_LINES, "log", "warning"
                else:
                    return
        msg = {"type": "event", "call": self.call_id, "kind": kind, "text": text[:MAX_LINE]}
        if level:
            msg["level"] = level
        self.channel.send(msg)

    def write(self, stream, text):
        buf = self.partial.get(stream, "") + text
        *lines, rest = buf.split("\n")
        self.partial[stream] = rest
        for line in lines:
            self._event("output", line if stream == "stdout" else "[stderr] " + line)

    def log(self, level, text):
        self._event("log", text, level)

    def close(self):
        for stream, rest in self.partial.items():
            if rest:
                self._event("output", rest if stream == "stdout" else "[stderr] " + rest)
        self.partial = {}


class BufferSink:
    """In the console: output is collected and sent back with the answer."""

    def __init__(self):
        self.parts = []

    def write(self, stream, text):
        self.parts.append(text)

    def log(self, level, text):
        self.parts.append("%s %s\n" % (level.upper(), text))

    def close(self):
        pass

    def text(self):
        return "".join(self.parts)


_stderr_sink = StderrSink()


class RoutedStream(io.TextIOBase):
    """sys.stdout / sys.stderr: writes go to the sink of the current call (or console run)."""

    def __init__(self, name):
        self.name = name

    def write(self, text):
        if not isinstance(text, str):
            text = str(text)
        (_sink.get() or _stderr_sink).write(self.name, text)
        return len(text)

    def writable(self):
        return True

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return 2

    @property
    def encoding(self):
        return "utf-8"


class RoutedLogHandler(logging.Handler):
    def emit(self, record):
        try:
            text = "%s: %s" % (record.name, self.format(record))
            (_sink.get() or _stderr_sink).log(record.levelname.lower(), text)
        except Exception:  # a log line must never fail a call
            pass
