r"""The reporting half of benchmarks/compare_peers.py (issue 13): the method labels, the checks
of every answer against the certified interval (verdicts, AEA honesty, the certified drop-ins)
and the Markdown tables. Pure functions of the JSON that compare_peers.py writes, so a table can
be regenerated from earlier runs (``compare_peers.py --reuse FILE``) without recomputing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

OURS = ("aea", "saddlepoint", "auto", "certified")
PEERS = ("pld", "pld-optimistic", "rdp", "prv", "autodp")
METHODS = OURS + PEERS
OPTIONAL = ("dropin-certified", "dropin-opacus")
"""Run only when named in ``--methods`` (each a certified run per case, like ``certified``):
``certify.interop.dp_accounting``'s CertifiedPrivacyAccountant fed dp_accounting's events, and
``certify.interop.opacus``'s CertifiedAccountant fed ``step()`` calls (DP-SGD cases only)."""
OPACUS_KINDS = ("dpsgd", "hetero")  # what Opacus accounts: Poisson-sampled Gaussian steps
ENCLOSURES = ("certified", "dropin-certified", "dropin-opacus")
"""The methods whose results are certified enclosures [lower, upper] of eps."""
SAME_QUANTITY = ("dpsgd", "hetero", "laplace")
"""Case kinds whose drop-in enclosures are of the very eps ``certified`` encloses (the events'
parameters are the same binary64 numbers). Not randomized response: dp_accounting's event
carries p = 2/(e^eps0 + 1) as a float and the drop-in accounts eps0 = log((2 - p)/p) rounded
up, a dominating pair a few ulps away, so its enclosure is of a (slightly) different number."""
WITHIN = 1e-3  # issue 13: the drop-ins' answers within 0.1% of the truth
LABELS = {
    "aea": "AEA", "saddlepoint": "saddlepoint", "auto": "auto", "certified": "certified",
    "pld": "dp_accounting PLD (pessimistic)", "pld-optimistic": "dp_accounting PLD (optimistic)",
    "rdp": "dp_accounting RDP", "prv": "prv_accountant", "autodp": "autodp",
    "dropin-certified": "CertifiedPrivacyAccountant (drop-in)",
    "dropin-opacus": "Opacus CertifiedAccountant (drop-in)",
}
MISS = 0.01  # a silent miss: AEA more than 1% off the certified interval without a warning
CLOSE = 0.005  # "within 0.5%": the answers whose warnings count against the one-third goal


def _own_interval(res: dict) -> tuple[float, float] | None:
    if "lower" not in res or res.get("lower") is None or res.get("upper") is None:
        return None
    return float(res["lower"]), float(res["upper"])


def interval(row: dict) -> tuple[float, float] | None:
    """The certified interval of a row: the intersection of every certified enclosure of its eps
    measured for it (``certified`` and, for :data:`SAME_QUANTITY` kinds, the certified
    drop-ins; each is proven, so their intersection is; ends as floats, for the verdicts).

    Raises:
        ValueError: if two enclosures of the same eps are disjoint (one of them is wrong).
    """
    kinds = ENCLOSURES if row["case"].get("kind") in SAME_QUANTITY else ENCLOSURES[:1]
    ivs = [iv for m in kinds if (iv := _own_interval(row["results"].get(m, {})))]
    if not ivs:
        return None
    lo, hi = max(iv[0] for iv in ivs), min(iv[1] for iv in ivs)
    if lo > hi:
        raise ValueError(f"{row['case']['id']}: disjoint certified enclosures {ivs} (a bug)")
    return lo, hi


def float_up(decimal: str) -> float:
    """The smallest binary64 number >= an exact decimal string."""
    exact = Fraction(decimal)
    x = float(exact)
    return math.nextafter(x, math.inf) if Fraction(x) < exact else x


def is_upper_end(res: dict) -> bool:
    """True iff a result's ``eps`` is its own interval's upper end rounded up to a float (checked
    here from the exact decimal end, independently of the worker)."""
    return res.get("upper") is not None and res.get("eps") == float_up(res["upper"])


