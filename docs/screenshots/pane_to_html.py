"""A tmux pane captured with its colours (`capture-pane -e -p`) as an HTML page that looks
like a dark terminal: SGR escape codes (bold, dim, italic, underline, 16/256/24-bit colours)
become styled spans; everything else is text. Reads stdin, writes stdout."""
import html
import re
import sys

BASE = ["#1d1f21", "#cc6666", "#b5bd68", "#f0c674", "#81a2be", "#b294bb", "#8abeb7", "#c5c8c6",
        "#666666", "#d54e53", "#b9ca4a", "#e7c547", "#7aa6da", "#c397d8", "#70c0b1", "#eaeaea"]


def palette256(n):
    if n < 16:
        return BASE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    grey = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (grey, grey, grey)


def apply(state, params):
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            state.clear()
        elif c in (1, 2, 3, 4):
            state[{1: "bold", 2: "dim", 3: "italic", 4: "underline"}[c]] = True
        elif c in (22, 23, 24):
            for key in {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",)}[c]:
                state.pop(key, None)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            state["fg"] = BASE[c - 30 if c < 90 else c - 90 + 8]
        elif 40 <= c <= 47:
            state["bg"] = BASE[c - 40]
        elif c in (39, 49):
            state.pop("fg" if c == 39 else "bg", None)
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                state[key] = palette256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                state[key] = "#%02x%02x%02x" % tuple(codes[i + 2:i + 5])
                i += 4
        i += 1


def css(state):
    rules = []
    if "fg" in state:
        rules.append("color:" + state["fg"])
    if "bg" in state:
        rules.append("background:" + state["bg"])
    if state.get("bold"):
        rules.append("font-weight:bold")
    if state.get("dim"):
        rules.append("opacity:0.6")
    if state.get("italic"):
        rules.append("font-style:italic")
    if state.get("underline"):
        rules.append("text-decoration:underline")
    return ";".join(rules)


def main():
    text = sys.stdin.read().rstrip("\n")
    out, state = [], {}
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        if part.startswith("\x1b["):
            apply(state, part[2:-1])
        elif part:
            out.append('<span style="%s">%s</span>' % (css(state), html.escape(part)))
    print("""<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#1d1f21}
pre{margin:0;padding:14px 16px;color:#c5c8c6;font:14px/18px 'DejaVu Sans Mono',monospace}
</style><pre>%s</pre>""" % "".join(out))


main()
