"""Search the notes: the pack as a pull request changes it (docs/ci.md)."""

from customtools import CustomTool, ToolResult, Type


def search(tool_call_id, params, on_update, ctx, signal):
    hits: list[str] = []  # a real pack searches here
    return ToolResult(
        content=[f"{len(hits)} notes match"], structured_content={"hits": hits, "total": 0}
    )


def factory(api):
    return CustomTool(
        name="search_notes",
        label="Search notes",
        description="Search the notes for a text and return the matching titles.",
        parameters=Type.Object(
            {
                "text": Type.String(minLength=1, description="Text to look for."),
                "limit": Type.Optional(Type.Integer(minimum=1, maximum=50, default=10)),
                "sort": Type.Optional(Type.Enum(["relevance", "date"])),
                "tag": Type.Optional(Type.String(description="Only notes with this tag.")),
            }
        ),
        output_schema=Type.Object(
            {"hits": Type.Array(Type.String()), "total": Type.Union([Type.Integer(), Type.Null()])}
        ),
        execute=search,
    )
