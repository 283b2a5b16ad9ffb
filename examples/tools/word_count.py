"""A typed function turned into a tool inside a factory, where ``api`` is at hand.

``tool(fn)`` is the plain-call form of the ``@tool`` decorator. The ``TypedDict`` return
annotation is the tool's output schema, so hosts get ``structured_content`` they can check.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, TypedDict

from customtools import CustomTool, tool


class WordCount(TypedDict):
    words: int
    lines: int
    top: list[str]


def factory(api: Any) -> list[CustomTool]:
    def count_words(
        text: Annotated[str, {"maxLength": 100_000}],
        top: Annotated[int, {"minimum": 0, "maximum": 20}] = 3,
    ) -> WordCount:
        """Count the words and lines of a text and name its most common words.

        Args:
            text: The text to count.
            top: How many of the most common words to name.
        """
        words = [word.strip(".,;:!?\"'()").lower() for word in text.split()]
        common = Counter(word for word in words if word).most_common(top)
        api.logger.debug("counted %d words", len(words))
        return {
            "words": len(words),
            "lines": len(text.splitlines()),
            "top": [word for word, _ in common],
        }

    return [tool(count_words, label="Word count")]
