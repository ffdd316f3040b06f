#!/usr/bin/env python3
"""Summarizes a scale-suite run directory (Python standard library only).

Usage: report.py OUT

Reads OUT/raw.csv, loads.csv, checks.txt, env.txt and meta-<scale>.json (the dataset's
meta.json, else DATA_ROOT/<scale>/meta.json as env.txt names it); writes OUT/timings.csv (the median
of every column over the repetitions of each point), OUT/summary.md and the plots it links
(latency.svg: p50 and p99 by scenario; throughput.svg: ops/s by client count).
"""

import csv
import json
import math
import os
import statistics
import sys

KEY = ("scenario", "backend", "scale", "clients", "op")
NUM = ("count", "p50_ms", "p95_ms", "p99_ms", "max_ms", "throughput_ops_s", "errors")
READS = ("point_lookup", "ref_traversal", "aggregate", "predicate_scan", "pull", "as_of",
         "since", "input_bindings")
ORDER = READS + ("write_mixed", "concurrency_sweep", "cold_vs_warm")
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
          "#ff9da7")


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def medians(raw):
    groups = {}
    for r in raw:
        groups.setdefault(tuple(r[k] for k in KEY), []).append(r)
    out = []
    for key, rows in groups.items():
        o = dict(zip(KEY, key))
        o["n_datoms"] = rows[0]["n_datoms"]
        for c in NUM + ("cpu_p50_ms",):
            vals = [float(r[c]) for r in rows if r.get(c) not in (None, "")]
            o[c] = statistics.median(vals) if vals else None
        o["reps"] = len(rows)
        o["note"] = "; ".join(sorted({r["note"] for r in rows if r.get("note")}))
        out.append(o)
    return out


def write_timings(path, rows):
    cols = ("scenario", "backend", "scale", "n_datoms", "clients", "op") + NUM + (
        "reps", "note", "cpu_p50_ms")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([fmt_csv(r[c]) for c in cols])


def fmt_csv(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))
    return v


def ms(v):
    if v is None:
        return ""
    v = float(v)
    # Four decimals (0.1 us) below 0.1 ms: point lookups take a few microseconds, and at
    # 1 us resolution the ratio of two of them is mostly rounding.
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3f}" if v >= 0.1 else f"{v:.4f}"


def rate(v):
    v = float(v)
    return f"{v:,.0f}" if v >= 1000 else f"{v:.1f}"


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def series_of(rows):
    """(backend, scale) pairs in first-seen order."""
    seen = []
    for r in rows:
        k = (r["backend"], r["scale"])
        if k not in seen:
            seen.append(k)
    return seen


