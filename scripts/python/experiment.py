#!/usr/bin/env python3
"""The experiment feedline reproduces, in PyTorch: our own re-creation of its two datasets and its SimpleCNN.

MNISTDatasetV1 is the naive dataset (pandas `df.iloc[idx]` per sample, converted and divided by 255 each time);
MNISTDatasetV2 decodes the table once into one tensor. `--ladder` runs the experiment's ladder in one process:
v1 at batch 16, then batch 512, + 4 workers, + persistent workers, + pinned memory, then v2, and v2 with no
workers (the reference for feedline's loader target); then feedline.DataLoader over v2's tensors (2 workers, then
none, and over the images kept as uint8) where the feedline package is importable, and the compute floor: batches gathered before the epoch, so
the loop does nothing but train. `--loader-only` times the loaders alone, no model.

Reads the CSV files `feedline prepare` writes (Parquet too when pyarrow is importable).
"""
import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FOLDERS = {"mnist": "MNIST", "fashion-mnist": "FashionMNIST"}

# The experiment asks for 4 workers whatever the machine; PyTorch warns when that exceeds the cores. We keep its
# configuration (the ladder is the point) and say so once in the header line instead.
warnings.filterwarnings("ignore", message="This DataLoader will create")


class MNISTDatasetV1(Dataset):
    """The naive version: keeps the DataFrame and converts one row per call."""

    def __init__(self, df):
        self.df = df

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        row = self.df.iloc[idx]
        label = int(row.iloc[0])
        image = row.iloc[1:].to_numpy(dtype=np.float32).reshape(1, 28, 28) / 255.0
        return torch.tensor(image), torch.tensor(label, dtype=torch.long)


class MNISTDatasetV2(Dataset):
    """Decoded once at load: one float tensor of images and one int64 tensor of labels."""

    def __init__(self, df):
        values = df.to_numpy()
        self.labels = torch.tensor(values[:, 0], dtype=torch.long)
        self.images = torch.tensor(values[:, 1:], dtype=torch.float32).reshape(-1, 1, 28, 28) / 255.0

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]

    def images_uint8(self):
        """The images as the uint8 values they were decoded from (exact: each is k / 255 in float32)."""
        if not hasattr(self, "_uint8"):
            self._uint8 = (self.images * 255).round_().to(torch.uint8)
        return self._uint8


def on_device(images, device):
    """A batch's images on the device as float32 in [0, 1]: uint8 batches are divided by 255 there."""
    images = images.to(device, non_blocking=True)
    return images.float().div_(255) if images.dtype == torch.uint8 else images


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def load_frame(args, split, limit):
    path = os.path.join(args.data_dir, FOLDERS[args.dataset], f"{split}.{args.format}")
    if not os.path.exists(path):
        sys.exit(f"experiment.py: {path}: not found; run `feedline prepare` first (or pass --data-dir)")
    if args.format == "parquet":
        try:
            df = pd.read_parquet(path)
        except ImportError as e:
            sys.exit(f"experiment.py: {path}: pandas cannot read Parquet here ({e}); use --format csv")
    else:
        df = pd.read_csv(path, nrows=limit if limit > 0 else None)
    return df.head(limit) if limit > 0 else df


def rungs(args):
    """The experiment's ladder, in its order, as feedline names its rungs."""
    b = args.batch_size
    return [
        dict(name="naive row dataset, batch 16", version=1, batch_size=16, num_workers=0, persistent=False, pin=False),
        dict(name=f"batch {b}", version=1, batch_size=b, num_workers=0, persistent=False, pin=False),
        dict(name="+ 4 workers", version=1, batch_size=b, num_workers=4, persistent=False, pin=False),
        dict(name="+ persistent workers", version=1, batch_size=b, num_workers=4, persistent=True, pin=False),
        dict(name="+ pinned memory", version=1, batch_size=b, num_workers=4, persistent=True, pin=True),
        dict(name="+ pre-decoded tensor dataset", version=2, batch_size=b, num_workers=4, persistent=True, pin=True),
        dict(name=f"v2, batch {b}, 0 workers", version=2, batch_size=b, num_workers=0, persistent=False, pin=False),
        # feedline's loader over the same pre-decoded tensors, in the same training loop: C++ worker threads
        # gather the batches (skipped with a note where the feedline package is not importable).
        dict(name="feedline.DataLoader, 2 workers", version="feedline", batch_size=b, num_workers=2, persistent=True,
             pin=True),
        dict(name="feedline.DataLoader, 0 workers", version="feedline", batch_size=b, num_workers=0,
             persistent=False, pin=False),
        # The same images kept as uint8 (a quarter of the bytes to gather); the training step divides by 255 on the
        # device, as feedline's own "uint8 storage, normalised on the device" rung does.
        dict(name="feedline.DataLoader, uint8 images, 2 workers", version="feedline", uint8=True, batch_size=b,
             num_workers=2, persistent=True, pin=True),
        # The compute floor: the loop over batches gathered before the epoch starts (no data work at all).
        dict(name="batches already in memory", version="memory", batch_size=b, num_workers=0, persistent=False,
             pin=False),
    ]


