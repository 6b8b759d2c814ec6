#!/usr/bin/env python3
"""feedline.DataLoader beside torch's DataLoader, in one Python process, on the same tensors.

Three measurements, each a ratio against a baseline run in the same process:
1. Loader throughput (no model): torch.utils.data.DataLoader over a TensorDataset of the experiment's pre-decoded
   tensors (its v2) at batch 512, no workers, against feedline.DataLoader over the same tensors with 0 and 2
   workers, and over the same images kept as uint8; and torch's DataLoader over the images in the column-major
   layout the experiment's v2 gets from pandas. Samples per second over whole epochs of the train split.
2. The cost of a batch crossing into Python: feedline.DataLoader over a tensor of one float a sample, batch 1,
   no workers, so the batch itself costs almost nothing; microseconds per batch (and torch's DataLoader alike).
3. A training epoch of SimpleCNN (the experiment's loop) fed by feedline.DataLoader against the same loop over
   batches gathered before the epoch (the compute floor) and against torch's DataLoader, in rounds: each round
   trains one epoch of each, and a feed's cost over the floor is the median over rounds of its epoch's time over
   the floor's in the same round.

Reads data/FashionMNIST/train.parquet (`feedline prepare` writes it) with feedline.read_parquet; the model and the
compute floor's batches come from experiment.py (which needs pandas: Debian's python3-pandas).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn as nn

import feedline

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment import BatchesInMemory, SimpleCNN  # noqa: E402  (the experiment's model and compute floor)


def load_tensors(path, limit):
    columns = feedline.read_parquet(path)
    labels = columns.pop("label").to(torch.int64)
    pixels = torch.stack([columns[f"pixel{i}"] for i in range(1, 785)], dim=1)
    raw = pixels.to(torch.uint8).reshape(-1, 1, 28, 28)
    images = raw.to(torch.float32) / 255.0
    if limit:
        images, raw, labels = images[:limit].contiguous(), raw[:limit].contiguous(), labels[:limit].contiguous()
    return images, raw, labels


def epoch_rate(loader, epochs):
    """Samples per second over `epochs` timed epochs after one warm-up epoch; also the seconds of each."""
    def one():
        n = 0
        for _, y in loader:
            n += y.shape[0]
        return n
    one()
    seconds, samples = [], 0
    for _ in range(epochs):
        start = time.perf_counter()
        samples += one()
        seconds.append(time.perf_counter() - start)
    return samples / sum(seconds), seconds


def per_batch_microseconds(loader, epochs):
    rate, seconds = epoch_rate(loader, epochs)
    batches = len(loader) * epochs
    return 1e6 * sum(seconds) / batches


def train_epoch(model, optimizer, loader):
    criterion = nn.CrossEntropyLoss()
    model.train()
    start = time.perf_counter()
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="data/FashionMNIST/train.parquet")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--loader-epochs", type=int, default=3)
    p.add_argument("--train-epochs", type=int, default=5, help="epochs per training configuration (in turns)")
    p.add_argument("--train-limit", type=int, default=20000, help="first N samples for the training runs (0: all)")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if not os.path.exists(args.data):
        sys.exit(f"loader_bench.py: {args.data}: not found; run `feedline prepare --data-dir data` first")
    torch.set_num_threads(args.threads)
    images, raw, labels = load_tensors(args.data, 0)
    b = args.batch_size
    print(f"{args.data}: {len(labels)} samples; PyTorch {torch.__version__}, feedline {feedline.__version__}, "
          f"{args.threads} threads, {os.cpu_count()} cores, Python {platform.python_version()}", flush=True)
    results = dict(tool="scripts/python/loader_bench.py", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   command=" ".join(sys.argv), torch=torch.__version__, threads=args.threads,
                   cores=os.cpu_count(), batch_size=b)

    # 1. Throughput.
    dataset = torch.utils.data.TensorDataset(images, labels)
    g = torch.Generator().manual_seed(args.seed)
    # The experiment's v2 builds its image tensor from pandas' to_numpy(), which is column-major: a sample's 784
    # values lie 60,000 floats apart. The same values in that layout:
    column_major = images.reshape(len(labels), -1).t().contiguous().t().reshape(images.shape)
    loaders = [
        ("torch DataLoader, v2 TensorDataset, 0 workers",
         torch.utils.data.DataLoader(dataset, batch_size=b, shuffle=True, generator=g)),
        ("torch DataLoader, v2 as the experiment lays it out",
         torch.utils.data.DataLoader(torch.utils.data.TensorDataset(column_major, labels), batch_size=b,
                                     shuffle=True, generator=torch.Generator().manual_seed(args.seed))),
        ("feedline.DataLoader, same tensors, 0 workers",
         feedline.DataLoader((images, labels), batch_size=b, shuffle=True, seed=args.seed)),
        ("feedline.DataLoader, same tensors, 2 workers",
         feedline.DataLoader((images, labels), batch_size=b, shuffle=True, seed=args.seed, num_workers=2,
                             persistent_workers=True)),
        # The same images kept as uint8 (a quarter of the bytes to gather; the step divides by 255).
        ("feedline.DataLoader, uint8 images, 0 workers",
         feedline.DataLoader((raw, labels), batch_size=b, shuffle=True, seed=args.seed)),
        ("feedline.DataLoader, uint8 images, 2 workers",
         feedline.DataLoader((raw, labels), batch_size=b, shuffle=True, seed=args.seed, num_workers=2,
                             persistent_workers=True)),
    ]
    print(f"\nLoader alone, batch {b}, a warm-up then {args.loader_epochs} epochs each:")
    rates = []
    for name, loader in loaders:
        rate, seconds = epoch_rate(loader, args.loader_epochs)
        rates.append(dict(loader=name, samples_per_second=rate, epoch_seconds=seconds))
        print(f"  {name:<48} {rate:>14,.0f} samples/s  {rate / rates[0]['samples_per_second']:>7.1f}x", flush=True)
    results["throughput"] = rates

    # 2. Crossing into Python.
    tiny = torch.zeros(100000, 1)
    tiny_labels = torch.zeros(100000, dtype=torch.int64)
    crossing = [
        ("feedline.DataLoader, batch 1, 0 workers", feedline.DataLoader((tiny, tiny_labels), batch_size=1)),
        ("feedline.DataLoader, batch 1, 1 worker", feedline.DataLoader((tiny, tiny_labels), batch_size=1,
                                                                       num_workers=1, persistent_workers=True)),
        ("torch DataLoader, batch 1, 0 workers",
         torch.utils.data.DataLoader(torch.utils.data.TensorDataset(tiny, tiny_labels), batch_size=1)),
    ]
    print("\nA batch of one float crossing into Python (a whole epoch of 100,000 batches, after a warm-up):")
    results["crossing"] = []
    for name, loader in crossing:
        us = per_batch_microseconds(loader, 1)
        results["crossing"].append(dict(loader=name, microseconds_per_batch=us))
        print(f"  {name:<48} {us:>8.2f} us a batch", flush=True)

    # 3. Training epochs, in turns.
    n = args.train_limit or len(labels)
    x, y = images[:n].contiguous(), labels[:n].contiguous()
    feeds = {
        "batches already in memory (floor)": lambda: BatchesInMemory(x, y, b, True, args.seed),
        "feedline.DataLoader, 2 workers": lambda: feedline.DataLoader((x, y), batch_size=b, shuffle=True,
                                                                      seed=args.seed, num_workers=2,
                                                                      persistent_workers=True),
        "torch DataLoader, v2, 0 workers": lambda: torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(x, y), batch_size=b, shuffle=True,
            generator=torch.Generator().manual_seed(args.seed)),
    }
    state = {}
    for name, make in feeds.items():
        torch.manual_seed(args.seed)
        model = SimpleCNN()
        state[name] = dict(loader=make(), model=model, optimizer=torch.optim.Adam(model.parameters(), lr=1e-3),
                           seconds=[])
        train_epoch(model, state[name]["optimizer"], state[name]["loader"])  # warm-up epoch, untimed
    for _ in range(args.train_epochs):
        for name in feeds:
            s = state[name]
            s["seconds"].append(train_epoch(s["model"], s["optimizer"], s["loader"]))
    floor_name = "batches already in memory (floor)"
    floor = statistics.median(state[floor_name]["seconds"])
    print(f"\nSimpleCNN training epochs on {n} samples, batch {b}, {args.train_epochs} epochs each in turns "
          f"(after a warm-up):")
    results["training"] = []
    for name in feeds:
        med = statistics.median(state[name]["seconds"])
        # Each round ran the feeds back to back: the ratio of a feed's epoch to the floor's in the same round
        # cancels the machine's slower and faster spells.
        ratios = [t / f for t, f in zip(state[name]["seconds"], state[floor_name]["seconds"])]
        paired = statistics.median(ratios) - 1
        results["training"].append(dict(feed=name, epoch_seconds=state[name]["seconds"], median_seconds=med,
                                        over_floor_paired=paired, round_ratios=ratios))
        print(f"  {name:<40} median {med:6.3f}s  {100 * paired:+6.1f}% over the floor (median of rounds, "
              f"{100 * (min(ratios) - 1):+.1f}% to {100 * (max(ratios) - 1):+.1f}%)", flush=True)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(results, f, indent=2)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
