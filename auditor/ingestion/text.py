"""What an id or a name may contain: NFC-normalised text without invisible controls.

Ids and names are compared byte for byte (a rater, an item, a category), shown on pages and
in reports, and put in file names. So they are stored in Unicode normal form C (an "é" typed
as one code point or as "e" plus an accent is one id), and characters that change how the
text looks without being seen are refused, naming the code point:

- C0 and C1 controls (U+0000-U+001F, U+007F-U+009F);
- bidi controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069): "Trojan Source" ids that
  read differently from what they are;
- zero-width characters (U+200B-U+200D, U+2060-U+2064, U+FEFF): two ids that look the same.
"""

from __future__ import annotations

import re
import unicodedata

# A character class body, usable in Python, Rust (pydantic) and JSON Schema patterns.
FORBIDDEN_CLASS = (
    "\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069"
    "\\ufeff"
)
_FORBIDDEN = re.compile(f"[{FORBIDDEN_CLASS}]")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def forbidden_character(text: str) -> str | None:
    """'U+202E (a bidi control character)' for the first refused character, else None."""
    found = _FORBIDDEN.search(text)
    if found is None:
        return None
    char = found.group()
    if char in _BIDI:
        kind = "a bidi control character"
    elif ord(char) < 0xA0:
        kind = "a control character"
    else:
        kind = "a zero-width character"
    return f"U+{ord(char):04X} ({kind})"


def nfc(text: str) -> str:
    """``text`` in normal form C (the same object when it already is)."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def clean_name(text: str, what: str) -> str:
    """``text`` trimmed and NFC-normalised; ValueError naming ``what`` and the code point of
    a refused character."""
    cleaned = nfc(text.strip())
    problem = forbidden_character(cleaned)
    if problem is not None:
        raise ValueError(f"{what} contains {problem}, which is not allowed")
    return cleaned
