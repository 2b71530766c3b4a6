"""The protocol's channel: one JSON object per line over the process's original stdin (requests) and stdout
(replies and events), taken over before any lab code runs (docs/python.md, "The host protocol").
"""
import json
import logging
import os
import sys
import threading

from .output import RoutedLogHandler, RoutedStream, _write_fd


class Channel:
    def __init__(self, rfile, wfile):
        self.rfile = rfile
        self.wfile = wfile
        self.lock = threading.Lock()

    def send(self, msg):
        data = (json.dumps(msg, separators=(",", ":"), allow_nan=False, default=str) + "\n").encode("utf-8")
        with self.lock:
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ValueError, OSError):
                os._exit(0)  # the runtime is gone

    def next_message(self):
        """The next request, or None when the runtime has closed the channel."""
        for line in iter(self.rfile.readline, b""):
            line = line.strip()
            if not line:
                continue
            try:
                return json.loads(line.decode("utf-8"))
            except ValueError:
                _write_fd(2, "labdeck host: an unreadable request was ignored: %r\n" % line[:200])
        return None


def take_over_stdio():
    """The protocol gets the real stdin/stdout; lab code gets /dev/null and routed streams."""
    rfile = os.fdopen(os.dup(0), "rb")
    wfile = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # C libraries that write to fd 1 reach stderr, never the channel
    sys.stdin = open(os.devnull, "r")
    sys.stdout = RoutedStream("stdout")
    sys.stderr = RoutedStream("stderr")
    root = logging.getLogger()
    handler = RoutedLogHandler()
    root.addHandler(handler)
    if root.level == logging.WARNING:
        root.setLevel(logging.INFO)
    logging.basicConfig = _basic_config(handler)
    return Channel(rfile, wfile)


def _basic_config(handler):
    """A deck's logging.basicConfig(...) keeps our routing but still sets its level and format."""
    def basic_config(**kwargs):
        if "level" in kwargs:
            logging.getLogger().setLevel(kwargs["level"])
        if "format" in kwargs:
            handler.setFormatter(logging.Formatter(kwargs["format"], kwargs.get("datefmt"), kwargs.get("style", "%")))
    return basic_config
