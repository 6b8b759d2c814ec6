"""feedline.DataLoader: the same batches for every worker count, shards, exact resume, errors, threads."""

import os
import threading

import pytest
import torch

import feedline


def batches(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def same(a, b):
    return len(a) == len(b) and all(torch.equal(x, u) and torch.equal(y, v) for (x, y), (u, v) in zip(a, b))


@pytest.fixture(scope="module")
def tensors():
    g = torch.Generator().manual_seed(7)
    features = torch.rand(1000, 3, generator=g)
    labels = torch.arange(1000)
    return features, labels


def test_batches_of_a_file_are_the_idx_images_divided_by_255(prepared, idx_test):
    images, labels = idx_test
    loader = feedline.DataLoader(prepared["parquet"], batch_size=512)
    assert len(loader) == 20 and loader.num_samples == 10000
    got = batches(loader)
    x = torch.cat([b[0] for b in got])
    y = torch.cat([b[1] for b in got])
    assert x.shape == (10000, 1, 28, 28) and x.dtype == torch.float32
    assert torch.equal(x, images.unsqueeze(1).float() / 255)
    assert torch.equal(y, labels)
    csv = batches(feedline.DataLoader(prepared["csv"], batch_size=512, mode="tensor-uint8"))
    assert torch.equal(torch.cat([b[0] for b in csv]), images.unsqueeze(1))


def test_tensor_batches_are_rows_of_the_given_tensors(tensors):
    features, labels = tensors
    loader = feedline.DataLoader((features, labels), batch_size=64, shuffle=True, seed=3)
    seen = torch.cat([y for _, y in loader])
    assert sorted(seen.tolist()) == list(range(1000)) and seen.tolist() != list(range(1000))
    for x, y in loader:
        assert torch.equal(x, features[y])
    dataset = torch.utils.data.TensorDataset(features, labels)
    assert same(batches(feedline.DataLoader(dataset, batch_size=100)),
                batches(torch.utils.data.DataLoader(dataset, batch_size=100)))


def test_the_same_seed_gives_the_same_batches_for_every_worker_count(prepared):
    runs = [batches(feedline.DataLoader(prepared["parquet"], batch_size=300, shuffle=True, seed=42, num_workers=w,
                                        limit=2000))
            for w in (0, 1, 2, 3)]
    for run in runs[1:]:
        assert same(runs[0], run)
    other = batches(feedline.DataLoader(prepared["parquet"], batch_size=300, shuffle=True, seed=43, limit=2000))
    assert not same(runs[0], other)


def test_each_epoch_is_a_fresh_permutation_and_set_epoch_picks_one(tensors):
    loader = feedline.DataLoader(tensors, batch_size=1000, shuffle=True, seed=5)
    first, second = [torch.cat([y for _, y in loader]) for _ in range(2)]
    assert not torch.equal(first, second)
    loader.set_epoch(1)
    assert torch.equal(torch.cat([y for _, y in loader]), second)


def test_rank_shards_cover_each_sample_once(tensors):
    shares = [torch.cat([y for _, y in feedline.DataLoader(tensors, batch_size=7, shuffle=True, seed=1, rank=r,
                                                           world_size=3, even_shards=False)])
              for r in range(3)]
    assert sorted(torch.cat(shares).tolist()) == list(range(1000))
    padded = [feedline.DataLoader(tensors, batch_size=7, shuffle=True, seed=1, rank=r, world_size=3) for r in range(3)]
    assert len({len(p) for p in padded}) == 1
    seen = torch.cat([torch.cat([y for _, y in p]) for p in padded])
    assert len(seen) == 1002 and set(seen.tolist()) == set(range(1000))


def test_a_resumed_loader_yields_exactly_the_remaining_batches(prepared):
    def make(workers):
        return feedline.DataLoader(prepared["parquet"], batch_size=128, shuffle=True, seed=9, num_workers=workers,
                                   limit=3000)
    whole = make(2)
    expected = batches(whole) + batches(whole)  # two epochs
    interrupted = make(2)
    it = iter(interrupted)
    head = [(x.clone(), y.clone()) for x, y in (next(it) for _ in range(5))]
    state = interrupted.state_dict()
    assert state["epoch"] == 0 and state["batch"] == 5
    del it, interrupted
    for workers in (0, 3):
        resumed = make(workers)
        resumed.load_state_dict(state)
        rest = batches(resumed) + batches(resumed)
        assert same(head + rest, expected)


def test_a_state_resumes_on_another_world_size_with_the_same_global_batch(tensors):
    # Two ranks with batches of 4: global batches of 8. Rank r's k-th batch holds positions 8k + r, 8k + r + 2, ...
    # of the epoch's order, so global batch k is the union of the ranks' k-th batches, whatever the world size.
    def make(rank, world_size, batch_size):
        return feedline.DataLoader(tensors, batch_size=batch_size, shuffle=True, seed=4, rank=rank,
                                   world_size=world_size)

    def global_batches(loaders):
        # Two epochs of every rank, batch by batch: the sorted labels of each global batch.
        per_rank = [[y.clone() for _, y in loader] + [y.clone() for _, y in loader] for loader in loaders]
        assert len({len(b) for b in per_rank}) == 1
        return [torch.cat(ys).sort().values for ys in zip(*per_rank)]

    expected = global_batches([make(r, 2, 4) for r in range(2)])
    assert len(expected) == 2 * 125
    saved = make(0, 2, 4)
    it = iter(saved)
    for _ in range(30):
        next(it)
    state = saved.state_dict()
    assert state["world_size"] == 2 and state["batch"] == 30
    del it, saved
    for world_size, batch_size in ((1, 8), (4, 2)):
        loaders = [make(r, world_size, batch_size) for r in range(world_size)]
        for loader in loaders:
            loader.load_state_dict(state)
        rest = global_batches(loaders)
        assert len(rest) == len(expected) - 30, world_size
        assert all(torch.equal(a, b) for a, b in zip(rest, expected[30:])), world_size
    # Another global batch is refused.
    with pytest.raises(ValueError, match="batch"):
        make(0, 1, 4).load_state_dict(state)


def test_a_state_of_another_run_is_refused_naming_what_differs(tensors):
    state = feedline.DataLoader(tensors, batch_size=10, seed=1).state_dict()
    with pytest.raises(ValueError, match="batch size"):
        feedline.DataLoader(tensors, batch_size=20, seed=1).load_state_dict(state)
    with pytest.raises(ValueError, match="seed"):
        feedline.DataLoader(tensors, batch_size=10, seed=2).load_state_dict(state)


def task_count():
    return len(os.listdir("/proc/self/task"))


def test_breaking_out_early_and_dropping_the_loader_leaves_no_thread(prepared):
    before = task_count()
    for _ in range(3):
        loader = feedline.DataLoader(prepared["parquet"], batch_size=64, shuffle=True, num_workers=3,
                                     persistent_workers=True, limit=4000)
        for i, _ in enumerate(loader):
            if i == 2:
                break
        for i, _ in enumerate(loader):  # a second epoch while the first was left unfinished
            if i == 1:
                break
        del loader
    assert task_count() <= before


def test_the_loader_releases_the_gil_while_workers_run_python(tensors):
    # The transform, run by a worker thread, waits for an event that a second Python thread sets: this can only
    # finish if the consumer (blocked in next()) and the worker both let other Python threads run.
    go = threading.Event()
    ran = []

    def other():
        ran.append(True)
        go.set()

    def transform(x, y):
        assert go.wait(timeout=60), "the second Python thread never ran"
        return x * 2, y

    loader = feedline.DataLoader(tensors, batch_size=500, num_workers=2, transform=transform)
    helper = threading.Thread(target=other)
    it = iter(loader)
    helper.start()
    x, y = next(it)
    helper.join()
    assert ran and torch.equal(x, tensors[0][y] * 2)


def test_a_transform_gets_a_seed_of_its_batch_alone(tensors):
    def noisy(x, y, info):
        epoch, batch, seed = info
        g = torch.Generator().manual_seed(seed % (1 << 63))
        return x + torch.rand(x.shape, generator=g), y
    runs = [batches(feedline.DataLoader(tensors, batch_size=100, shuffle=True, seed=4, num_workers=w,
                                        transform=noisy)) for w in (0, 3)]
    assert same(runs[0], runs[1])


def test_errors_reach_python_with_their_kind(prepared, tensors, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.parquet"):
        feedline.DataLoader(tmp_path / "missing.parquet", batch_size=4)
    with pytest.raises(ValueError, match=r"test\.parquet.*'nolabel'|'nolabel'.*test\.parquet"):
        feedline.DataLoader(prepared["parquet"], label_column="nolabel")
    with pytest.raises(ValueError, match="batch_size"):
        feedline.DataLoader(tensors, batch_size=0)
    with pytest.raises(TypeError, match="source"):
        feedline.DataLoader([1, 2, 3])

    def broken(x, y):
        raise KeyError("from the transform")
    loader = feedline.DataLoader(tensors, batch_size=100, num_workers=2, transform=broken)
    with pytest.raises(KeyError, match="from the transform"):
        next(iter(loader))
    with pytest.raises(ValueError, match="mode"):
        feedline.DataLoader(prepared["parquet"], mode="fast")


def _rank_main(rank, store, out):
    # A rank of a two-process torch.distributed job: the loader takes its rank and world size from the group.
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    features, labels = torch.zeros(100, 1), torch.arange(100)
    loader = feedline.DataLoader((features, labels), batch_size=8, shuffle=True)  # seed: 0, as for DistributedSampler
    seen = torch.cat([y for _, y in loader])
    torch.save({"rank": loader.rank, "world_size": loader.world_size, "seen": seen}, f"{out}.{rank}")
    dist.destroy_process_group()


def test_rank_and_world_size_come_from_torch_distributed(tmp_path):
    import torch.multiprocessing as mp
    mp.start_processes(_rank_main, args=(str(tmp_path / "store"), str(tmp_path / "out")), nprocs=2,
                       start_method="spawn", join=True)
    got = [torch.load(tmp_path / f"out.{r}") for r in range(2)]
    assert [(g["rank"], g["world_size"]) for g in got] == [(0, 2), (1, 2)]
    assert len(got[0]["seen"]) == len(got[1]["seen"]) == 50
    assert sorted(torch.cat([g["seen"] for g in got]).tolist()) == list(range(100))
