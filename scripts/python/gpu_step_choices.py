#!/usr/bin/env python3
"""What one SimpleCNN training step costs on a CUDA GPU under each choice a step can make, in PyTorch.

No loader: synthetic FashionMNIST-shaped data already on the device, gathered a batch at a time (as feedline's
compute floor does), the experiment's model, Adam lr 1e-3, batch 512. For each of eager or captured as a CUDA
graph, cuDNN's benchmark mode off or on, NCHW or channels-last, and torch's Adam per parameter (foreach=False),
multi-tensor (foreach=True) or fused (fused=True), it prints the median train epoch of the epochs after the
first two, and the ratio to the first row. Then the kernels of 20 eager steps, by their device time.
Its figures are why feedline's captured step updates its parameters as it does (docs/BENCHMARKS.md). Needs CUDA.

    python3 scripts/python/gpu_step_choices.py [--epochs 7]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment import SimpleCNN  # noqa: E402

SAMPLES, BATCH = 60000, 512


def adam_options(kind, capturable):
    options = {"lr": 1e-3, "capturable": capturable}
    options.update({"loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}[kind])
    return options


def epoch_seconds(graph, adam, benchmark, channels_last, epochs):
    torch.backends.cudnn.benchmark = benchmark
    torch.manual_seed(42)
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    model = SimpleCNN().cuda().to(memory_format=memory_format)
    optimizer = torch.optim.Adam(model.parameters(), **adam_options(adam, capturable=graph))
    images = torch.rand(SAMPLES, 1, 28, 28, device="cuda").contiguous(memory_format=memory_format)
    labels = torch.randint(0, 10, (SAMPLES,), device="cuda")
    x, y = images[:BATCH].clone(), labels[:BATCH].clone()

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    captured = None
    if graph:  # warm up on a side stream, then capture (PyTorch's documented whole-network capture)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        captured = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(captured):
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
    times = []
    for _ in range(epochs):
        torch.cuda.synchronize()
        start = time.perf_counter()
        order = torch.randperm(SAMPLES, device="cuda")
        for i in range(SAMPLES // BATCH):
            batch = order[i * BATCH:(i + 1) * BATCH]
            torch.index_select(images, 0, batch, out=x)
            torch.index_select(labels, 0, batch, out=y)
            if captured is not None:
                captured.replay()
            else:
                step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times[2:])


def kernel_table(benchmark, adam):
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cudnn.benchmark = benchmark
    model = SimpleCNN().cuda()
    optimizer = torch.optim.Adam(model.parameters(), **adam_options(adam, capturable=False))
    x = torch.rand(BATCH, 1, 28, 28, device="cuda")
    y = torch.randint(0, 10, (BATCH,), device="cuda")

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as run:
        for _ in range(20):
            step()
        torch.cuda.synchronize()
    print(f"--- cudnn.benchmark={benchmark}, Adam {adam}: kernels of 20 eager steps")
    print(run.key_averages().table(sort_by="cuda_time_total", row_limit=14, max_name_column_width=70))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=7, help="epochs per choice; the median skips the first two")
    args = parser.parse_args()
    if args.epochs < 3:
        parser.error("--epochs must be at least 3")
    if not torch.cuda.is_available():
        sys.exit("gpu_step_choices.py: needs a CUDA device, and this PyTorch sees none")
    print(f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}; {SAMPLES // BATCH} steps of {BATCH} an epoch", flush=True)
    first = None
    for graph in (False, True):
        for benchmark in (False, True):
            for channels_last in (False, True):
                for adam in ("loop", "foreach", "fused"):
                    seconds = epoch_seconds(graph, adam, benchmark, channels_last, args.epochs)
                    first = first or seconds
                    print(f"graph={graph!s:5} cudnn.benchmark={benchmark!s:5} channels_last={channels_last!s:5} "
                          f"adam={adam:7} {seconds * 1000:7.1f} ms/epoch {seconds / (SAMPLES // BATCH) * 1e6:6.0f} "
                          f"us/step {first / seconds:5.2f}x", flush=True)
    for benchmark, adam in ((False, "loop"), (True, "fused")):
        kernel_table(benchmark, adam)


if __name__ == "__main__":
    main()
