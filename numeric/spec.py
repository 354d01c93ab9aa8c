"""Composition spec files (TOML), shared by ``edgeworth epsilon|delta --spec`` and certify.

Format (version 1)::

    version = 1                      # optional
    [[mechanism]]
    type = "subsampled-gaussian"     # a name from numeric.mechanisms.MECHANISMS
    sigma = 1.0
    rate = 0.01
    count = 10000

    [[mechanism]]
    type = "approx-dp"
    eps0 = 0.1
    delta0 = 1e-6
    count = 100

Keys other than ``type`` and ``count`` are the mechanism's parameters, with the same names as
the CLI flags (``sigma``, ``scale``, ``eps0``, ``delta0``, ``rate``, ``sensitivity``, or those a
registered mechanism declares). Numbers are read as exact decimals (digit and exponent budgets):
float methods use the nearest binary64 number, certified methods the exact value.

A user's own mechanism (e.g. one derived from its density with ``derive``) enters through a
Python file instead of ``type``::

    [[mechanism]]
    file = "logistic.py"   # relative to the spec file; it defines MECHANISM
    mu = 0.2               # parameter values passed to it
    count = 100

An optional ``file_sha256 = "<hex>"`` pins the file: it runs only if its SHA-256 matches
(certificates record it, so ``verify`` recomputes with the same code).

``MECHANISM`` is a numeric :class:`~numeric.mechanisms.base.Mechanism` instance (no parameters),
an object with a ``compile(**params)`` method returning one (a derive ``MechanismSpec``), or a
callable ``MECHANISM(**params)`` returning one. The file is executed: name only files you trust
(a spec that names no file executes nothing).

Malformed or hostile files raise ``ValueError`` with the file name and the problem; sizes are
capped so nothing can hang.
"""

from __future__ import annotations

import os
import stat
import tomllib
from decimal import Decimal
from typing import Any

from ._validation import MAX_DIGITS, MAX_EXPONENT, check_count
from .composition import Composition, compose
from .mechanisms.base import MECHANISMS, Mechanism

__all__ = ["MAX_SPEC_BYTES", "file_sha256", "load_spec", "parse_spec", "resolve_file"]

MAX_SPEC_BYTES = 1 << 20
_MAX_ENTRIES = 10_000


def _number(key: str, value: object) -> float:
    """A spec number (int, float or exact Decimal) as a float, within the digit budgets."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise ValueError(f"{key} must be a number, got {value!r}")
    if isinstance(value, int) and abs(value).bit_length() > 3 * MAX_DIGITS:
        raise ValueError(f"{key} is too large an integer ({abs(value).bit_length()} bits)")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{key} must be finite, got {value}")
        _, digits, exponent = value.as_tuple()
        if len(digits) > MAX_DIGITS or abs(int(exponent)) > MAX_EXPONENT:
            raise ValueError(f"{key} has too many digits or too large an exponent")
    return float(value)


def resolve_file(path: object, base: str) -> str:
    """The absolute path of a spec's ``file`` entry (relative paths resolve against ``base``).

    Raises:
        ValueError: if ``path`` is not a ``*.py`` name of an existing regular file.
    """
    if not isinstance(path, str) or not path.endswith(".py"):
        raise ValueError(f"file must name a Python file (*.py), got {path!r}")
    full = os.path.abspath(path if os.path.isabs(path) else os.path.join(base, path))
    if not os.path.isfile(full):
        raise ValueError(f"file {path!r} not found (looked for {full!r})")
    return full


def file_sha256(path: str) -> str:
    """SHA-256 (hex) of a file's bytes, read with the spec size cap."""
    import hashlib

    with open(path, "rb") as fh:
        data = fh.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise ValueError(f"{path}: file too large ({len(data)} bytes > {MAX_SPEC_BYTES})")
    return hashlib.sha256(data).hexdigest()


