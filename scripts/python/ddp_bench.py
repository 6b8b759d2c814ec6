#!/usr/bin/env python3
"""PyTorch's own CPU training of SimpleCNN, one process or DistributedDataParallel over Gloo: what `feedline bench
dist` runs beside feedline's rows, once per configuration and round, in processes of its own.

The same work as `feedline train --device cpu --dataset-mode tensor`: the first --limit samples of each split of
the files `feedline prepare` writes, decoded once into one float32 tensor in [0, 1] before any timing; SimpleCNN
(conv 1->16 3x3 pad 1, ReLU, maxpool 2; conv 16->32 3x3 pad 1, ReLU, maxpool 2; flatten; linear 1568->128, ReLU;
linear 128->10); cross entropy; Adam 1e-3; a global batch of --batch-size, --batch-size / --nproc a rank; every
epoch reshuffled (DistributedSampler: rank r takes positions r, r + nproc, ... of the epoch's permutation), each
batch gathered from the tensor with index_select. --nproc 1 trains plainly, with no process group and no DDP;
--nproc N > 1 starts N ranks (torch.multiprocessing, a FileStore in a scratch folder, Gloo on the loopback
interface) and wraps the model in DistributedDataParallel with its defaults. Each process runs --threads intra-op
threads.

An epoch's time is its training pass alone, on rank 0: from the epoch's permutation to the totals summed over the
ranks after the last step (as feedline's epoch time runs). The test split is evaluated after each epoch, untimed.

Parquet is read with pandas where it can (pyarrow); otherwise the CSV file `feedline prepare` writes beside it,
which holds the same rows. Run it with the process settings the feedline tool applies (MALLOC_MMAP_MAX_=0,
MALLOC_TRIM_THRESHOLD_ high, OPENBLAS_NUM_THREADS=1): `feedline bench dist` sets them in the environment.
Writes one JSON document to --json: each epoch's seconds, the test accuracy after the last, the data read.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

try:
    import numpy as np
    import pandas as pd
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DistributedSampler
except ImportError as e:
    sys.exit(f"ddp_bench.py: cannot import {e.name}: {e}")

FOLDERS = {"mnist": "MNIST", "fashion-mnist": "FashionMNIST"}


class SimpleCNN(nn.Module):
    """feedline's SimpleCNN (include/feedline/train/model.h): the same layers, shapes and operations."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def read_split(args, split):
    """The first --limit rows of one split as (images [N, 1, 28, 28] float32 in [0, 1], labels int64), and what
    was read."""
    base = os.path.join(args.data_dir, FOLDERS[args.dataset], split)
    path = f"{base}.{args.format}"
    if not os.path.exists(path):
        sys.exit(f"ddp_bench.py: {path}: not found; run `feedline prepare` first (or pass --data-dir)")
    frame, read = None, path
    if args.format == "parquet":
        try:
            frame = pd.read_parquet(path)
        except ImportError:
            read = f"{base}.csv"
            if not os.path.exists(read):
                sys.exit(f"ddp_bench.py: {path}: pandas cannot read Parquet here (no pyarrow), and there is no "
                         f"{read} beside it")
    if frame is None:
        frame = pd.read_csv(read, nrows=args.limit if args.limit > 0 else None)
    if args.limit > 0:
        frame = frame.head(args.limit)
    values = frame.to_numpy(dtype=np.int64)
    if values.shape[1] != 785:
        sys.exit(f"ddp_bench.py: {read}: {values.shape[1]} columns, not a label and 784 pixels")
    labels = torch.from_numpy(np.ascontiguousarray(values[:, 0]))
    images = torch.from_numpy(values[:, 1:].astype(np.float32)).div_(255).reshape(-1, 1, 28, 28).contiguous()
    return images, labels, read


def summed(values, group):
    """values (a list of floats) summed over the ranks, or as they are in one process."""
    t = torch.tensor(values, dtype=torch.float64)
    if group:
        dist.all_reduce(t)
    return t.tolist()


