"""Calls of an instrument's methods and of an optimizer, each with its output as events of that call, and
the one asyncio loop every async method runs on. A mixin of Host (host.py); a call runs on the thread that
read it.
"""
import asyncio
import inspect
import threading

from . import schema, worktable
from .errors import HostError
from .output import CallSink, _sink


class Calls:
    def call(self, msg):
        sink = CallSink(self.channel, msg.get("id"))
        try:
            name, method = msg["instrument"], msg["method"]
            obj = self.instances.get(name)
            if obj is None:
                raise HostError("not_found", "no instrument %s in this host" % name)
            if method == worktable.LAYOUT:  # the labware view (no driver method: dunders are never methods)
                sink.close()
                self.reply(msg, worktable.view(obj))
                return
            desc = self.descs.get(name, {}).get(method)
            if desc is None:
                raise HostError("not_found", "%s has no method %s" % (name, method))
            fn, kwargs, is_async = schema.bind_call(obj, desc, msg.get("args") or {}, self.instances)
            worktable.check_args(obj, desc, msg.get("args") or {})  # wells and labware against the worktable, before the driver
            if is_async:
                value = asyncio.run_coroutine_threadsafe(self.with_sink(sink, fn(**kwargs)), self.event_loop()).result()
            else:
                token = _sink.set(sink)
                try:
                    value = fn(**kwargs)
                    if inspect.isawaitable(value):
                        value = asyncio.run_coroutine_threadsafe(self.with_sink(sink, value), self.event_loop()).result()
                finally:
                    _sink.reset(token)
            sink.close()
            out, warnings = schema.to_json(value)
            for w in warnings:
                sink.log("warning", "%s.%s %s" % (name, method, w))
            self.reply(msg, out)
        except BaseException as exc:  # noqa: B902 - SystemExit/KeyboardInterrupt from a driver fail the call only
            sink.close()
            self.fail(msg, exc)

    def optimizer_op(self, msg):
        """Create an optimizer state, call its suggest / observe, or drop it; what it prints is the call's."""
        sink = CallSink(self.channel, msg.get("id"))
        token = _sink.set(sink)
        try:
            kind, handle = msg["type"], msg["handle"]
            if kind == "optimizer_create":
                cls = self.optimizer_classes.get(msg["class"])
                if cls is None:
                    raise HostError("not_found", "no optimizer class %s in this host" % msg["class"].split("::")[-1])
                self.optimizers.create(cls, handle, msg["setup"], msg.get("config") or {})
                value = None
            elif kind == "optimizer_call":
                value = self.optimizers.call(handle, msg["method"], msg.get("args") or {})
                if value is None:
                    raise HostError("not_found", "no optimizer %s in this host" % handle)
            else:
                value = self.optimizers.dispose(handle)
            sink.close()
            self.reply(msg, value)
        except BaseException as exc:  # noqa: B902 - an optimizer's exception fails its request only
            sink.close()
            self.fail(msg, exc)
        finally:
            _sink.reset(token)

    @staticmethod
    async def with_sink(sink, awaitable):
        _sink.set(sink)
        return await awaitable

    def event_loop(self):
        """One asyncio loop, in its own thread, for every async method."""
        with self.loop_ready:
            if self.loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="labdeck-asyncio", daemon=True).start()
                self.loop = loop
        return self.loop
