#!/usr/bin/env python3
"""Prints the Python experiment's ladders beside feedline's, from the JSON both wrote in the same run.

  compare.py [--python-loader PL.json] --python-training PT.json --feedline results.json [--markdown OUT.md]

Rungs are matched by name (the experiment's six are named alike on both sides). The loader target is the best
feedline loader rung over the Python experiment's pre-decoded DataLoader at batch 512 with no workers. Without
--python-loader the loader ladders are left out. The best per epoch is given twice: averaged over every epoch, as
both sides print it, and as the median of the epochs after the first, which carries each side's warm-up (CUDA's
libraries starting, DataLoader workers starting; feedline's CUDA graph capture is already outside its epochs).
"""
import statistics
import argparse
import json
import os
import sys



def python_reference(rows):
    """The Python experiment's pre-decoded dataset (v2) at batch 512 with no workers: the loader target's base."""
    for r in rows:
        c = r.get("config", {})
        if c.get("version") == 2 and c.get("batch_size") == 512 and c.get("num_workers") == 0:
            return r
    return None


def is_floor(r):
    return r.get("config", {}).get("dataset_mode") in ("synthetic", "in-order")


def python_kind(r):
    """A Python ladder rung's loader: 1 or 2 (torch's DataLoader over v1 or v2), "feedline" (feedline.DataLoader
    over v2's tensors) or "memory" (the compute floor: batches gathered before the epoch)."""
    return r.get("config", {}).get("version")


def feedline_in_python(py_loader, py_training):
    """Lines on feedline.DataLoader inside the Python experiment: its loader rate over torch's DataLoader on the
    same tensors (v2, batch 512, no workers), and its training epoch over the compute floor's."""
    out = []
    if py_loader is not None:
        rows = py_loader.get("loader_ladder", [])
        ref = python_reference(rows)
        ours = [r for r in rows if python_kind(r) == "feedline"]
        if ref and ours:
            best = max(ours, key=lambda r: r["samples_per_second"])
            out.append(f"In Python, {best['rung']}: {best['samples_per_second']:,.0f} samples/s = "
                       f"{best['samples_per_second'] / ref['samples_per_second']:.1f}x torch's DataLoader over the same "
                       f"tensors (v2, batch 512, 0 workers: {ref['samples_per_second']:,.0f} samples/s).")
    rows = py_training.get("training_ladder", [])
    floor = next((r for r in rows if python_kind(r) == "memory"), None)
    ours = [r for r in rows if python_kind(r) == "feedline"]
    if floor and ours:
        for r in ours:
            extra = r["avg_train_seconds"] / floor["avg_train_seconds"] - 1
            out.append(f"In Python, {r['rung']}: {r['avg_train_seconds']:.2f}s a training epoch, {100 * extra:+.1f}% "
                       f"over the same loop on batches already in memory ({floor['avg_train_seconds']:.2f}s).")
    return out


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"compare.py: {path}: {e}")


def device_name(d):
    return d.get("name") if isinstance(d, dict) else d


def fmt_rate(x):
    return "-" if x is None else f"{x:,.0f}"


def fmt_s(x):
    return "-" if x is None else f"{x:.2f}s"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.1f}x"


def table(headers, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(headers))]
    for r in rows:
        out.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    return "\n".join(out)


def verdict(python_seconds, feedline_seconds):
    if python_seconds >= feedline_seconds:
        return f"feedline {python_seconds / feedline_seconds:.2f}x faster"
    return f"feedline {feedline_seconds / python_seconds:.2f}x slower"


def steady_epoch_seconds(r):
    """Median train + test seconds of the epochs after the first, or None with fewer than two epochs."""
    epochs = r.get("epochs") or []
    if len(epochs) < 2:
        return None
    return statistics.median(e["train_seconds"] + e["test_seconds"] for e in epochs[1:])