def rel_width(res: dict) -> float | None:
    """(hi - lo)/lo of a result's own certified interval (None without one; inf if lo <= 0)."""
    iv = _own_interval(res)
    if iv is None:
        return None
    return (iv[1] - iv[0]) / iv[0] if iv[0] > 0 else math.inf


def verdict(value: float | None, iv: tuple[float, float] | None) -> str:
    """``safe`` (>= upper), ``unsafe`` (< lower), ``inside``, or ``-`` (nothing to check)."""
    if value is None or iv is None or not math.isfinite(iv[0]):
        return "-"
    if value >= iv[1]:
        return "safe"
    if value < iv[0]:
        return "unsafe"
    return "inside"


def off_interval(value: float, iv: tuple[float, float]) -> float:
    """Relative distance of ``value`` to the interval (0 inside)."""
    lo, hi = iv
    if value < lo:
        return (lo - value) / lo
    if value > hi:
        return (value - hi) / hi
    return 0.0


def honesty(rows: list[dict]) -> dict:
    """Issue 13's AEA numbers: silent misses and the warned share of close answers."""
    checked, misses, close, close_warned, warned_far = 0, [], 0, 0, 0
    for row in rows:
        iv = interval(row)
        a = row["results"].get("aea", {})
        if iv is None or "eps" not in a or not math.isfinite(iv[1]):
            continue
        checked += 1
        off = off_interval(a["eps"], iv)
        warned = a.get("warnings", 0) > 0
        if off > MISS and not warned:
            misses.append(row["case"]["id"])
        if off > MISS and warned:
            warned_far += 1
        if off <= CLOSE:
            close += 1
            close_warned += warned
    return {"checked": checked, "silent_misses": misses, "close": close,
            "close_warned": close_warned, "far_warned": warned_far,
            "close_warned_share": close_warned / close if close else 0.0}


# ------------------------------------------------------------------------------------------
# Reporting
# ------------------------------------------------------------------------------------------


def fmt_eps(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.6g}"


