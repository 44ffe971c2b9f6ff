#!/usr/bin/env python3
"""Renders a terminal capture with colours (`tmux capture-pane -e -p`) as an SVG of a grid of
monospace cells, for README screenshots: `ansi2svg.py capture.txt > shot.svg`, then
`rsvg-convert shot.svg -o shot.png`. Understands what tmux writes: SGR colours (16, 256 and
24-bit), bold, dim, reverse, underline and resets; other escape sequences are dropped."""

import html
import re
import sys

CELL_W, CELL_H, FONT = 9.6, 19, 16  # px: DejaVu Sans Mono at 16 px advances ~9.6 px
DEFAULT_FG, DEFAULT_BG = "#d0d0d0", "#1c1c1c"
BASE16 = [
    "#1c1c1c", "#d75f5f", "#87af5f", "#d7af5f", "#5f87af", "#af87af", "#5fafaf", "#d0d0d0",
    "#767676", "#ff8787", "#afd787", "#ffd787", "#87afd7", "#d7afd7", "#87d7d7", "#ffffff",
]


def xterm256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = self.dim = self.reverse = self.underline = False

    def apply(self, params):
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.dim = True
            elif c == 4:
                self.underline = True
            elif c == 7:
                self.reverse = True
            elif c == 22:
                self.bold = self.dim = False
            elif c == 24:
                self.underline = False
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = BASE16[c - 30]
            elif 90 <= c <= 97:
                self.fg = BASE16[c - 90 + 8]
            elif 40 <= c <= 47:
                self.bg = BASE16[c - 40]
            elif 100 <= c <= 107:
                self.bg = BASE16[c - 100 + 8]
            elif c == 39:
                self.fg = None
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    colour = xterm256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    colour = "#%02x%02x%02x" % tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    colour = None
                if c == 38:
                    self.fg = colour
                else:
                    self.bg = colour
                i += 1
            i += 1

    def colours(self):
        fg, bg = self.fg or DEFAULT_FG, self.bg or DEFAULT_BG
        if self.reverse:
            fg, bg = bg, fg
        return fg, bg


TOKEN = re.compile(r"\x1b\[([0-9;]*)m|\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|([^\x1b])")


def cells(line, style):
    """The (char, fg, bg, bold, underline, dim) of each cell of one captured line."""
    out = []
    for m in TOKEN.finditer(line):
        if m.group(1) is not None:
            style.apply(m.group(1))
        elif m.group(2) is not None:
            fg, bg = style.colours()
            out.append((m.group(2), fg, bg, style.bold, style.underline, style.dim))
    return out


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
    style = Style()
    grid = [cells(l, style) for l in lines]
    cols = max((len(r) for r in grid), default=80)
    width, height = cols * CELL_W + 16, len(grid) * CELL_H + 16
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="DejaVu Sans Mono, monospace" font-size="{FONT}">',
        f'<rect width="100%" height="100%" rx="6" fill="{DEFAULT_BG}"/>',
    ]
    for y, row in enumerate(grid):
        top = 8 + y * CELL_H
        # Backgrounds as runs of one colour, then the text cell by cell (a cell per char keeps
        # box-drawing and block characters on the grid whatever the font's widths).
        x = 0
        while x < len(row):
            bg = row[x][2]
            end = x
            while end < len(row) and row[end][2] == bg:
                end += 1
            if bg != DEFAULT_BG:
                out.append(
                    f'<rect x="{8 + x * CELL_W:.1f}" y="{top}" width="{(end - x) * CELL_W + 0.6:.1f}" '
                    f'height="{CELL_H}" fill="{bg}"/>'
                )
            x = end
        for x, (ch, fg, _bg, bold, underline, dim) in enumerate(row):
            if ch == " ":
                continue
            if "\u2581" <= ch <= "\u2588":
                # Lower blocks (sparklines, gauges) as rectangles: glyphs leave gaps between rows.
                h = CELL_H * (ord(ch) - 0x2580) / 8
                out.append(
                    f'<rect x="{8 + x * CELL_W:.1f}" y="{top + CELL_H - h:.1f}" '
                    f'width="{CELL_W + 0.6:.1f}" height="{h:.1f}" fill="{fg}"/>'
                )
                continue
            attrs = f'fill="{fg}"'
            if bold:
                attrs += ' font-weight="bold"'
            if dim:
                attrs += ' fill-opacity="0.6"'
            if underline:
                attrs += ' text-decoration="underline"'
            out.append(
                f'<text x="{8 + x * CELL_W:.1f}" y="{top + CELL_H - 5}" {attrs}>{html.escape(ch)}</text>'
            )
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