def feedline_package():
    """The feedline package, or None (with the reason) where this Python cannot import it."""
    try:
        import feedline
        return feedline, None
    except ImportError as e:
        return None, str(e)


class BatchesInMemory:
    """The compute floor's loader: one shuffled epoch of v2's tensors, gathered into batches once, before any
    timing, and handed out again every epoch (the training loop then does nothing but train)."""

    def __init__(self, images, labels, batch_size, shuffle, seed):
        g = torch.Generator().manual_seed(seed)
        order = torch.randperm(len(labels), generator=g) if shuffle else torch.arange(len(labels))
        self.batches = [(images[i], labels[i]) for i in order.split(batch_size)]

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        return iter(self.batches)


def make_loader(dataset, cfg, shuffle, device, seed):
    pin = cfg["pin"] and device.type == "cuda"
    if cfg["version"] == "feedline":
        feedline, _ = feedline_package()
        images = dataset.images_uint8() if cfg.get("uint8") else dataset.images
        return feedline.DataLoader((images, dataset.labels), batch_size=cfg["batch_size"], shuffle=shuffle,
                                   num_workers=cfg["num_workers"],
                                   persistent_workers=cfg["persistent"] and cfg["num_workers"] > 0, pin_memory=pin,
                                   seed=seed)
    if cfg["version"] == "memory":
        return BatchesInMemory(dataset.images, dataset.labels, cfg["batch_size"], shuffle, seed)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=shuffle, num_workers=cfg["num_workers"],
                      persistent_workers=cfg["persistent"] and cfg["num_workers"] > 0, pin_memory=pin,
                      generator=generator)


# The loader ladder times at least this long per rung: the fastest loaders finish an epoch in milliseconds, where
# one stray interruption would weigh. feedline bench uses the same rule.
MIN_TIMED_SECONDS = 1.0


def time_loader(loader, epochs, device):
    """Samples per second of the loader alone, batches moved to the device: one untimed warm-up epoch, then at
    least `epochs` timed epochs, and more until MIN_TIMED_SECONDS have passed (feedline's rule: a loader with no
    samples stops after `epochs`)."""
    def one_epoch():
        n = 0
        for images, labels in loader:
            images = on_device(images, device)
            labels = labels.to(device, non_blocking=True)
            n += labels.shape[0]
        if device.type == "cuda":
            torch.cuda.synchronize()
        return n

    last = one_epoch()
    seconds, samples = [], 0
    while len(seconds) < epochs or (sum(seconds) < MIN_TIMED_SECONDS and last > 0):
        start = time.perf_counter()
        last = one_epoch()
        samples += last
        seconds.append(time.perf_counter() - start)
    return (samples / sum(seconds) if sum(seconds) > 0 else 0.0), seconds


def train(model, train_loader, test_loader, epochs, device, lr):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    per_epoch = []
    for epoch in range(1, epochs + 1):
        model.train()
        start = time.perf_counter()
        for images, labels in train_loader:
            images, labels = on_device(images, device), labels.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        train_seconds = time.perf_counter() - start

        model.eval()
        start = time.perf_counter()
        correct, seen, loss_sum = 0, 0, 0.0
        with torch.no_grad():
            for images, labels in test_loader:
                images, labels = on_device(images, device), labels.to(device, non_blocking=True)
                out = model(images)
                loss_sum += nn.functional.cross_entropy(out, labels, reduction="sum").item()
                correct += (out.argmax(1) == labels).sum().item()
                seen += labels.shape[0]
        if device.type == "cuda":
            torch.cuda.synchronize()
        test_seconds = time.perf_counter() - start
        accuracy = correct / max(seen, 1)
        print(f"Epoch {epoch}/{epochs}: train {train_seconds:.2f}s, test {test_seconds:.2f}s, "
              f"test accuracy {100 * accuracy:.2f}%", flush=True)
        per_epoch.append(dict(train_seconds=train_seconds, test_seconds=test_seconds,
                              test_loss=loss_sum / max(seen, 1), test_accuracy=accuracy))
    return per_epoch