def latency_svg(rows, path):
    """Grouped bars: p50 per read scenario and series, log scale, with a p99 tick."""
    reads = [r for r in rows if r["scenario"] in READS and r["p50_ms"] > 0]
    if not reads:
        return False
    series = series_of(reads)
    scen = [s for s in READS if any(r["scenario"] == s for r in reads)]
    lo = min(r["p50_ms"] for r in reads)
    hi = max(r["p99_ms"] for r in reads)
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if e1 == e0:
        e1 += 1
    W, H, L, B, T = 980, 440, 70, 90, 40
    pw, ph = W - L - 20, H - T - B
    y = lambda v: T + ph - (math.log10(v) - e0) / (e1 - e0) * ph
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">'
           f'Latency by scenario: p50 bars, p99 ticks (ms, log scale)</text>']
    for e in range(e0, e1 + 1):
        yy = y(10 ** e)
        out.append(f'<line x1="{L}" x2="{L+pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L-6}" y="{yy+4:.1f}" text-anchor="end">{10**e:g}</text>')
    gw = pw / len(scen)
    bw = gw * 0.8 / len(series)
    for i, s in enumerate(scen):
        gx = L + i * gw + gw * 0.1
        out.append(f'<text x="{L + i*gw + gw/2:.1f}" y="{T+ph+16}" text-anchor="middle">'
                   f'{esc(s)}</text>')
        for j, (b, sc) in enumerate(series):
            r = next((r for r in reads if r["scenario"] == s and r["backend"] == b
                      and r["scale"] == sc), None)
            if not r:
                continue
            x = gx + j * bw
            y50, y99 = y(r["p50_ms"]), y(max(r["p99_ms"], r["p50_ms"]))
            out.append(f'<rect x="{x:.1f}" y="{y50:.1f}" width="{bw*0.9:.1f}" '
                       f'height="{T+ph-y50:.1f}" fill="{COLORS[j % len(COLORS)]}">'
                       f'<title>{esc(b)} {esc(sc)} {esc(s)}: p50 {ms(r["p50_ms"])} ms, '
                       f'p99 {ms(r["p99_ms"])} ms</title></rect>')
            out.append(f'<line x1="{x:.1f}" x2="{x+bw*0.9:.1f}" y1="{y99:.1f}" y2="{y99:.1f}" '
                       f'stroke="black" stroke-width="2"/>')
    out.append(f'<line x1="{L}" x2="{L}" y1="{T}" y2="{T+ph}" stroke="black"/>')
    out.append(f'<line x1="{L}" x2="{L+pw}" y1="{T+ph}" y2="{T+ph}" stroke="black"/>')
    for j, (b, sc) in enumerate(series):
        lx = L + j * 170
        out.append(f'<rect x="{lx}" y="{H-40}" width="12" height="12" '
                   f'fill="{COLORS[j % len(COLORS)]}"/>')
        out.append(f'<text x="{lx+16}" y="{H-30}">{esc(b)} / {esc(sc)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def throughput_svg(rows, path):
    """Lines: concurrency_sweep ops/s by client count, one per series."""
    sweep = [r for r in rows if r["scenario"] == "concurrency_sweep"]
    if not sweep:
        return False
    series = series_of(sweep)
    clients = sorted({int(r["clients"]) for r in sweep})
    hi = max(r["throughput_ops_s"] for r in sweep) or 1
    step = nice_step(hi / 5)
    top = step * math.ceil(hi * 1.05 / step)
    W, H, L, B, T = 720, 400, 80, 80, 40
    pw, ph = W - L - 30, H - T - B
    x = lambda c: L + (clients.index(c) + 0.5) * pw / len(clients)
    y = lambda v: T + ph - v / top * ph
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">'
           f'Throughput by clients: concurrency_sweep (q1, q2, pull), ops/s</text>']
    for k in range(int(round(top / step)) + 1):
        v = step * k
        out.append(f'<line x1="{L}" x2="{L+pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L-6}" y="{y(v)+4:.1f}" text-anchor="end">{rate(v)}</text>')
    for c in clients:
        out.append(f'<text x="{x(c):.1f}" y="{T+ph+16}" text-anchor="middle">{c}</text>')
    out.append(f'<text x="{L+pw/2}" y="{T+ph+32}" text-anchor="middle">clients</text>')
    for j, (b, sc) in enumerate(series):
        pts = sorted((int(r["clients"]), r["throughput_ops_s"]) for r in sweep
                     if r["backend"] == b and r["scale"] == sc)
        color = COLORS[j % len(COLORS)]
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="' +
                   " ".join(f"{x(c):.1f},{y(v):.1f}" for c, v in pts) + '"/>')
        for c, v in pts:
            out.append(f'<circle cx="{x(c):.1f}" cy="{y(v):.1f}" r="3" fill="{color}">'
                       f'<title>{esc(b)} {esc(sc)} {c} clients: {rate(v)} ops/s</title></circle>')
        lx = L + j * 170
        out.append(f'<rect x="{lx}" y="{H-30}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{lx+16}" y="{H-20}">{esc(b)} / {esc(sc)}</text>')
    out.append(f'<line x1="{L}" x2="{L}" y1="{T}" y2="{T+ph}" stroke="black"/>')
    out.append(f'<line x1="{L}" x2="{L+pw}" y1="{T+ph}" y2="{T+ph}" stroke="black"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def nice_step(raw):
    """The smallest 1, 2 or 5 times a power of ten at or above `raw`."""
    e = 10 ** math.floor(math.log10(raw))
    return next(m * e for m in (1, 2, 5, 10) if m * e >= raw)


def table(rows):
    cpu = any(r["cpu_p50_ms"] is not None for r in rows)  # runs before cpu_p50_ms had none
    head = ("| backend | scale | datoms | clients | op | n | p50 ms | p95 ms | p99 ms | max ms "
            "| ops/s | errors | reps |" + (" cpu p50 ms |" if cpu else "") + " note |")
    lines = [head, "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|" +
             ("---:|" if cpu else "") + "---|"]
    for r in rows:
        lines.append(f"| {r['backend']} | {r['scale']} | {int(r['n_datoms']):,} | {r['clients']} "
                     f"| {r['op']} | {int(r['count'])} | {ms(r['p50_ms'])} | {ms(r['p95_ms'])} "
                     f"| {ms(r['p99_ms'])} | {ms(r['max_ms'])} | {rate(r['throughput_ops_s'])} "
                     f"| {int(r['errors'])} | {r['reps']} |" +
                     (f" {ms(r['cpu_p50_ms'])} |" if cpu else "") + f" {r['note']} |")
    return lines


def headline(rows, names=READS):
    """p50 per scenario of `names` (rows) by backend and scale (columns)."""
    series = series_of([r for r in rows if r["scenario"] in names])
    if not series:
        return []
    # Per scale with both: the embedded (and embedded-cache) p50 over the sqlite-sql p50
    # (the hand-written SQL on the same store file).
    # mentat on PostgreSQL (pg) over the hand-written SQL on the same schema (pg-sql).
    base = {"embedded": "sqlite-sql", "embedded-cache": "sqlite-sql",
            "embedded-nocounts": "sqlite-sql", "pg": "pg-sql"}
    ratios = [(b, sc) for b in base
              for sc in dict.fromkeys(s for _, s in series)
              if (b, sc) in series and (base[b], sc) in series]
    lines = ["| scenario | " + " | ".join(f"{b} {s} p50 ms" for b, s in series) +
             "".join(f" | {b} / {base[b]} {sc}" for b, sc in ratios) + " |",
             "|---|" + "---:|" * (len(series) + len(ratios))]

    def point(s, b, sc):
        r = next((r for r in rows if r["scenario"] == s and r["backend"] == b
                  and r["scale"] == sc and r["clients"] == "1"), None)
        ok = r is not None and "ceiling" not in r["note"] and r["count"] > 0
        return r, ok

    for s in names:
        cells = []
        for b, sc in series:
            r, ok = point(s, b, sc)
            if r is None:
                cells.append("")
            elif "ceiling" in r["note"]:
                cells.append("ceiling")
            elif r["count"] == 0:
                cells.append("error")
            else:
                cpu = f" ({ms(r['cpu_p50_ms'])})" if r["cpu_p50_ms"] is not None else ""
                cells.append(ms(r["p50_ms"]) + cpu)
        for b, sc in ratios:
            (e, eok), (q, qok) = point(s, b, sc), point(s, base[b], sc)
            ok = eok and qok and q["p50_ms"] > 0
            x = e["p50_ms"] / q["p50_ms"] if ok else None
            cells.append("" if x is None else f"{x:.2f}" if x >= 0.1 else f"{x:.1g}")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    rows = medians(read_csv(os.path.join(out, "raw.csv")))
    write_timings(os.path.join(out, "timings.csv"), rows)
    loads = read_csv(os.path.join(out, "loads.csv"))
    env = open(os.path.join(out, "env.txt")).read() if os.path.exists(
        os.path.join(out, "env.txt")) else ""
    checks = open(os.path.join(out, "checks.txt")).read().splitlines() if os.path.exists(
        os.path.join(out, "checks.txt")) else []

    md = ["# mentat scale benchmark", ""]
    md += ["## Environment (abridged; full detail in env.txt)", "", "```"]
    md += [l for l in env.splitlines() if not l.startswith("env:")][:40]
    md += ["```", ""]
    data_root = next((l.split(":", 1)[1].strip() for l in env.splitlines()
                      if l.startswith("DATA_ROOT:")), "")
    scales = sorted({l["scale"] for l in loads} | {r["scale"] for r in rows},
                    key=lambda s: ("xs", "s", "m", "l").index(s) if s in ("xs", "s", "m", "l")
                    else 9)
    md += ["## Dataset", "", "```"]
    for sc in scales:
        # The copy run.sh keeps beside the results, else the dataset under DATA_ROOT.
        meta_path = os.path.join(out, f"meta-{sc}.json")
        if not os.path.exists(meta_path) and data_root:
            meta_path = os.path.join(data_root, sc, "meta.json")
        if os.path.exists(meta_path):
            m = json.load(open(meta_path))
            md.append(f"{sc}: {m['n_datoms']} datoms ({m['n_users']} users, {m['n_issues']} "
                      f"issues, {m['n_labels']} labels, {m['n_label_refs']} label refs, "
                      f"{m['n_hist']} history updates, {m['n_tx']} transactions)")
    md += ["```", ""]

    npass = sum(": PASS" in l for l in checks)
    nfail = sum(": FAIL" in l for l in checks)
    nskip = sum(": SKIP" in l for l in checks)
    md += ["## Correctness checks", "",
           f"{npass} PASS, {nfail} FAIL, {nskip} SKIP (every line in checks.txt)", ""]
    md += [f"    {l}" for l in checks if ": FAIL" in l or ": SKIP" in l][:40]
    if nfail or nskip:
        md.append("")

    hl = headline(rows)
    if hl:
        md += ["## Headline: p50 latency of the read scenarios (1 client)", "",
               "Wall time on the monotonic clock" + (
                   "; in brackets the CPU time of the calling thread (the part that does not "
                   "depend on how busy the machine was)." if any(
                       r["cpu_p50_ms"] is not None for r in rows) else "."), ""]
        md += hl + [""]
    # The variants family (benchmarks/scale/variants.cc), in the order they ran.
    variants = list(dict.fromkeys(r["scenario"] for r in rows
                                  if r["scenario"].startswith("variant/")))
    vl = headline(rows, variants) if variants else []
    if vl:
        md += ["## Variants: p50 latency (1 client)", "",
               "Queries beyond the eight, each beside its hand-written SQL on the same store "
               "file (sqlite-sql) or PostgreSQL schema (pg-sql); the ratio columns are mentat's p50 "
               "over that SQL's p50. "
               "\"ceiling\": the first call took longer than PROBE_S.", ""]
        md += vl + [""]
    plots = []
    if latency_svg(rows, os.path.join(out, "latency.svg")):
        plots.append("![latency by scenario](latency.svg)")
    if throughput_svg(rows, os.path.join(out, "throughput.svg")):
        plots.append("![throughput by clients](throughput.svg)")
    if plots:
        md += ["## Plots", ""] + [p + "\n" for p in plots]

    if loads:
        md += ["## bulk_load", "",
               "| backend | scale | datoms | transactions | wall s | datoms/s | store size | note |",
               "|---|---|---:|---:|---:|---:|---:|---|"]
        for l in loads:
            md.append(f"| {l['backend']} | {l['scale']} | {int(l['n_datoms']):,} | {l['n_tx']} "
                      f"| {float(l['wall_s']):,.1f} | {float(l['datoms_per_s']):,.0f} "
                      f"| {int(l['store_bytes'])/2**20:,.1f} MiB | {l['note']} |")
        md.append("")
    for s in ORDER:
        sr = [r for r in rows if r["scenario"] == s]
        if sr:
            md += [f"## {s}", ""] + table(sr) + [""]
    md += ["Figures are medians over the repetitions (timings.csv); every repetition is in "
           "raw.csv. Latencies are per call on a monotonic clock; cpu p50 is the median CPU "
           "time of the calling thread per call; ops/s is the calls of all clients divided by "
           "the measured window.", ""]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