def _from_file(path: object, params: dict[str, float], base: str,
               sha256: object = None) -> Mechanism:
    """The mechanism a user's Python file defines as ``MECHANISM`` (see the module docstring)."""
    full = resolve_file(path, base)
    if sha256 is not None and file_sha256(full) != sha256:
        raise ValueError(f"file {path!r} does not match its recorded file_sha256 (changed since)")
    import runpy

    try:
        namespace = runpy.run_path(full)
    except Exception as exc:  # the user's file failed: one line naming it
        raise ValueError(f"{path}: could not run the file: {type(exc).__name__}: {exc}") from None
    obj: Any = namespace.get("MECHANISM")
    if obj is None:
        raise ValueError(f"{path}: the file must define MECHANISM")
    if isinstance(obj, Mechanism):
        if params:
            raise ValueError(f"{path}: MECHANISM is a mechanism instance; it takes no parameters "
                             f"(got {sorted(params)})")
        return obj
    build = getattr(obj, "compile", None) or (obj if callable(obj) else None)
    if build is None:
        raise ValueError(f"{path}: MECHANISM must be a Mechanism, have compile(**params), or be "
                         f"callable; got {type(obj).__name__}")
    mech = build(**params)
    if not isinstance(mech, Mechanism):
        raise ValueError(f"{path}: MECHANISM(**params) returned {type(mech).__name__}, not a "
                         "numeric Mechanism")
    return mech


def parse_spec(data: dict, source: str = "<spec>", *, base_dir: str | None = None) -> Composition:
    """Build a composition from parsed spec data.

    Args:
        data: Parsed TOML (numbers may be ``Decimal``).
        source: Name used in error messages.
        base_dir: Directory against which ``file`` entries resolve (default: the current one).

    Raises:
        ValueError: naming ``source`` and the offending entry.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{source}: the spec must be a TOML table")
    unknown = set(data) - {"version", "mechanism"}
    if unknown:
        raise ValueError(f"{source}: unknown top-level key(s) {sorted(unknown)}")
    if data.get("version", 1) != 1:
        raise ValueError(f"{source}: unsupported spec version {data.get('version')!r}")
    entries = data.get("mechanism")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source}: needs at least one [[mechanism]] table")
    if len(entries) > _MAX_ENTRIES:
        raise ValueError(f"{source}: at most {_MAX_ENTRIES} [[mechanism]] tables allowed")
    terms = []
    for i, entry in enumerate(entries):
        where = f"{source}: mechanism[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be a table")
        kind = entry.get("type")
        if "file" in entry:
            if kind is not None:
                raise ValueError(f"{where}: give either type or file, not both")
        elif not isinstance(kind, str) or kind not in MECHANISMS:
            raise ValueError(f"{where}: type must be one of {sorted(MECHANISMS)}, got {kind!r}")
        if "count" not in entry:
            raise ValueError(f"{where}: missing count")
        try:
            count = check_count("count", _count_value(entry["count"]))
            params = {k: v for k, v in entry.items()
                      if k not in ("type", "count", "file", "file_sha256")}
            floats = {k: _number(k, v) for k, v in params.items()}  # validates every value
            if "file" in entry:
                mech = _from_file(entry["file"], floats, base_dir or os.getcwd(),
                                  entry.get("file_sha256"))
            else:  # exact decimals are recorded on the mechanism (certified methods use them)
                mech = MECHANISMS[kind].build(params)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        terms.append((mech, count))
    return compose(terms)


def _count_value(value: object) -> object:
    """TOML counts: an integer, or an exact decimal such as 1e4 (refused if not whole)."""
    if isinstance(value, Decimal):
        _number("count", value)
        if value != value.to_integral_value():
            raise ValueError(f"count must be a whole number, got {value}")
        return int(value)
    return value


def load_spec(path: str | os.PathLike) -> Composition:
    """Read and parse a spec file.

    Raises:
        ValueError: if the file is missing, too large, not UTF-8 TOML, or invalid.
    """
    path = os.fspath(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # FIFOs, devices, directories could hang
            raise ValueError(f"cannot read spec file {path!r}: not a regular file")
        size = os.path.getsize(path)
        if size > MAX_SPEC_BYTES:
            raise ValueError(f"{path}: spec file too large ({size} bytes > {MAX_SPEC_BYTES})")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read spec file {path!r}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"), parse_float=Decimal)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: malformed TOML: nesting too deep") from None
    return parse_spec(data, path, base_dir=os.path.dirname(os.path.abspath(path)))