def train_epoch(model, optimizer, images, labels, sampler, per_rank, group):
    model.train()
    indices = torch.tensor(list(sampler), dtype=torch.int64)
    loss_sum = torch.zeros((), dtype=torch.float64)
    for at in range(0, len(indices), per_rank):
        idx = indices[at:at + per_rank]
        x, y = images.index_select(0, idx), labels.index_select(0, idx)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach().double() * y.shape[0]
    loss_total, seen = summed([loss_sum.item(), float(len(indices))], group)
    return loss_total / max(seen, 1)


def evaluate(model, images, labels, rank, world, per_rank, group):
    """Test accuracy: rank r takes samples r, r + world, ... (each once), the counts summed over the ranks."""
    model.eval()
    correct, seen = 0, 0
    mine = torch.arange(rank, len(labels), world)
    with torch.no_grad():
        for at in range(0, len(mine), per_rank):
            idx = mine[at:at + per_rank]
            out = model(images.index_select(0, idx))
            correct += int((out.argmax(1) == labels.index_select(0, idx)).sum())
            seen += len(idx)
    correct, seen = summed([float(correct), float(seen)], group)
    return correct / max(seen, 1)


def run_rank(rank, args, store_path):
    torch.set_num_threads(args.threads)
    world = args.nproc
    group = world > 1
    if group:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        dist.init_process_group("gloo", store=dist.FileStore(store_path, world), rank=rank, world_size=world)
    train_x, train_y, read = read_split(args, "train")
    test_x, test_y, _ = read_split(args, "test")
    torch.manual_seed(args.seed)
    model = SimpleCNN()
    if group:
        model = DistributedDataParallel(model)  # broadcasts rank 0's parameters
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    per_rank = args.batch_size // world
    sampler = DistributedSampler(range(len(train_y)), num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    seconds, losses, accuracy = [], [], 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        losses.append(train_epoch(model, optimizer, train_x, train_y, sampler, per_rank, group))
        seconds.append(time.perf_counter() - start)
        accuracy = evaluate(model, test_x, test_y, rank, world, per_rank, group)
        if rank == 0:
            print(f"Epoch {epoch + 1}/{args.epochs}: train {seconds[-1]:.3f}s, loss {losses[-1]:.4f}, "
                  f"test accuracy {100 * accuracy:.2f}%", flush=True)
    if rank == 0:
        result = {"epoch_seconds": seconds, "train_loss": losses, "test_accuracy": accuracy,
                  "processes": world, "threads": args.threads, "ddp": group,
                  "train_samples": len(train_y), "data": read, "version": f"torch {torch.__version__}"}
        with open(args.json + ".part", "w") as f:
            json.dump(result, f, indent=2)
        os.replace(args.json + ".part", args.json)
    if group:
        dist.barrier()
        # torch 1.13 can deadlock tearing DDP down (its Gloo group joins a worker thread that waits for the GIL the
        # destructor holds): with the results written and every rank past the barrier, the rank leaves at once.
        sys.stdout.flush()
        os._exit(0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="data", help="the folder `feedline prepare` wrote")
    p.add_argument("--dataset", choices=sorted(FOLDERS), default="fashion-mnist")
    p.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    p.add_argument("--limit", type=int, default=0, help="the first N samples of each split (0: all)")
    p.add_argument("--batch-size", type=int, default=512, help="the global batch")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--nproc", type=int, default=1, help="1: one process, no DDP; N: N ranks under DDP")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads a process")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", required=True, help="write the results here")
    args = p.parse_args()
    if args.nproc < 1 or args.threads < 1 or args.epochs < 1 or args.limit < 0:
        sys.exit("ddp_bench.py: --nproc, --threads and --epochs must be at least 1, --limit at least 0")
    if args.batch_size < args.nproc or args.batch_size % args.nproc != 0:
        sys.exit(f"ddp_bench.py: --batch-size {args.batch_size} does not split evenly between {args.nproc} ranks")
    if args.nproc == 1:
        run_rank(0, args, None)
        return
    if not dist.is_available() or not dist.is_gloo_available():
        sys.exit(f"ddp_bench.py: torch {torch.__version__} has no Gloo backend")
    scratch = tempfile.mkdtemp(prefix="feedline-ddp-bench-")
    try:
        mp.spawn(run_rank, args=(args, os.path.join(scratch, "store")), nprocs=args.nproc, join=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