def print_summary(results, args, device):
    """The ladder as one table: speed-up over the first rung (samples/s, or train + test seconds per run)."""
    if args.loader_only:
        headers = ["Rung", "samples/s", "speed-up"]
        rows = [[r["rung"], f"{r['samples_per_second']:,.0f}", f"{r['speedup']:.1f}x"] for r in results]
        title = (f"Loader alone, a warm-up then at least {args.loader_epochs} epoch(s) and {MIN_TIMED_SECONDS:g} s of the "
                 f"train split, batches to {device}")
    else:
        headers = ["Rung", "train s/epoch", "test s/epoch", "total", "speed-up", "test acc."]
        rows = [[r["rung"], f"{r['avg_train_seconds']:.2f}s", f"{r['avg_test_seconds']:.2f}s",
                 f"{r['total_seconds']:.2f}s", f"{r['speedup']:.1f}x", f"{100 * r['test_accuracy']:.2f}%"]
                for r in results]
        title = f"Training SimpleCNN, {args.epochs} epoch(s) on {device}"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells))
    print(f"\n{title}:")
    print(line(headers))
    for r in rows:
        print(line(r))
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="data")
    p.add_argument("--dataset", choices=sorted(FOLDERS), default="fashion-mnist")
    p.add_argument("--format", choices=["csv", "parquet"], default="csv")
    p.add_argument("--version", type=int, choices=[1, 2], default=2)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--num-workers", type=int, default=0)
    p.add_argument("--persistent-workers", action="store_true")
    p.add_argument("--pin-memory", action="store_true")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--limit", type=int, default=0, help="first N samples of train and of test (0: all)")
    p.add_argument("--train-limit", type=int, default=None, help="first N train samples (0: all; default --limit)")
    p.add_argument("--test-limit", type=int, default=None, help="first N test samples (0: all; default --limit)")
    p.add_argument("--loader-epochs", type=int, default=2, help="--loader-only: epochs per configuration")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--loader-only", action="store_true", help="time the DataLoader alone, no model")
    p.add_argument("--ladder", action="store_true", help="run the experiment's whole ladder")
    p.add_argument("--rungs", help="--ladder: only these rungs, by number from 1 (e.g. 6,7: the pre-decoded ones)")
    p.add_argument("--json", help="write every configuration and per-epoch figure here")
    args = p.parse_args()
    for name in ("train_limit", "test_limit"):
        if getattr(args, name) is None:
            setattr(args, name, args.limit)
    for name in ("limit", "train_limit", "test_limit"):
        if getattr(args, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be 0 (all) or more")
    for name in ("batch_size", "epochs", "threads", "loader_epochs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.rungs is not None:
        if not args.ladder:
            p.error("--rungs picks rungs of --ladder")
        count = len(rungs(args))
        try:
            picked = sorted({int(n) for n in args.rungs.split(",")})
        except ValueError:
            p.error(f"--rungs: '{args.rungs}' is not a list of rung numbers such as 6,7")
        if not picked or picked[0] < 1 or picked[-1] > count:
            p.error(f"--rungs: the ladder's rungs are numbered 1 to {count}, not '{args.rungs}'")
        args.rungs = picked

    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: CUDA is not available")
    device = torch.device("cuda" if args.device != "cpu" and torch.cuda.is_available() else "cpu")

    start = time.perf_counter()
    train_df = load_frame(args, "train", args.train_limit)
    test_df = load_frame(args, "test", args.test_limit)
    print(f"Loaded {FOLDERS[args.dataset]} ({args.format}): {len(train_df)} train, {len(test_df)} test rows "
          f"in {time.perf_counter() - start:.2f}s; PyTorch {torch.__version__}, device {device}, "
          f"{args.threads} threads, {os.cpu_count()} cores", flush=True)
    datasets = {}

    def dataset(version, split):
        key = (version, split)
        if key not in datasets:
            df = train_df if split == "train" else test_df
            datasets[key] = MNISTDatasetV1(df) if version == 1 else MNISTDatasetV2(df)
        return datasets[key]

    def rung_dataset(version, split):
        return dataset(1 if version == 1 else 2, split)  # feedline's and the floor's rungs use v2's tensors

    ladder = [c for i, c in enumerate(rungs(args), 1) if args.rungs is None or i in args.rungs]
    if args.loader_only:  # the floor's batches are made before the epoch: as a loader it would time nothing
        ladder = [c for c in ladder if c["version"] != "memory"]
    feedline, why_not = feedline_package()
    if feedline is None and any(c["version"] == "feedline" for c in ladder):
        print(f"(feedline's rungs are left out: this Python cannot import the feedline package: {why_not})")
        ladder = [c for c in ladder if c["version"] != "feedline"]
    configs = ladder if args.ladder else [dict(
        name=f"v{args.version}, batch {args.batch_size}, {args.num_workers} workers", version=args.version,
        batch_size=args.batch_size, num_workers=args.num_workers, persistent=args.persistent_workers,
        pin=args.pin_memory)]

    results = []
    for i, cfg in enumerate(configs):
        kind = f"v{cfg['version']}" if isinstance(cfg["version"], int) else cfg["version"]
        print(f"\n[{i + 1}/{len(configs)}] {cfg['name']}: {kind}, batch {cfg['batch_size']}, "
              f"{cfg['num_workers']} workers{', persistent' if cfg['persistent'] else ''}"
              f"{', pinned' if cfg['pin'] else ''}", flush=True)
        row = dict(rung=cfg["name"], config=cfg)
        if args.loader_only:
            loader = make_loader(rung_dataset(cfg["version"], "train"), cfg, True, device, args.seed)
            rate, seconds = time_loader(loader, args.loader_epochs, device)
            print(f"{rate:.0f} samples/s", flush=True)
            row.update(samples_per_second=rate, epoch_seconds=seconds)
        else:
            torch.manual_seed(args.seed)
            model = SimpleCNN().to(device)
            if i == 0:
                print(f"SimpleCNN: {sum(p.numel() for p in model.parameters() if p.requires_grad)} parameters")
            train_loader = make_loader(rung_dataset(cfg["version"], "train"), cfg, True, device, args.seed)
            test_loader = make_loader(rung_dataset(cfg["version"], "test"), cfg, False, device, args.seed)
            epochs = train(model, train_loader, test_loader, args.epochs, device, args.lr)
            total_train = sum(e["train_seconds"] for e in epochs)
            total_test = sum(e["test_seconds"] for e in epochs)
            print(f"Average Train Time per Epoch: {total_train / len(epochs):.2f}s")
            print(f"Average Test Time per Epoch: {total_test / len(epochs):.2f}s")
            print(f"Total Train Time: {total_train:.2f}s")
            print(f"Total Test Time: {total_test:.2f}s")
            print(f"Test Accuracy: {100 * epochs[-1]['test_accuracy']:.2f}%", flush=True)
            row.update(epochs=epochs, avg_train_seconds=total_train / len(epochs),
                       avg_test_seconds=total_test / len(epochs), total_seconds=total_train + total_test,
                       test_accuracy=epochs[-1]["test_accuracy"])
        row["pin_memory_in_effect"] = cfg["pin"] and device.type == "cuda"
        results.append(row)

    first = results[0]
    for row in results:
        if args.loader_only:
            row["speedup"] = row["samples_per_second"] / first["samples_per_second"]
        else:
            row["speedup"] = first["total_seconds"] / row["total_seconds"]
    print_summary(results, args, device)

    if args.json:
        out = dict(tool="python experiment", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   command=" ".join(sys.argv), python=platform.python_version(), torch=torch.__version__,
                   device=str(device), threads=args.threads, dataset=FOLDERS[args.dataset], format=args.format,
                   openblas_num_threads=os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
                   epochs=args.epochs, train_limit=args.train_limit, test_limit=args.test_limit,
                   loader_epochs=args.loader_epochs, loader_min_seconds=MIN_TIMED_SECONDS,
                   **{"loader_ladder" if args.loader_only else "training_ladder": results})
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=2)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
