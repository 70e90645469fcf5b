"""Charts placed in the PDF before they are drawn: laid out at a size the request fixes, painted once drawn."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from typing import Any

WIDTH_IN = 6.6
PNG_DPI = 200  # 6.6 in wide: some 190 dots per inch across the A4 text width
CHART_URL = "gpu-audit-chart:"  # the PDF's chart sources; never fetched, WeasyPrint finds them in its image cache


def figure_inches(name: str, request: dict[str, Any]) -> tuple[float, float]:
    """The chart's figure size in inches, from the chart request alone (no matplotlib needed to know it)."""
    if name == "durations":
        return WIDTH_IN, 1.0 + 0.3 * len(request["durations"])
    experiments = {experiment for experiment, _title, _phases in request["memory"]}
    return WIDTH_IN, 0.45 + 1.35 * len(experiments)  # one row of axes per experiment


def png_pixels(name: str, request: dict[str, Any]) -> tuple[int, int]:
    """The PNG's size in pixels, as matplotlib's Agg canvas makes it: inches times dots per inch, truncated."""
    width, height = figure_inches(name, request)
    return int(width * PNG_DPI), int(height * PNG_DPI)


class PendingChart:
    """A chart in WeasyPrint's image protocol (get_intrinsic_size, draw) whose PNG is asked for when painted.

    WeasyPrint loads every <img> while it builds its boxes, before the layout: a chart loaded then held the
    PDF up until the chart worker had imported matplotlib and drawn. The layout needs only the chart's size,
    which the request fixes; the pixels are needed when the page that shows the chart is painted, after the
    layout. WeasyPrint's own raster image, made from the PNG then, paints it.
    """

    def __init__(self, url: str, pixels: tuple[int, int], png: Callable[[], bytes]) -> None:
        self.url = url
        self.pixels = pixels
        self._png = png
        self._image: Any = None

    def get_intrinsic_size(self, resolution: float, font_size: float) -> tuple[float, float, float]:
        width, height = self.pixels
        return width / resolution, height / resolution, width / height

    def draw(self, stream: Any, concrete_width: float, concrete_height: float, style: Any) -> None:
        self.image().draw(stream, concrete_width, concrete_height, style)

    def image(self) -> Any:
        """WeasyPrint's raster image of the drawn PNG (drawn on first use); a PNG of another size is a bug."""
        if self._image is None:
            from PIL import Image

            from generator.render.weasy import load_weasyprint

            data = self._png()
            pillow = Image.open(io.BytesIO(data))
            if pillow.size != self.pixels:
                raise RuntimeError(f"chart {self.url} was drawn at {pillow.size} pixels but laid out at {self.pixels}")
            # The identifier WeasyPrint's own loader gives an image: the MD5 of its URL.
            image_id = hashlib.md5(self.url.encode(), usedforsecurity=False).hexdigest()
            self._image = load_weasyprint().images.RasterImage(pillow, image_id, data)
        return self._image
