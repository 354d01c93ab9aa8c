"""Audit certificates: a JSON record of a certified claim that ``verify`` recomputes.

A certificate holds the inputs (the composition spec as data, the query), the claimed enclosure
(exact decimal strings), the methods and every assumption, the precision, the library versions,
and a SHA-256 hash of its canonical content (sorted keys, no whitespace). Verification:

1. the file is read with size and nesting limits (malformed or hostile files give a clear
   ``CertificateError``, never a traceback or a hang);
2. the hash is recomputed: any edit of inputs or claims is reported as tampering (the hash is an
   integrity check against edits, not a signature: anyone can recompute it);
3. the claim is checked before any recomputation: its ends must be exact decimals within digit
   and exponent budgets (a claim such as ``"1e-999999999"`` is refused at once), and a claim
   that certifies nothing (both ends null) is refused;
4. the enclosure is recomputed from the inputs with the installed library, and the certificate is
   accepted only if the recomputed enclosure lies inside the claimed interval (not bitwise
   equality, which would break across library versions).

Spec numbers are recorded as the exact decimal strings the user typed (``"0.1"``), so the
recomputation certifies the same rational numbers (mechanisms record them in ``typed``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from importlib import metadata
from typing import Any

from numeric._validation import parse_decimal
from numeric.spec import parse_spec

from .bound import Bound
from .lattice_target import DEFAULT_REL_WIDTH

__all__ = [
    "FORMAT",
    "CertificateError",
    "make_certificate",
    "read_certificate",
    "spec_from_json",
    "spec_to_json",
    "verify",
]

FORMAT = "edgeworth-certificate/1"
MAX_BYTES = 1 << 20
_MAX_DEPTH = 32
_CLAIM_DIGITS = 20_000  # an exact binary64-derived decimal has at most ~1100 significant digits
_CLAIM_EXPONENT = 20_000
_SPEC_TEXT_KEYS = ("type", "file", "file_sha256")


class CertificateError(ValueError):
    """A certificate is malformed, tampered with, or not reproduced."""


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("edgeworth-accountant", "python-flint", "mpmath", "numpy", "scipy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def canonical_hash(cert: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``cert`` without its ``hash`` field."""
    body = {k: v for k, v in cert.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def spec_to_json(spec_data: dict) -> dict:
    """Spec data (numbers as ``Decimal``, from TOML read with ``parse_float=Decimal``) as JSON
    data: every decimal becomes its exact string, so nothing is rounded to binary64."""
    def conv(v: Any) -> Any:
        if isinstance(v, Decimal):
            return str(v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    return conv(spec_data)


def spec_from_json(spec_data: Any) -> Any:
    """Inverse of :func:`spec_to_json`: the parameter strings of each ``[[mechanism]]`` table
    back to exact decimals (digit and exponent budgets; ``type`` and ``file`` stay text).

    Raises:
        CertificateError: if a parameter string is not a decimal within the budgets.
    """
    if not isinstance(spec_data, dict) or not isinstance(spec_data.get("mechanism"), list):
        return spec_data
    out = dict(spec_data)
    tables = []
    for i, entry in enumerate(spec_data["mechanism"]):
        if not isinstance(entry, dict):
            tables.append(entry)
            continue
        table = {}
        for k, v in entry.items():
            if isinstance(v, str) and k not in _SPEC_TEXT_KEYS:
                try:
                    v = parse_decimal(f"spec mechanism[{i}].{k}", v)
                except ValueError as exc:
                    raise CertificateError(str(exc)) from None
            table[k] = v
        tables.append(table)
    out["mechanism"] = tables
    return out


def make_certificate(spec_data: dict, query: str, value: float, bound: Bound) -> dict[str, Any]:
    """Build a certificate for ``bound``, the certified answer to ``query`` at ``value``.

    Args:
        spec_data: The composition spec as parsed TOML data (see :mod:`numeric.spec`).
        query: ``"epsilon"`` (value is delta) or ``"delta"`` (value is eps).
        value: The query argument.
        bound: The certified enclosure.

    Returns:
        The certificate as a JSON-ready dict, including its hash.
    """
    cert = {
        "format": FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "inputs": {"spec": spec_to_json(spec_data), "query": query,
                   "value": repr(float(value))},
        "method": "certified",
        "claim": bound.to_dict(),
        "assumptions": list(bound.assumptions),
        "precision": bound.precision,
        "versions": _versions(),
    }
    cert["hash"] = {"algorithm": "sha256", "value": canonical_hash(cert)}
    return cert


def _depth(obj: Any, level: int = 0) -> int:
    if level > _MAX_DEPTH:
        return level
    if isinstance(obj, dict):
        return max([level] + [_depth(v, level + 1) for v in obj.values()])
    if isinstance(obj, list):
        return max([level] + [_depth(v, level + 1) for v in obj])
    return level


def read_certificate(path: str | os.PathLike) -> dict[str, Any]:
    """Read a certificate file with size, type and nesting limits.

    Raises:
        CertificateError: if the file cannot be read or is not a well-formed certificate.
    """
    path = os.fspath(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise CertificateError(f"cannot read certificate {path!r}: not a regular file")
        if os.path.getsize(path) > MAX_BYTES:
            raise CertificateError(f"{path}: certificate larger than {MAX_BYTES} bytes")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CertificateError(f"cannot read certificate {path!r}: {exc.strerror or exc}") from None
    try:
        cert = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise CertificateError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(cert, dict):
        raise CertificateError(f"{path}: a certificate must be a JSON object")
    if _depth(cert) > _MAX_DEPTH:
        raise CertificateError(f"{path}: nesting too deep")
    if cert.get("format") != FORMAT:
        raise CertificateError(f"{path}: unknown format {cert.get('format')!r}, expected {FORMAT}")
    for key in ("inputs", "claim", "hash"):
        if not isinstance(cert.get(key), dict):
            raise CertificateError(f"{path}: missing or malformed {key!r}")
    return cert


def _refuse_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def _fraction(text: Any, what: str) -> Fraction | None:
    """A claim end as an exact rational, budget-checked before any arithmetic."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise CertificateError(f"claim {what} must be an exact decimal string")
    try:
        value = parse_decimal(f"claim {what}", text, max_digits=_CLAIM_DIGITS,
                              max_exponent=_CLAIM_EXPONENT)
    except ValueError as exc:
        raise CertificateError(str(exc)) from None
    return Fraction(value)


def _claim(cert: dict) -> tuple[Fraction | None, Fraction | None]:
    """The claimed ends, validated (cheaply) before any recomputation.

    Raises:
        CertificateError: on a malformed end or a claim of nothing.
    """
    claim = cert["claim"]
    lo, hi = _fraction(claim.get("lower"), "lower"), _fraction(claim.get("upper"), "upper")
    if lo is None and hi is None:
        raise CertificateError("the claim certifies nothing: both ends are null")
    return lo, hi  # an empty claim (lower > upper) is simply never reproduced


RETRY_TIGHTER = 10
"""A recomputed enclosure that overlaps the claim without lying inside it is recomputed once
with a target this many times tighter (the claim stays what is checked)."""
MIN_RETRY_REL_WIDTH = 1e-7


def _inside(b: Bound, claim: dict, lo_c: Fraction | None, hi_c: Fraction | None
            ) -> tuple[bool, bool]:
    """(the enclosure b lies inside the claimed [lo_c, hi_c], b overlaps it)."""
    lo_r, hi_r = b.lower.decimal("floor"), b.upper.decimal("ceiling")
    inside_lo = lo_c is None or (lo_r is not None and Fraction(lo_r) >= lo_c)
    inside_hi = hi_c is None or (hi_r is not None and Fraction(hi_r) <= hi_c)
    if claim.get("lower_infinite") and lo_c is None:
        inside_lo = True
    overlap = ((hi_r is None or lo_c is None or Fraction(hi_r) >= lo_c)
               and (lo_r is None or hi_c is None or Fraction(lo_r) <= hi_c))
    return inside_lo and inside_hi, overlap


def verify(path: str | os.PathLike, *, allow_files: bool = False
           ) -> tuple[bool, str, Bound | None]:
    """Verify a certificate: hash, claim, then recomputation and containment.

    Args:
        path: The certificate file.
        allow_files: Run the mechanism files a certificate's spec names (a user's or derived
            mechanism), each only if its SHA-256 matches the recorded one. Off by default:
            verifying an untrusted certificate never runs code.

    Returns:
        ``(ok, message, recomputed)``; ``ok`` is False on tampering or if the recomputed
        enclosure is not inside the claimed interval (an enclosure that overlaps the claim but
        pokes out of it is first recomputed once at a :data:`RETRY_TIGHTER` times tighter
        target: a certificate made by another library version, whose lattice stopped at
        another level, is then still checked on its merits).

    Raises:
        CertificateError: if the file is malformed.
    """
    cert = read_certificate(path)
    h = cert["hash"]
    if h.get("algorithm") != "sha256" or h.get("value") != canonical_hash(cert):
        return False, "TAMPERED: the content hash does not match (inputs or claims edited)", None
    inputs, claim = cert["inputs"], cert["claim"]
    query = inputs.get("query")
    if query not in ("epsilon", "delta"):
        raise CertificateError(f"unknown query {query!r}")
    lo_c, hi_c = _claim(cert)
    spec = spec_from_json(inputs.get("spec"))
    files = [e.get("file") for e in (spec.get("mechanism") or [] if isinstance(spec, dict)
                                      else []) if isinstance(e, dict) and "file" in e]
    if files and not allow_files:
        raise CertificateError(
            f"the certificate's spec names Python file(s) {files}: verify runs them only when "
            "allowed (--allow-python-files), after checking each against its recorded SHA-256"
        )
    if any(isinstance(e, dict) and "file" in e and "file_sha256" not in e
           for e in spec.get("mechanism", [])):
        raise CertificateError("a mechanism file in a certificate must carry its file_sha256")
    try:
        comp = parse_spec(spec, "certificate spec")
        value = float(inputs.get("value"))
    except (TypeError, ValueError) as exc:
        raise CertificateError(f"malformed inputs: {exc}") from None
    from .combine import certified_delta, certified_epsilon

    fn = certified_epsilon if query == "epsilon" else certified_delta
    rel = claim.get("inputs", {}).get("rel_width") if isinstance(claim.get("inputs"), dict) \
        else None
    try:  # the lattice target the certificate was made with (older certificates: the default)
        recomputed = fn(comp, value, rel_width=rel)
        inside, overlap = _inside(recomputed, claim, lo_c, hi_c)
        if not inside and overlap:
            # a proven enclosure that pokes out of a claim it overlaps decides nothing: another
            # library version's lattice ladder may stop at another level; one tighter target
            rel_t = (DEFAULT_REL_WIDTH if rel is None else float(rel)) / RETRY_TIGHTER
            if rel_t >= MIN_RETRY_REL_WIDTH:
                recomputed = fn(comp, value, rel_width=rel_t)
                inside, _ = _inside(recomputed, claim, lo_c, hi_c)
    except ValueError as exc:
        raise CertificateError(f"malformed inputs: {exc}") from None
    lo_r, hi_r = recomputed.lower.decimal("floor"), recomputed.upper.decimal("ceiling")
    if inside:
        return True, "verified: the recomputed enclosure lies inside the certified interval", \
            recomputed
    return False, (
        f"NOT REPRODUCED: recomputed [{lo_r}, {hi_r}] is not inside the certified "
        f"[{claim.get('lower')}, {claim.get('upper')}]"
    ), recomputed
