#!/usr/bin/env python3
"""What a mixture costs feedline.DataLoader on images: the same JPEGs read as one class-folder tree and as its two
halves mixed (feedline.Mixture, a repeat of 1 each, so every image once an epoch either way), side by side in one
process, the two loaders taking turns.

The halves are two trees of symbolic links made in a temporary folder: the first half of each class's files (in
sorted order) in one, the rest in the other. Each loader reads RandomResizedCrop(--image-size),
RandomHorizontalFlip() and PILToTensor(), in batches of --batch-size, shuffled, with --workers threads kept across
epochs, after one untimed warm-up epoch each. Prints each round's images per second and the median ratio.

    /usr/bin/python3 scripts/python/mixture_bench.py --data data/photos/jpeg/train [--workers 2] [--rounds 5]

Run it with the process settings the feedline tool applies (MALLOC_MMAP_MAX_=0, a high MALLOC_TRIM_THRESHOLD_,
OPENBLAS_NUM_THREADS=1), and with PYTHONPATH naming the built package (build/python) when it is not installed.
"""
import argparse
import os
import statistics
import tempfile
import time

import feedline
import feedline.transforms as T


def halves(root, into):
    """Two trees of links under `into`, each class's sorted files split between them; their roots."""
    out = [os.path.join(into, "a"), os.path.join(into, "b")]
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if not os.path.isdir(folder):
            continue
        files = sorted(f for f in os.listdir(folder) if os.path.isfile(os.path.join(folder, f)))
        middle = len(files) // 2
        for half, chosen in zip(out, (files[:middle], files[middle:])):
            os.makedirs(os.path.join(half, name), exist_ok=True)
            for f in chosen:
                os.symlink(os.path.abspath(os.path.join(folder, f)), os.path.join(half, name, f))
    return out


def rate(loader, epochs):
    images, start = 0, time.perf_counter()
    for _ in range(epochs):
        for batch, _labels in loader:
            images += batch.shape[0]
    return images / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="a folder of class folders of images")
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--epochs", type=int, default=1, help="timed epochs a round")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()

    transform = T.Compose([T.RandomResizedCrop(args.image_size), T.RandomHorizontalFlip(), T.PILToTensor()])
    options = dict(batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                   persistent_workers=args.workers > 0, seed=42)
    with tempfile.TemporaryDirectory() as tmp:
        first, second = halves(args.data, tmp)
        whole = feedline.ImageFolder(args.data, transform=transform)
        mixture = feedline.Mixture([feedline.ImageFolder(first, transform=transform),
                                    feedline.ImageFolder(second, transform=transform)])
        if len(mixture) != len(whole):
            raise SystemExit(f"the halves hold {len(mixture)} images, the folder {len(whole)}")
        loaders = {"one folder": feedline.DataLoader(whole, **options),
                   "two halves mixed": feedline.DataLoader(mixture, **options)}
        for loader in loaders.values():
            rate(loader, 1)  # warm-up: the page cache, the workers
        print(f"{len(whole)} images of {args.data}, batch {args.batch_size}, {args.workers} workers, "
              f"{args.epochs} epoch(s) a round")
        ratios = []
        for r in range(args.rounds):
            rates = {name: rate(loader, args.epochs) for name, loader in loaders.items()}
            ratios.append(rates["two halves mixed"] / rates["one folder"])
            print(f"round {r + 1}: " + ", ".join(f"{name} {value:.0f} images/s" for name, value in rates.items()) +
                  f": {ratios[-1]:.3f}x")
        print(f"median: the mixture at {statistics.median(ratios):.3f}x the one folder's images/s "
              f"(range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