def fmt_s(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{1e3 * t:.3g} ms" if t < 1 else f"{t:.3g} s"


def _cell(row: dict, method: str) -> str:
    r = row["results"].get(method)
    if r is None:
        return "-"
    if "error" in r and "eps" not in r:
        return "fails: " + r["error"].split(":")[0]
    iv = interval(row)
    if method == "certified":
        if _own_interval(r) is None:
            return "-"
        stale = "" if "rel_width" in r else " *"  # measured before the rel-width target
        return f"[{r['lower'][:10]}, {r['upper'][:10]}]{stale}"
    text = fmt_eps(r["eps"])
    if method == "prv" and "lower" in r:
        text += f" [{r['lower']:.5g}, {r['upper']:.5g}]"
    v = verdict(r["eps"], iv)
    if v != "-":
        text += f" {v}"
    if method == "aea" and r.get("warnings"):
        text += " (warns)"
    return text


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _pct(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{100 * x:.2g}%"


def _wall_cpu(res: dict) -> str:
    """Cold wall time, with the process's CPU time when measured (``cold_cpu_s``)."""
    text = fmt_s(res.get("cold_s"))
    return text + (f" (cpu {fmt_s(res['cold_cpu_s'])})" if "cold_cpu_s" in res else "")


def dropin_summary(rows: list[dict]) -> dict:
    """Issue 13's drop-in numbers over the rows where a certified drop-in ran: does it return
    its interval's upper end (rounded up), is that interval within 0.1% (then the answer is
    proven within 0.1% of the truth, which lies in the interval), is it the ``certified``
    method's interval, and its cold time against dp_accounting's PLD."""
    out: dict[str, Any] = {"cases": 0, "upper_end": 0, "within": 0, "same_as_certified": 0,
                           "compared": 0, "widths": [], "ratios": [], "cpu_ratios": [],
                           "rel_widths": set(),
                           "opacus_same": 0, "opacus_cases": 0, "failed": 0}
    for row in rows:
        res = row["results"]
        d = res.get("dropin-certified", {})
        if row["case"].get("kind") != "dpsgd":  # issue 13: the DP-SGD grid
            continue
        if "eps" not in d:
            out["failed"] += "error" in d
            continue
        out["cases"] += 1
        out["upper_end"] += is_upper_end(d)
        w = rel_width(d)
        if w is not None:
            out["widths"].append(w)
            out["within"] += w <= WITHIN
        if d.get("rel_width") is not None:
            out["rel_widths"].add(d["rel_width"])
        c = res.get("certified", {})
        if "rel_width" in c and _own_interval(c):  # a certified run with the same settings
            out["compared"] += 1
            out["same_as_certified"] += (c["lower"], c["upper"]) == (d["lower"], d["upper"])
        o = res.get("dropin-opacus", {})
        if "eps" in o:
            out["opacus_cases"] += 1
            out["opacus_same"] += (o["lower"], o["upper"], o["eps"]) == (
                d["lower"], d["upper"], d["eps"])
        pld = res.get("pld", {})
        if pld.get("cold_s") and d.get("cold_s"):
            out["ratios"].append(d["cold_s"] / pld["cold_s"])
        if pld.get("cold_cpu_s") and d.get("cold_cpu_s"):
            out["cpu_ratios"].append(d["cold_cpu_s"] / pld["cold_cpu_s"])
    out["rel_widths"] = sorted(out["rel_widths"])
    return out


def dropin_lines(rows: list[dict]) -> list[str]:
    rows = [r for r in rows if "dropin-certified" in r["results"]
            or "dropin-opacus" in r["results"]]
    if not rows:
        return []
    lines = ["## Certified drop-ins (issue 13)", "",
             "`CertifiedPrivacyAccountant` (certify.interop.dp_accounting) composed with "
             "dp_accounting's own events (`SelfComposedDpEvent(PoissonSampledDpEvent(q, "
             "GaussianDpEvent(sigma)), m)`, ADD_OR_REMOVE_ONE) and Opacus's `CertifiedAccountant`"
             " (certify.interop.opacus) fed m `step()` calls (stepping timed apart: `steps`; the "
             "timed query rebuilds the accountant from that history). Each returns the upper "
             "end of its certified interval [lo, hi], rounded up; the truth lies in [lo, hi], "
             "so (hi - lo)/lo <= 0.1% proves the answer within 0.1% of it. `= certified`: the "
             "drop-in's interval is the `certified` column's, bit for bit (same run settings; "
             "`eps0 from p`: randomized response, whose dp_accounting event carries p, so the "
             "drop-in accounts eps0 = log((2 - p)/p) rounded up, a few ulps above the "
             "`certified` column's eps0).",
             ""]
    body = []
    for r in rows:
        res = r["results"]
        d, o, p = (res.get(m, {}) for m in ("dropin-certified", "dropin-opacus", "pld"))
        c = res.get("certified", {})
        w = rel_width(d)
        if "eps" not in d:
            dp_cells = ["fails: " + d["error"].split(":")[0] if "error" in d else "-"] + ["-"] * 3
        else:
            same = ("-" if not ("rel_width" in c and _own_interval(c)) else
                    "eps0 from p" if r["case"].get("kind") not in SAME_QUANTITY else
                    "yes" if (c["lower"], c["upper"]) == (d["lower"], d["upper"]) else "NO")
            dp_cells = [fmt_eps(d["eps"]) + ("" if is_upper_end(d) else " (NOT hi)"),
                        _pct(w) + (" yes" if w is not None and w <= WITHIN else " no"),
                        same, _wall_cpu(d)]
        if "eps" in o:
            op = [fmt_eps(o["eps"]) + ("" if is_upper_end(o) else " (NOT hi)"),
                  f"{_wall_cpu(o)} (steps {fmt_s(o.get('steps_s'))})"]
        else:
            op = ["fails: " + o["error"].split(":")[0] if "error" in o else "-", "-"]
        ratio = (f"{d['cold_s'] / p['cold_s']:.3g}x" if d.get("cold_s") and p.get("cold_s")
                 else "-")
        if d.get("cold_cpu_s") and p.get("cold_cpu_s"):
            ratio += f" (cpu {d['cold_cpu_s'] / p['cold_cpu_s']:.3g}x)"
        body.append([r["case"]["id"], *dp_cells, *op, fmt_eps(p.get("eps")), _wall_cpu(p),
                     ratio])
    lines += _table(["case", "dp_accounting drop-in eps", "(hi - lo)/lo, within 0.1%",
                     "= certified", "cold", "Opacus drop-in eps", "cold",
                     "dp_accounting PLD eps", "PLD cold", "drop-in / PLD (cold)"], body)
    sm = dropin_summary(rows)
    ws, rs = sorted(sm["widths"]), sorted(sm["ratios"])
    lines += ["", "On the DP-SGD grid:", "",
              f"- dp_accounting drop-in answered {sm['cases']} cases (did not finish: "
              f"{sm['failed']}); returned its interval's "
              f"upper end (rounded up) in {sm['upper_end']}; proven within 0.1% of the truth in "
              f"{sm['within']} (widest interval {_pct(ws[-1] if ws else None)}, median "
              f"{_pct(ws[len(ws) // 2] if ws else None)}); requested rel-width "
              f"{', '.join(f'{x:g}' for x in sm['rel_widths']) or '-'} (the `certified` default)",
              f"- same interval as the `certified` method run with the same settings: "
              f"{sm['same_as_certified']} of {sm['compared']} compared; Opacus drop-in identical "
              f"to the dp_accounting drop-in (interval and answer): {sm['opacus_same']} of "
              f"{sm['opacus_cases']}",
              f"- cold time over dp_accounting PLD's (pessimistic, default discretization) in the "
              f"same run: median {rs[len(rs) // 2]:.3g}x, range {rs[0]:.3g}x .. {rs[-1]:.3g}x"
              if rs else "- no PLD time to compare"]
    cs = sorted(sm["cpu_ratios"])
    if cs:
        lines.append(f"- the same in process CPU time (less sensitive to contention), where "
                     f"measured ({len(cs)} cases): median {cs[len(cs) // 2]:.3g}x, range "
                     f"{cs[0]:.3g}x .. {cs[-1]:.3g}x")
    lines.append("")
    return lines


def markdown(data: dict, command: str) -> str:
    rows = data["rows"]
    methods = [m for m in METHODS + OPTIONAL if any(m in r["results"] for r in rows)]
    lines = ["# This toolkit vs dp_accounting, prv_accountant, autodp", "",
             f"Generated by `{command}` (benchmarks/compare_peers.py). Versions: "
             + ", ".join(f"{k} {v}" for k, v in data["meta"]["versions"].items())
             + f"; {data['meta']['cpus']} CPUs (shared: timings are contended).", ""]
    if data["missing"]:
        lines += ["Missing peers: " + "; ".join(f"{k} ({v})" for k, v in data["missing"].items()),
                  ""]
    lines += ["## eps at delta, checked against the certified interval", "",
              "`safe`: at or above the certified upper end (proven not to under-report); "
              "`unsafe`: below the certified lower end (proven to under-report); `inside`: "
              "between the ends. AEA `(warns)`: the answer carries a warning. The certified "
              "interval of a row is the intersection of its certified enclosures (the "
              "`certified` column and, but for randomized response, the certified drop-ins, "
              "when run); `*`: a `certified` "
              "interval measured before the rel-width target (a looser fixed grid).", ""]
    lines += _table(["case", "delta", *(LABELS[m] for m in methods)],
                    [[r["case"]["id"], f"{r['case']['delta']:g}",
                      *(_cell(r, m) for m in methods)] for r in rows])
    lines += ["", "## Time per query (cold: first query in a fresh process; warm: repeated)", "",
              "Import time is excluded and listed separately below. Ratios: dp_accounting PLD "
              "(pessimistic) cold time over ours.", ""]
    trows = []
    for r in rows:
        cells = [r["case"]["id"]]
        for m in methods:
            res = r["results"].get(m, {})
            cells.append(f"{fmt_s(res.get('cold_s'))} / {fmt_s(res.get('warm_s'))}"
                         if "cold_s" in res else "-")
        pld = r["results"].get("pld", {}).get("cold_s")
        for m in ("aea", "saddlepoint"):
            own = r["results"].get(m, {}).get("cold_s")
            cells.append(f"{pld / own:.3g}x" if pld and own else "-")
        trows.append(cells)
    lines += _table(["case", *(f"{LABELS[m]} cold / warm" for m in methods),
                     "PLD / AEA (cold)", "PLD / saddlepoint (cold)"], trows)
    imports = {}
    for r in rows:
        for m, res in r["results"].items():
            if "import_s" in res:
                imports.setdefault(m, []).append(res["import_s"])
    lines += ["", "Import (median per process): " + ", ".join(
        f"{LABELS[m]} {fmt_s(sorted(v)[len(v) // 2])}" for m, v in imports.items()), ""]
    h = data["honesty"]
    lines += ["## AEA honesty (issue 13)", "",
              f"- checked against a finite certified interval: {h['checked']} results",
              f"- silent misses (off the interval by > 1% with no warning): "
              f"{len(h['silent_misses'])}" + (f" ({', '.join(h['silent_misses'])})"
                                              if h["silent_misses"] else ""),
              f"- results within 0.5% of the interval: {h['close']}, of which "
              f"{h['close_warned']} warn ({100 * h['close_warned_share']:.0f}%; goal <= 33%)",
              f"- results off by > 1% that warn: {h['far_warned']}", ""]
    fails = []
    for r in rows:
        if not r["case"].get("exact"):
            continue
        iv = interval(r)
        for m in methods:
            res = r["results"].get(m, {})
            if m != "certified" and "eps" in res and verdict(res["eps"], iv) == "unsafe":
                kind = " (an estimate, labelled as one)" if m in ("aea", "saddlepoint") else ""
                fails.append(f"- {r['case']['id']}: {LABELS[m]}{kind} gives "
                             f"{fmt_eps(res['eps'])}, "
                             f"below the exact value in [{iv[0]:.6g}, {iv[1]:.6g}]")
    lines += dropin_lines(rows)
    lines += ["## Peers' failures on cases with exact answers", ""]
    lines += fails or ["- none"]
    lines += ["", "dp_accounting's PLD accountant composes a `RandomizedResponseDpEvent` once "
              "whatever its count (0.6.0), which is why it under-reports randomized response.",
              ""]
    if "delta_array" in data:
        d = data["delta_array"]
        lines += ["## The public delta(comp, eps_array)", "",
                  f"`numeric.delta(comp, eps, method='aea')` for {d['n']:.0e} eps values: "
                  f"{fmt_s(d['public_s'])}; its kernel (`q_only_delta` per pair order): "
                  f"{fmt_s(d['kernel_s'])}; ratio {d['ratio']:.2f} (median of 5)"
                  + ("; from the earlier run reused." if d.get("reused") else "."), ""]
    lines += ["Assembled from the earlier runs below (`--no-run`: nothing computed here)."
              if data["meta"].get("no_run") else
              f"Wall time of this run: {data['meta']['wall_s']:.0f} s."]
    if data["meta"].get("reused_from"):
        lines += ["Results reused (with their timings) from earlier runs of the same script: "
                  + ", ".join(f"`{os.path.basename(p)}`" for p in data["meta"]["reused_from"])
                  + "."]
    lines += data["meta"].get("notes", [])
    lines.append("")
    return "\n".join(lines)
