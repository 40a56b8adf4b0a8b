"""Widgets in a `layout: stream` container measured at the width they are drawn at.

The stream layout (the chat, each turn) measures a child's height at the container's width
less the child's padding and border, but draws it narrower by its left and right margins:
text that wraps onto one more line at the narrower width lost its last line (a failure
card at 120-150 columns). `FitsInStream` measures at the drawn width, so nothing is cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.widget import Widget

# A mixin, not a Widget subclass: Textual takes a widget's default CSS from its first
# DOMNode base only, so the widget class it is mixed into must stay that first base.
if TYPE_CHECKING:
    _Mixin = Widget
else:
    _Mixin = object


class FitsInStream(_Mixin):
    """Mixed into a widget of a stream container (before the widget class): its height is
    measured at the width it is drawn at."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        layout = self.parent.styles.layout if isinstance(self.parent, Widget) else None
        if layout is not None and layout.name == "stream":
            margin = self.styles.margin
            width = max(1, width - margin.left - margin.right)
        height: int = super().get_content_height(container, viewport, width)
        return height
