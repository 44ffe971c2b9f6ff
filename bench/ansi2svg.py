#!/usr/bin/env python3
"""Renders a terminal capture with colours (`tmux capture-pane -e -p`) as an SVG page, so a
screen of the explorer can be looked at as an image (and turned into a PNG with
`rsvg-convert`). Standard library only.

    tmux capture-pane -e -p -t main > screen.ans
    bench/ansi2svg.py screen.ans screen.svg [--cols 120 --rows 40]
    rsvg-convert -o screen.png screen.svg

Handles the SGR sequences tmux writes (bold, dim, italic, underline, reverse, the 16 colours,
the 256-colour and the 24-bit forms); every other escape sequence is dropped. Each character
is placed in its own cell (an x list per run), and the block elements (▁ … █) are drawn as
rectangles, so bars meet without gaps whatever the font.
"""

import re
import sys
from xml.sax.saxutils import escape

CELL_W = 8.4
CELL_H = 17.0
FONT = 14
BG = "#1c1c1c"
FG = "#d0d0d0"

# xterm's 16 colours.
BASE16 = [
    "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
]


def color256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        r, g, b = n // 36, (n // 6) % 6, n % 6
        conv = lambda v: 0 if v == 0 else 55 + 40 * v
        return "#%02x%02x%02x" % (conv(r), conv(g), conv(b))
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = False
        self.dim = False
        self.italic = False
        self.under = False
        self.rev = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.italic, self.under, self.rev)

    def apply(self, params):
        ps = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(ps):
            p = ps[i]
            if p == 0:
                self.reset()
            elif p == 1:
                self.bold = True
            elif p == 2:
                self.dim = True
            elif p == 3:
                self.italic = True
            elif p == 4:
                self.under = True
            elif p == 7:
                self.rev = True
            elif p == 22:
                self.bold = self.dim = False
            elif p == 23:
                self.italic = False
            elif p == 24:
                self.under = False
            elif p == 27:
                self.rev = False
            elif 30 <= p <= 37:
                self.fg = BASE16[p - 30]
            elif 90 <= p <= 97:
                self.fg = BASE16[p - 90 + 8]
            elif 40 <= p <= 47:
                self.bg = BASE16[p - 40]
            elif 100 <= p <= 107:
                self.bg = BASE16[p - 100 + 8]
            elif p == 39:
                self.fg = None
            elif p == 49:
                self.bg = None
            elif p in (38, 48) and i + 1 < len(ps):
                if ps[i + 1] == 5 and i + 2 < len(ps):
                    c = color256(ps[i + 2])
                    i += 2
                elif ps[i + 1] == 2 and i + 4 < len(ps):
                    c = "#%02x%02x%02x" % tuple(ps[i + 2:i + 5])
                    i += 4
                else:
                    c = None
                if p == 38:
                    self.fg = c
                else:
                    self.bg = c
                i += 1
            i += 1

    def colors(self):
        fg = self.fg or FG
        bg = self.bg
        if self.rev:
            fg, bg = (bg or BG), fg
        return fg, bg


TOKEN = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])|\x1b[()][0-9A-Za-z]|\x1b.|([^\x1b])", re.S)


def parse(text):
    """Rows of cells: (char, fg, bg, bold, dim, italic, under)."""
    style = Style()
    rows = []
    for line in text.split("\n"):
        row = []
        for m in TOKEN.finditer(line):
            if m.group(2) == "m":
                style.apply(m.group(1))
            elif m.group(3) is not None:
                ch = m.group(3)
                if ch == "\r":
                    continue
                fg, bg = style.colors()
                row.append((ch, fg, bg, style.bold, style.dim, style.italic, style.under))
        rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    return rows


BLOCKS = {chr(0x2581 + i): (i + 1) / 8.0 for i in range(8)}  # ▁ … █
BLOCKS["▀"] = -0.5


def render(rows, cols, nrows):
    w = cols * CELL_W
    h = nrows * CELL_H
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %.1f %.1f">'
        % (round(w), round(h), w, h),
        '<rect width="100%%" height="100%%" fill="%s"/>' % BG,
        '<g font-family="DejaVu Sans Mono, monospace" font-size="%d">' % FONT,
    ]
    for y, row in enumerate(rows[:nrows]):
        top = y * CELL_H
        # Backgrounds.
        for x, c in enumerate(row[:cols]):
            if c[2]:
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                           % (x * CELL_W, top, CELL_W + 0.3, CELL_H + 0.3, c[2]))
        # Block elements as rectangles; the rest as text runs of one style.
        run = []
        run_key = None

        def flush():
            if not run:
                return
            ch0 = run[0][1]
            xs = " ".join("%.1f" % (x * CELL_W) for x, _ in run)
            attrs = 'fill="%s"' % ch0[1]
            if ch0[3]:
                attrs += ' font-weight="bold"'
            if ch0[4]:
                attrs += ' fill-opacity="0.6"'
            if ch0[5]:
                attrs += ' font-style="italic"'
            if ch0[6]:
                attrs += ' text-decoration="underline"'
            text = "".join(c[0] for _, c in run)
            out.append('<text x="%s" y="%.1f" %s xml:space="preserve">%s</text>'
                       % (xs, top + CELL_H * 0.78, attrs, escape(text)))
            run.clear()

        for x, c in enumerate(row[:cols]):
            ch = c[0]
            if ch in BLOCKS:
                flush()
                frac = BLOCKS[ch]
                if frac < 0:
                    out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                               % (x * CELL_W, top, CELL_W + 0.3, CELL_H / 2, c[1]))
                else:
                    bh = CELL_H * frac
                    out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                               % (x * CELL_W, top + CELL_H - bh, CELL_W + 0.3, bh + 0.3, c[1]))
                run_key = None
                continue
            if ch == " " and not c[6]:
                flush()
                run_key = None
                continue
            key = c[1:]
            if key != run_key:
                flush()
                run_key = key
            run.append((x, c))
        flush()
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def main(argv):
    args = [a for a in argv[1:]]
    cols = rows = None
    if "--cols" in args:
        i = args.index("--cols")
        cols = int(args[i + 1])
        del args[i:i + 2]
    if "--rows" in args:
        i = args.index("--rows")
        rows = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.stderr.write("usage: ansi2svg.py CAPTURE.ans OUT.svg [--cols N --rows N]\n")
        return 2
    with open(args[0], encoding="utf-8", errors="replace") as f:
        parsed = parse(f.read())
    cols = cols or max((len(r) for r in parsed), default=80)
    rows = rows or len(parsed)
    with open(args[1], "w", encoding="utf-8") as f:
        f.write(render(parsed, cols, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
