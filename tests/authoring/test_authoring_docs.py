"""The authoring guide's typed-function module loads and runs as the guide says."""

from __future__ import annotations

from pathlib import Path

import pytest

from customtools import CustomToolAdapter, load_custom_tools

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.anyio
async def test_the_typed_tool_module_loads_without_a_factory(tmp_path: Path) -> None:
    result = await load_custom_tools([ROOT / "docs" / "examples" / "typed_tool.py"], ROOT)
    assert result.errors == ()
    tools = {loaded.tool.name: loaded.tool for loaded in result.tools}
    assert sorted(tools) == ["file_size", "watch"]
    sized = tools["file_size"]
    assert sized.parameters["properties"]["unit"]["enum"] == ["bytes", "lines"]
    assert sized.output_schema is not None
    target = tmp_path / "f.txt"
    target.write_text("a\nb\n")
    call = await CustomToolAdapter(sized).execute("c", {"path": str(target), "unit": "lines"})
    assert call.structured_content == {"path": str(target), "size": 2, "unit": "lines"}
    updates: list[str] = []
    watched = await CustomToolAdapter(tools["watch"]).execute(
        "c", {"times": 2}, on_update=lambda partial: updates.append(partial.text)
    )
    assert updates == ["report 1 of 2", "report 2 of 2"]
    assert watched.text == "report 2 of 2"


def test_the_guide_shows_the_module_it_links() -> None:
    guide = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    module = (ROOT / "docs" / "examples" / "typed_tool.py").read_text(encoding="utf-8")
    assert "examples/typed_tool.py" in guide
    for line in (
        "class Size(TypedDict):",
        'def file_size(path: Annotated[str, {"minLength": 1}], unit: Unit = Unit.BYTES) -> Size:',
    ):
        assert line in guide
        assert line in module
