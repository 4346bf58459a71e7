#!/usr/bin/python3
"""Where a forecast is wrong: a `modelstat report -f json` (made with saved ceilings, so that
each top-level node carries fit's `forecast_s` beside its measured `median_s`) summed per class
of node, the class being the op type of the node (a fused group's head) and the executor's
kernel for it, with the sum of the measured medians, the sum of the forecasts and their ratio.

    modelstat report MODEL [binding flags] --threads N -f json -o R.json
    /usr/bin/python3 bench/forecast_by_class.py R.json [--top 12]

Rows are sorted by the absolute difference (forecast - measured), largest first: the classes
that move the whole-model error most. The last line is the whole model's layer sum and
forecast, and the report's own whole-model error (forecast / clean median - 1).
"""
import collections
import json
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 12
    with open(argv[0]) as f:
        report = json.load(f)
    nodes = report.get("nodes", [])
    if not any("forecast_s" in n for n in nodes):
        print("no per-node forecast in this report (no saved ceilings, or see whole.forecast_note)")
        return 1
    classes = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for n in nodes:
        if n.get("fused_into"):
            continue  # its time and its forecast are its group head's
        key = n["op_type"] + (" [" + n["kernel"] + "]" if n.get("kernel") else "")
        if n.get("fused_members"):
            key += " +" + str(len(n["fused_members"]))
        c = classes[key]
        c[0] += 1
        c[1] += n.get("median_s") or 0.0
        c[2] += n.get("forecast_s") or 0.0
    rows = sorted(classes.items(), key=lambda kv: -abs(kv[1][2] - kv[1][1]))
    print(f"{'class':58s} {'nodes':>5s} {'measured ms':>12s} {'forecast ms':>12s} {'ratio':>6s}")
    for key, (count, measured, forecast) in rows[:top]:
        ratio = f"{forecast / measured:.2f}" if measured > 0 else "-"
        print(f"{key[:58]:58s} {count:5d} {1e3 * measured:12.3f} {1e3 * forecast:12.3f} {ratio:>6s}")
    measured = sum(c[1] for c in classes.values())
    forecast = sum(c[2] for c in classes.values())
    whole = report.get("whole", {})
    err = whole.get("forecast_error")
    print(f"{'layer sum / forecast':58s} {len(nodes):5d} {1e3 * measured:12.3f} {1e3 * forecast:12.3f}"
          f" {forecast / measured if measured else 0:6.2f}   whole-model error "
          f"{'-' if err is None else f'{100 * err:+.1f}%'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
