"""Text colours that read on every theme: at least 4.5:1 against the backgrounds they sit on.

Textual's light themes give some text colours about 2-3:1 against their
surfaces (``$text-warning`` on ``$panel`` in textual-light: 2.8:1; the fit
column's "partial" in a 256-colour tmux: 1.03:1). The dashboard draws every
coloured word with a ``$text-*`` variable (or ``$foreground-darken-3``), so
those variables are made readable once per theme (``ArsApp.get_css_variables``):
each is darkened (light theme) or lightened (dark theme) in small steps until
it reaches ``MIN_CONTRAST`` against ``$background``, ``$surface`` and ``$panel``.
"""

from __future__ import annotations

from textual.color import Color

MIN_CONTRAST = 4.5
TEXT_VARS = ("text-primary", "text-secondary", "text-accent", "text-warning", "text-error", "text-success",
             "text-muted", "foreground-darken-3", "foreground")
BACKGROUNDS = ("background", "surface", "panel")


def luminance(c: Color) -> float:
    def channel(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)


def contrast(a: Color, b: Color) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def resolve(value: str, on: Color) -> Color | None:
    """A theme variable's colour as drawn on ``on`` (``auto 60%`` and alpha included), or None."""
    try:
        parts = value.split()
        if parts and parts[0] == "auto":
            alpha = float(parts[1].rstrip("%")) / 100 if len(parts) > 1 else 1.0
            return on.blend(on.get_contrast_text(1.0), alpha)
        c = Color.parse(value)
    except Exception:  # noqa: BLE001 - ansi_default and the like: the terminal's own, left alone
        return None
    return on.blend(c.with_alpha(1.0), c.a) if c.a < 1 else c


def readable(variables: dict[str, str], dark: bool) -> dict[str, str]:
    """``variables`` with each text colour moved until it reads on every background."""
    bgs = [c for c in (resolve(variables.get(b, ""), Color(0, 0, 0) if dark else Color(255, 255, 255))
                       for b in BACKGROUNDS) if c is not None]
    if not bgs:
        return variables
    out = dict(variables)
    for var in TEXT_VARS:
        raw = variables.get(var)
        c = resolve(raw, bgs[0]) if raw else None
        if c is None:
            continue
        worst = min(contrast(c, b) for b in bgs)
        if worst >= MIN_CONTRAST:
            continue
        for _ in range(40):
            c = c.lighten(0.03) if dark else c.darken(0.03)
            worst = min(contrast(c, b) for b in bgs)
            if worst >= MIN_CONTRAST:
                break
        out[var] = c.hex
    return out
