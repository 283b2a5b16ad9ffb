"""A tool written as a typed function, found at the top level of the module (no factory).

The schema comes from the annotations: ``Scale`` becomes an enum, ``Annotated`` adds a range,
the docstring gives the descriptions, and the returned dataclass is the structured result
(its schema is the tool's ``output_schema``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated

from customtools import tool


class Scale(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"
    KELVIN = "kelvin"


@dataclass
class Reading:
    """A temperature in one scale."""

    value: float
    scale: Scale


_ABSOLUTE_ZERO = {Scale.CELSIUS: -273.15, Scale.FAHRENHEIT: -459.67, Scale.KELVIN: 0.0}


def _to_kelvin(value: float, scale: Scale) -> float:
    if scale is Scale.CELSIUS:
        return value + 273.15
    if scale is Scale.FAHRENHEIT:
        return (value - 32) * 5 / 9 + 273.15
    return value


def _from_kelvin(kelvin: float, scale: Scale) -> float:
    if scale is Scale.CELSIUS:
        return kelvin - 273.15
    if scale is Scale.FAHRENHEIT:
        return (kelvin - 273.15) * 9 / 5 + 32
    return kelvin


@tool(label="Convert temperature", annotations={"readOnlyHint": True})
def convert_temperature(
    value: Annotated[float, {"minimum": -500, "maximum": 1e6}],
    source: Scale,
    target: Scale = Scale.CELSIUS,
    digits: Annotated[int, {"minimum": 0, "maximum": 6}] = 2,
) -> Reading:
    """Convert a temperature from one scale to another.

    Args:
        value: The temperature to convert.
        source: The scale ``value`` is given in.
        target: The scale to convert to.
        digits: How many digits after the point to keep.
    """
    if value < _ABSOLUTE_ZERO[source]:
        raise ValueError(f"{value} is below absolute zero on the {source.value} scale")
    converted = _from_kelvin(_to_kelvin(value, source), target)
    return Reading(value=round(converted, digits), scale=target)