def report(py_loader, py_training, feedline, markdown):
    py_side = py_loader or py_training
    dataset = py_training.get("dataset") or (py_loader or {}).get("dataset")
    out = []
    head = "## " if markdown else ""
    sub = "### " if markdown else ""
    out.append(f"{head}Python experiment beside feedline: {dataset}, same machine, one run")
    out.append("")
    out.append(f"Python {py_side.get('python')}, PyTorch {py_side.get('torch')} on {py_side.get('device')}, "
               f"{py_side.get('threads')} threads, {py_side.get('format')} files; feedline with LibTorch "
               f"{feedline.get('libtorch_version')} on {device_name(feedline.get('device'))}, "
               f"{feedline.get('threads')} threads.")
    out.append(f"BLAS: Python with OPENBLAS_NUM_THREADS={py_training.get('openblas_num_threads', 'unset')}; "
               f"feedline with {feedline.get('blas') or 'no record'}.")
    out.append("")
    proto = feedline.get("protocol", {})
    for key in ("epochs", "train_limit", "test_limit"):
        a, b = py_training.get(key), proto.get(key)
        if a is not None and b is not None and a != b:
            out.append(f"Warning: the training ladders differ in {key}: Python {a}, feedline {b}.")
    if py_loader is not None:
        for key in ("loader_epochs", "loader_min_seconds", "train_limit"):
            a = py_loader.get(key)
            b = 0 if key == "train_limit" else proto.get(key)  # feedline's loader ladder reads the whole train split
            if a is not None and b is not None and a != b:
                out.append(f"Warning: the loader ladders differ in {key}: Python {a}, feedline {b}.")
    out.append("")
    if py_loader is not None:  # the loader ladders
        fl = {r["rung"]: r for r in feedline.get("loader_ladder", []) if r.get("dataset") == dataset}
        py = {r["rung"]: r for r in py_loader.get("loader_ladder", [])}
        names = [r["rung"] for r in py_loader.get("loader_ladder", [])]
        names += [n for n in fl if n not in names]
        rows = []
        for n in names:
            a = py.get(n, {}).get("samples_per_second")
            b = fl.get(n, {}).get("samples_per_second")
            rows.append([n, fmt_rate(a), fmt_rate(b), fmt_ratio(b / a if a and b else None)])
        out.append(f"{sub}Loader ladder (samples/s, no model)" + ("" if markdown else ":"))
        out.append("")
        out.append(table(["Rung", "Python", "feedline", "feedline/Python"], rows, markdown))
        out.append("")
        ref_row = python_reference(py_loader.get("loader_ladder", []))
        ref = ref_row.get("samples_per_second") if ref_row else None
        if fl and ref:
            best_name, best = max(((n, r["samples_per_second"]) for n, r in fl.items()), key=lambda x: x[1])
            out.append(f"Best feedline loader rung ({best_name}): {best:,.0f} samples/s = {best / ref:.1f}x the Python "
                       f"experiment's pre-decoded DataLoader at batch 512 with no workers ({ref:,.0f} samples/s).")
            out.append("")
        elif not fl:
            out.append(f"(feedline's results hold no loader ladder for {dataset}.)")
            out.append("")
        else:
            out.append("(The Python loader ladder has no v2, batch 512, 0-worker rung: no loader ratio.)")
            out.append("")

    # Training ladder.
    fl = {r["rung"]: r for r in feedline.get("training_ladder", [])
          if r.get("dataset") == dataset and not r.get("skipped", False)}
    py = {r["rung"]: r for r in py_training.get("training_ladder", [])}
    names = [r["rung"] for r in py_training.get("training_ladder", [])]
    names += [n for n in fl if n not in names]
    rows = []
    for n in names:
        a, b = py.get(n), fl.get(n)
        ta = a["avg_train_seconds"] if a else None
        tb = b["avg_train_seconds"] if b else None
        rows.append([n, fmt_s(ta), fmt_s(tb), fmt_ratio(ta / tb if ta and tb else None),
                     "-" if not a else f"{100 * a['test_accuracy']:.1f}%",
                     "-" if not b or is_floor(b) else f"{100 * b['test_accuracy']:.1f}%"])
    out.append(f"{sub}Training ladder (train seconds per epoch)" + ("" if markdown else ":"))
    out.append("")
    out.append(table(["Rung", "Python", "feedline", "Python/feedline", "Python acc.", "feedline acc."], rows, markdown))
    out.append("")
    out.extend(feedline_in_python(py_loader, py_training))
    out.append("")
    py_runs = [r for r in py_training.get("training_ladder", []) if python_kind(r) in (1, 2)]
    fl_runs = [r for r in fl.values() if not is_floor(r)]
    if py_runs and fl_runs:
        pb = min(py_runs, key=lambda r: r["avg_train_seconds"] + r["avg_test_seconds"])
        fb = min(fl_runs, key=lambda r: r["avg_train_seconds"] + r["avg_test_seconds"])
        pt = pb["avg_train_seconds"] + pb["avg_test_seconds"]
        ft = fb["avg_train_seconds"] + fb["avg_test_seconds"]
        out.append(f"Best per epoch (train + test): Python {pt:.2f}s ({pb['rung']}), feedline {ft:.2f}s ({fb['rung']}): "
                   f"{verdict(pt, ft)}.")
        py_steady = [(s, r) for r in py_runs if (s := steady_epoch_seconds(r)) is not None]
        fl_steady = [(s, r) for r in fl_runs if (s := steady_epoch_seconds(r)) is not None]
        if py_steady and fl_steady:
            ps, pr = min(py_steady, key=lambda x: x[0])
            fs, fr = min(fl_steady, key=lambda x: x[0])
            spans = sorted({len(pr["epochs"]), len(fr["epochs"])})
            which = " and ".join("epoch 2" if n == 2 else f"epochs 2-{n}" for n in spans)
            out.append(f"Best per epoch after the first (median of {which}, train + test): Python {ps:.2f}s "
                       f"({pr['rung']}), feedline {fs:.2f}s ({fr['rung']}): {verdict(ps, fs)}.")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python-loader", help="the Python loader ladder's JSON (left out: no loader ladders)")
    p.add_argument("--python-training", required=True)
    p.add_argument("--feedline", required=True)
    p.add_argument("--markdown", help="also write the tables as Markdown here")
    args = p.parse_args()
    py_loader = load(args.python_loader) if args.python_loader else None
    py_training, feedline = load(args.python_training), load(args.feedline)
    print(report(py_loader, py_training, feedline, markdown=False))
    if args.markdown:
        with open(args.markdown + ".tmp", "w") as f:
            f.write(report(py_loader, py_training, feedline, markdown=True))
        os.replace(args.markdown + ".tmp", args.markdown)


if __name__ == "__main__":
    main()
