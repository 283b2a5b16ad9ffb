"""``customtools.isolation``: the options' checks (its surface is pinned in test_public_api)."""

from __future__ import annotations

import pytest

from customtools._isolation._limits import WorkerLimits
from customtools.isolation import IsolationOptions, IsolationPool


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory_limit_mib", 0, "memory_limit_mib must be a positive integer or None, got 0"),
        ("cpu_limit", 1.5, "cpu_limit must be a positive integer or None, got 1.5"),
        ("grace", -1, "grace must be a positive number or None, got -1"),
        ("backoff", float("inf"), "backoff must be a positive number, got inf"),
        ("restart_limit", -1, "restart_limit must be an integer >= 0, got -1"),
        ("max_message_mib", True, "max_message_mib must be a positive integer, got True"),
        ("spin_us", -1, "spin_us must be an integer from 0 to 10000, got -1"),
    ],
)
def test_bad_options_are_refused_naming_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        IsolationOptions(**{field: value})


def test_options_carry_worker_limits_in_mib_and_a_pool_takes_one_or_keywords() -> None:
    options = IsolationOptions(memory_limit_mib=2, cpu_limit=3, file_size_limit_mib=None)
    assert options.to_dict() == {"memoryMib": 2, "cpuSeconds": 3, "fileSizeMib": None}
    assert WorkerLimits.from_dict(options.to_dict()) == WorkerLimits(
        memory_limit_mib=2, cpu_limit=3, file_size_limit_mib=None
    )
    assert IsolationPool(options).options is options
    assert IsolationPool(grace=1.5).options.grace == 1.5
    with pytest.raises(TypeError, match="either an IsolationOptions or keyword options"):
        IsolationPool(options, grace=1.0)
