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

Keys other than ``type`` and ``count`` are the same names as the CLI flags (``sigma``, ``scale``,
``eps0``, ``delta0``, ``rate``, ``sensitivity``). Malformed or hostile files raise ``ValueError``
with the file name and the problem; sizes are capped so nothing can hang.
"""

from __future__ import annotations

import os
import stat
import tomllib

from ._validation import check_count
from .composition import Composition, compose
from .mechanisms.base import MECHANISMS

__all__ = ["MAX_SPEC_BYTES", "load_spec", "parse_spec"]

MAX_SPEC_BYTES = 1 << 20
_MAX_ENTRIES = 10_000


def parse_spec(data: dict, source: str = "<spec>") -> Composition:
    """Build a composition from parsed spec data.

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
        if not isinstance(kind, str) or kind not in MECHANISMS:
            raise ValueError(f"{where}: type must be one of {sorted(MECHANISMS)}, got {kind!r}")
        if "count" not in entry:
            raise ValueError(f"{where}: missing count")
        try:
            count = check_count("count", entry["count"])
            params = {k: v for k, v in entry.items() if k not in ("type", "count")}
            for k, v in params.items():
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise ValueError(f"{k} must be a number, got {v!r}")
            mech = MECHANISMS[kind].build(params)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        terms.append((mech, count))
    return compose(terms)


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
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: malformed TOML: nesting too deep") from None
    return parse_spec(data, path)
