"""Path globs of a mode's policy (`paths: write:` and `deny:`), matched like .gitignore.

A glob is matched against a path relative to the working directory, `/`-separated, after
`..` and `.` are gone and links inside the working directory are followed (the caller
passes both the name given and the real one, so a link cannot rename a denied file).

- `*` matches within one name, `?` one character, `[abc]` one of a set; none crosses `/`;
- `**` matches any number of folders: `**/*.pem` is every .pem file, `.git/**` is .git
  and everything in it, `src/**/test_*.py` any test file under src;
- a glob without a `/` matches a name at any depth (`.env` is `.env` and `app/.env`);
  one with a `/` is anchored at the working directory (`docs/*.md` is not `x/docs/a.md`);
- a folder that matches covers what is in it (`build` denies `build/out.txt` too).

Python 3.11's `fnmatch` lets `*` cross `/` and has no `**`, hence this small translator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["GlobError", "PathGlobs", "check_glob", "glob_regex"]


class GlobError(ValueError):
    """A glob that cannot be used (says why)."""


def check_glob(glob: str) -> str | None:
    """Why `glob` cannot be a policy glob, or None when it can."""
    if not glob.strip():
        return "is empty"
    if glob.startswith("/") or glob.startswith("~"):
        return "must be relative to the working directory (no leading / or ~)"
    if ".." in glob.split("/"):
        return "cannot climb out with `..`: globs name places inside the working directory"
    try:
        glob_regex(glob)
    except (GlobError, re.error) as error:
        return str(error)
    return None


@lru_cache(maxsize=512)
def glob_regex(glob: str) -> re.Pattern[str]:
    """The compiled regular expression of `glob` (see the module); GlobError if unusable."""
    text = glob.strip().removeprefix("./").rstrip("/")
    anchored = "/" in text
    body = _translate(text)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"{prefix}{body}(?:/.*)?", re.DOTALL)


def _translate(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        piece, index = _piece(glob, index)
        out.append(piece)
    return "".join(out)


def _piece(glob: str, index: int) -> tuple[str, int]:
    """The regex of the glob's piece at `index`, and where the next piece starts."""
    if glob.startswith("**/", index):
        return "(?:.*/)?", index + 3
    if glob.startswith("/**", index) and index + 3 == len(glob):
        return "(?:/.*)?", index + 3
    if glob.startswith("**", index):
        return ".*", index + 2
    char = glob[index]
    if char == "*":
        return "[^/]*", index + 1
    if char == "?":
        return "[^/]", index + 1
    if char == "[":
        end = glob.find("]", index + 2)
        if end < 0:
            raise GlobError(f"has a `[` without its `]` (at character {index + 1})")
        inner = glob[index + 1 : end]
        negate = inner.startswith("!")
        inner = re.escape(inner[1:] if negate else inner).replace("\\-", "-")
        return f"[{'^/' if negate else ''}{inner}]", end + 1
    return re.escape(char), index + 1


@dataclass(frozen=True, slots=True)
class PathGlobs:
    """Some globs; `match` says which one covers a path."""

    globs: tuple[str, ...] = ()
    """The globs as written in the profile."""
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", tuple(glob_regex(g) for g in self.globs))

    def match(self, *paths: str) -> str | None:
        """The first glob that covers any of `paths` (relative, `/`-separated), or None."""
        for glob, pattern in zip(self.globs, self._compiled, strict=True):
            for path in paths:
                if pattern.fullmatch(path.strip("/") or "."):
                    return glob
        return None

    def __bool__(self) -> bool:
        return bool(self.globs)
