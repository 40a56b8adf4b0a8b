"""Path globs of a mode's policy (`paths: write:` and `deny:`), matched like .gitignore.

A glob is matched against the REAL path of a file relative to the working directory,
`/`-separated, after `..` and `.` are gone and links inside the working directory are
followed (`core.tools.resolver`), so a link cannot rename a denied file. The matching is
git's own wildmatch, as the `pathspec` library implements it for .gitignore files:

- `*` matches within one name, `?` one character, `[abc]` one of a set; none crosses `/`
  (`a**b` is `a*b`: `**` only spans folders between slashes);
- `**` matches any number of folders: `**/*.pem` is every .pem file, `.git/**` is .git
  and everything in it, `src/**/test_*.py` any test file under src;
- a glob without a `/` (but at its end) matches a name at any depth (`.env` is `.env` and
  `app/.env`); one with a `/` is anchored at the working directory (`docs/*.md` is not
  `x/docs/a.md`); a trailing `/` names folders only;
- a folder that matches covers what is in it (`build` denies `build/out.txt` too), and
  `dir/**` covers `dir` itself;
- `\\` escapes the next character (`\\*` is a name that is a star).

A glob cannot start with `/`, `~`, `!` (a negation means nothing in a list of rules each
of which covers its own paths) or `#` (a comment in .gitignore), nor climb with `..`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from pathspec import PathSpec

__all__ = ["GlobError", "PathGlobs", "check_glob", "glob_spec"]


class GlobError(ValueError):
    """A glob that cannot be used (says why)."""


def check_glob(glob: str) -> str | None:
    """Why `glob` cannot be a policy glob, or None when it can."""
    text = glob.strip()
    if not text:
        return "is empty"
    if text.startswith("/") or text.startswith("~"):
        return "must be relative to the working directory (no leading / or ~)"
    if text.startswith("!"):
        return "cannot be a negation (`!`): list only what the rule covers"
    if text.startswith("#"):
        return "starts with # (a comment in .gitignore); write \\# for a name that starts with #"
    if ".." in text.split("/"):
        return "cannot climb out with `..`: globs name places inside the working directory"
    bracket = _open_bracket(text)
    if bracket is not None:
        return f"has a `[` without its `]` (at character {bracket + 1}); write \\[ for a ["
    try:
        glob_spec(text)
    except (GlobError, ValueError) as error:
        return f"is not a valid glob: {error}"
    return None


def _open_bracket(text: str) -> int | None:
    """Where an unescaped `[` without a closing `]` is (git would read it as a plain `[`;
    in a policy it is a typo more often than a name)."""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            end = text.find("]", index + 2)
            if end < 0:
                return index
            index = end
        index += 1
    return None


@lru_cache(maxsize=512)
def glob_spec(glob: str) -> PathSpec:
    """The compiled gitignore pattern of `glob`; GlobError (a ValueError) if unusable."""
    text = glob.strip().removeprefix("./")
    spec = PathSpec.from_lines("gitignore", [text])
    if not len(spec):
        raise GlobError("matches nothing")
    return spec


@dataclass(frozen=True, slots=True)
class PathGlobs:
    """Some globs; `match` says which one covers a path."""

    globs: tuple[str, ...] = ()
    """The globs as written in the profile."""
    _compiled: tuple[PathSpec, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", tuple(glob_spec(g) for g in self.globs))

    def match(self, *paths: str) -> str | None:
        """The first glob that covers any of `paths` (relative, `/`-separated), or None."""
        for glob, spec in zip(self.globs, self._compiled, strict=True):
            for path in paths:
                name = path.strip("/") or "."
                # `name/` too: `.git/**` covers the folder .git itself
                if spec.match_file(name) or spec.match_file(name + "/"):
                    return glob
        return None

    def __bool__(self) -> bool:
        return bool(self.globs)
