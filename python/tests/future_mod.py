"""Drivers written with postponed annotations (every annotation is a string), for test_schema."""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Stage:
    """A stage whose annotations are all strings.

    Args:
        port: serial port of the controller.
    """

    def __init__(self, port: str, speed: int = 5, axis: Optional[str] = None, limit: float | None = None):
        self.port = port

    def move(self, to: Point, color: Color = Color.RED, steps: list[int] | None = None) -> tuple[float, float]:
        """Move to a point."""
        return (to.x, to.y)

    def follow(self, other: Stage) -> None:
        """Follow another stage."""

    def partly(self, count: int, thing: NotDefinedAnywhere) -> int:  # noqa: F821 - on purpose
        """One annotation does not resolve; the others still do."""
        return count
