#!/usr/bin/env python3
"""Measures cross-platform judging rules on the corpus's five H100/MI300X pairs
(docs/CROSS_PLATFORM.md, "What one pair can and cannot tell").

Input (argv[1]): JSON lines, one per row `judge_cross_platform` judges, made by
a build with this line added after `expected_ratio(...)?` in
src/gate/judge/rows.rs (measurement only, never committed: the library does
not print):

    eprintln!("XPDUMP {}", serde_json::json!({"w": workload, "name": side.key.name,
        "cat": side.category.as_str(), "bt": op.baseline.time_us,
        "ct": op.candidate.time_us, "ratio": op.estimate.ratio,
        "b": op.estimate.bounds().map(|b| (b.interval.low, b.interval.high)),
        "exp": expected, "btot": baseline_total_us, "thr": threshold_percent}));

and `tracegate check --policy policies/cross-platform.yaml` run on the ten
directed pairs, each stderr line `XPDUMP {...}` written as
`{"dir": "h100>mi300", "model": MODEL, "d": {...}}`.

A rule flags a row when the low end of its interval (the point estimate with
one sample a side) exceeds expected × calibration × slack and its excess over
that is ≥ 1% of the baseline's GPU time (min_impact_percent). Calibration:
`none` (roofline alone), `workload` (impact-weighted median of
observed/expected over the workload's other ops), `kind` (the same over the
other ops of its kind: GEMM, attention, convolution, memory-bound; the
workload's when none), `category` (tracegate's categories). "Other ops" leaves
out every row of the op judged (leave-one-out). A ×1.5 case scales the
candidate time, ratio and interval of every row of one op name holding ≥ 5%
of GPU time on either side.
"""
import collections
import json
import math
import sys

KIND = {"GEMM": "gemm", "SDPA_fwd": "sdpa", "SDPA_bwd": "sdpa", "CONV_fwd": "conv", "CONV_bwd": "conv"}


def load(path):
    pairs = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        pairs[(r["model"], r["dir"])].append(r["d"])
    return pairs


def group(cat, mode):
    return {"category": cat, "kind": KIND.get(cat, "memory")}.get(mode, "all")


def wmedian(values):
    values = sorted(values)
    total, acc = sum(w for _, w in values), 0.0
    for x, w in values:
        acc += w
        if acc >= total / 2:
            return x


def calibration(rows, row, mode):
    if mode == "none":
        return 1.0

    def pool(m):
        return [(math.log(r["ratio"] / r["exp"]), r["bt"]) for r in rows
                if r["name"] != row["name"] and (m == "all" or group(r["cat"], m) == group(row["cat"], m))]

    p = pool(mode if mode != "workload" else "all")
    if not p:
        p = pool("all")
    return math.exp(wmedian(p)) if p else 1.0


def flagged(rows, slack, mode, slowed=None, factor=1.5):
    rows = [dict(r) for r in rows]
    for r in rows:
        if r["name"] == slowed:
            r["ratio"] *= factor
            r["ct"] *= factor
            if r["b"]:
                r["b"] = [r["b"][0] * factor, r["b"][1] * factor]
    out = set()
    for r in rows:
        expected = r["exp"] * calibration(rows, r, mode)
        tolerance = max(slack, 1 + r["thr"] / 100)
        low = r["b"][0] if r["b"] else r["ratio"]
        excess = (r["ct"] - expected * r["bt"]) / r["btot"] * 100
        if low > expected * tolerance and excess >= 1.0:
            out.add(r["name"])
    return out


def by_op(pairs):
    """One row per op name: its shapes' times summed, expected ratio and low
    end weighted by baseline time."""
    out = {}
    for key, rows in pairs.items():
        names = collections.defaultdict(list)
        for r in rows:
            names[r["name"]].append(r)
        merged = []
        for name, rs in names.items():
            bt, ct = sum(r["bt"] for r in rs), sum(r["ct"] for r in rs)
            low = sum((r["b"][0] if r["b"] else r["ratio"]) * r["bt"] for r in rs) / bt
            merged.append(dict(name=name, cat=rs[0]["cat"], bt=bt, ct=ct, ratio=ct / bt,
                               exp=sum(r["exp"] * r["bt"] for r in rs) / bt, b=[low, 0],
                               btot=rs[0]["btot"], thr=min(r["thr"] for r in rs)))
        out[key] = merged
    return out


def cases(pairs):
    totals = {k: v[0]["btot"] for k, v in pairs.items()}
    result = []
    for (model, direction), rows in pairs.items():
        a, b = direction.split(">")
        other = totals[(model, f"{b}>{a}")]
        share, cshare = collections.defaultdict(float), collections.defaultdict(float)
        for r in rows:
            share[r["name"]] += r["bt"] / r["btot"] * 100
            cshare[r["name"]] += r["ct"] / other * 100
        result += [(model, direction, n) for n in share if max(share[n], cshare[n]) >= 5]
    return result


def main():
    rows = load(sys.argv[1])
    slowed = cases(rows)
    print(f"{len(rows)} directed pairs, {len(slowed)} ×1.5 cases")
    print("| judged as | calibration | slack | same code: pairs with a finding | ops flagged | ×1.5 caught | of which not flagged on same code |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for level, pairs in (("row", rows), ("op", by_op(rows))):
        for mode in ("none", "workload", "kind", "category"):
            if level == "op" and mode == "category":
                continue
            for slack in (1.25, 1.35, 1.5, 2.0, 3.0):
                same = {key: flagged(rs, slack, mode) for key, rs in pairs.items()}
                hits = [(m, d, n) for m, d, n in slowed if n in flagged(pairs[(m, d)], slack, mode, slowed=n)]
                fresh = sum(n not in same[(m, d)] for m, d, n in hits)
                caught = len(hits)
                print(f"| {level} | {mode} | ×{slack} | {sum(1 for s in same.values() if s)} of {len(same)} "
                      f"| {sum(len(s) for s in same.values())} | {caught} of {len(slowed)} | {fresh} |")


main()
