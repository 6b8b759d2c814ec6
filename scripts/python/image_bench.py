#!/usr/bin/env python3
"""Images per second of one Python image pipeline over a folder of class folders of JPEGs: what
`feedline bench images` runs beside its C++ rows, once per pipeline, in a process of its own.

Pipelines (each with RandomResizedCrop(size), RandomHorizontalFlip() and a conversion, batches of --batch-size,
shuffled, --workers workers kept across epochs):
  torchvision           torchvision.datasets.ImageFolder + PILToTensor (uint8) in torch.utils.data.DataLoader,
                        num_workers worker processes;
  torchvision-totensor  the same with ToTensor (float32 in [0, 1]);
  feedline              feedline.ImageFolder + feedline.transforms (PILToTensor) in feedline.DataLoader,
                        num_workers worker threads, every pixel of each file decoded (reduced_decode=False);
  torchvision-recipe    torchvision's reference ImageNet training transforms: after the crop and flip,
                        TrivialAugmentWide(), PILToTensor(), ConvertImageDtype(float32), Normalize(ImageNet's mean
                        and std), RandomErasing(0.1), in torch.utils.data.DataLoader;
  feedline-recipe       the same transforms from feedline.transforms in feedline.DataLoader.

Each pipeline runs one untimed warm-up epoch, then --repeat runs of --epochs timed epochs; a run's rate is its
images over its seconds. Run it with the process settings the feedline tool applies (MALLOC_MMAP_MAX_=0,
MALLOC_TRIM_THRESHOLD_ high, OPENBLAS_NUM_THREADS=1): `feedline bench images` sets them in the environment.
Writes one JSON document to --json: the rates, the images a run and the peak resident memory of this process and
of its largest worker process.
"""
import argparse
import json
import os
import resource
import sys
import time

import torch


MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def transforms_of(T, args):
    """The pipeline's transforms from the module T: torchvision.transforms or feedline.transforms."""
    steps = [T.RandomResizedCrop(args.image_size), T.RandomHorizontalFlip()]
    if args.pipeline.endswith("-recipe"):
        return T.Compose(steps + [T.TrivialAugmentWide(), T.PILToTensor(), T.ConvertImageDtype(torch.float),
                                  T.Normalize(MEAN, STD), T.RandomErasing(p=0.1)])
    return T.Compose(steps + [T.ToTensor() if args.pipeline == "torchvision-totensor" else T.PILToTensor()])


def make_loader(args):
    if args.pipeline.startswith("torchvision"):
        import torchvision
        import torchvision.transforms as T
        transform = transforms_of(T, args)
        dataset = torchvision.datasets.ImageFolder(args.data, transform=transform)
        g = torch.Generator().manual_seed(args.seed)
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True, generator=g,
                                             num_workers=args.workers, persistent_workers=args.workers > 0)
        return loader, f"torchvision {torchvision.__version__}"
    import feedline
    import feedline.transforms as FT
    transform = transforms_of(FT, args)
    # The plain pipeline decodes every pixel, as the C++ row it is compared with does; the recipe's takes the
    # defaults (only the crop's window of each file).
    dataset = feedline.ImageFolder(args.data, transform=transform,
                                   reduced_decode=args.pipeline.endswith("-recipe"))
    loader = feedline.DataLoader(dataset, batch_size=args.batch_size, shuffle=True, seed=args.seed,
                                 num_workers=args.workers, persistent_workers=args.workers > 0)
    return loader, f"feedline {feedline.__version__}"


def one_epoch(loader):
    n = 0
    for images, labels in loader:
        n += labels.shape[0]
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="a folder of class folders of images")
    p.add_argument("--pipeline", required=True, choices=["torchvision", "torchvision-totensor", "feedline",
                                                              "torchvision-recipe", "feedline-recipe"])
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--epochs", type=int, default=2, help="timed epochs a run")
    p.add_argument("--repeat", type=int, default=1, help="timed runs")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", required=True, help="write the results here")
    args = p.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"image_bench.py: {args.data}: not a folder")
    torch.set_num_threads(1)
    loader, version = make_loader(args)
    start = time.perf_counter()
    one_epoch(loader)  # warm-up: worker start, page cache
    warmup = time.perf_counter() - start
    rates, seconds, images = [], [], 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        images = sum(one_epoch(loader) for _ in range(args.epochs))
        s = time.perf_counter() - start
        seconds.append(s)
        rates.append(images / s if s > 0 else 0.0)
    del loader  # ends the workers, so that their peak memory is counted below
    kib = 1024.0
    result = dict(pipeline=args.pipeline, version=version, torch=torch.__version__, workers=args.workers,
                  batch_size=args.batch_size, image_size=args.image_size, epochs=args.epochs,
                  images_per_run=images, rates=rates, seconds=seconds, warmup_seconds=warmup,
                  peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / kib,
                  worker_peak_rss_mib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / kib,
                  settings=dict((k, os.environ.get(k, "unset")) for k in
                                ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS")))
    with open(args.json + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
    os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
