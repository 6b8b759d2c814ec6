"""feedline.Mixture and feedline.Stream: image folders and tensor pairs mixed by proportion, repeat or count, served
by feedline.DataLoader (exact counts an epoch, relabelling, the same batches for any num_workers, resuming)."""

import pathlib
import shutil

import pytest
import torch

import feedline
from feedline import transforms as T

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"

# Two folders of class folders, from the photos in tests/data/images: class folder -> files.
TREE_A = {
    "cat": ["chelsea_444_progressive.jpg", "chelsea.png", "chelsea_lossy.webp"],
    "dog": ["china.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg"],
    "owl": ["chelsea_rgba.png", "chelsea_palette_trns.png"],
}
TREE_B = {
    "ant": ["china.jpg", "chelsea.png"],
    "bee": ["chelsea_gray.jpg", "chelsea_lossy.webp", "chelsea_rgba.png"],
}
FIXED = T.Compose([T.Resize((16, 16)), T.PILToTensor()])


def make_folder(root, tree):
    for cls, files in tree.items():
        for k, src in enumerate(files):
            dst = root / cls / f"{k}{pathlib.Path(src).suffix}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(IMAGES / src, dst)
    return root


@pytest.fixture
def folders(tmp_path):
    return make_folder(tmp_path / "a", TREE_A), make_folder(tmp_path / "b", TREE_B)


def batches(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def indexed(n, start, label=0):
    """n samples whose one feature is their number (start, start + 1, ...), all of class `label`."""
    return torch.arange(start, start + n, dtype=torch.float32).unsqueeze(1), torch.full((n,), label, dtype=torch.int64)


# --- images ----------------------------------------------------------------------------------------------------

def test_proportions_give_exact_counts_and_relabelled_classes(folders):
    a = feedline.ImageFolder(folders[0], transform=FIXED)
    b = feedline.ImageFolder(folders[1], transform=FIXED)
    mix = feedline.Mixture([feedline.Stream(a, proportion=0.8),
                            feedline.Stream(b, proportion=0.2, label_offset=3, label_map={0: 1, 1: 0})],
                           epoch_size=20)
    assert len(mix) == 20 and mix.sizes == [8, 5] and mix.counts == [16, 4]
    assert mix.names[0].startswith("source 1") and str(folders[0]) in mix.names[0]
    # b's class 0 (ant) becomes 1 + 3, its class 1 (bee) 0 + 3
    assert mix.class_names == ["cat", "dog", "owl", "bee", "ant"] == mix.classes
    loader = feedline.DataLoader(mix, batch_size=3, shuffle=True, seed=5, num_workers=2)
    assert loader.source_samples == [0, 0]
    for epoch in range(3):
        labels = torch.cat([y for _, y in loader])
        assert loader.source_samples == [16, 4]
        assert labels.numel() == 20
        assert int((labels >= 3).sum()) == 4 and int((labels < 3).sum()) == 16
        assert set(labels.tolist()) <= {0, 1, 2, 3, 4}
    # ds[i]: source 1's samples, then source 2's, relabelled; the same pixels as the folder's own
    image, label = mix[8]  # b's first sample: ant, class 0 -> 4
    assert label == 4 and torch.equal(image, b[0][0])
    assert mix[-1][1] == 3 and mix[2][1] == a[2][1]
    with pytest.raises(IndexError):
        mix[13]


def test_weights_are_proportions_and_counts_sum_over_ranks(folders):
    a = feedline.ImageFolder(folders[0], transform=FIXED)
    b = feedline.ImageFolder(folders[1], transform=FIXED)
    mix = feedline.Mixture([a, feedline.Stream(b, label_offset=3)], weights=[3, 1], epoch_size=12)
    assert mix.counts == [9, 3] and mix.streams[1].proportion == 1.0 and mix.streams[1].label_offset == 3
    total = [0, 0]
    for rank in range(2):
        loader = feedline.DataLoader(mix, batch_size=2, shuffle=True, seed=1, rank=rank, world_size=2)
        assert sum(y.numel() for _, y in loader) == 6
        total = [t + s for t, s in zip(total, loader.source_samples)]
    assert total == [9, 3]


def test_same_batches_for_any_worker_count(folders):
    pipeline = T.Compose([T.RandomResizedCrop(16), T.RandomHorizontalFlip(), T.ToTensor()])
    a = feedline.ImageFolder(folders[0], transform=pipeline)
    b = feedline.ImageFolder(folders[1], transform=pipeline)
    mix = feedline.Mixture([feedline.Stream(a, repeat=1.5), feedline.Stream(b, choose=4, label_offset=3)])
    assert mix.counts == [12, 4]
    runs = []
    for workers in (0, 1, 2, 4):
        loader = feedline.DataLoader(mix, batch_size=3, shuffle=True, num_workers=workers, seed=11)
        runs.append(batches(loader) + batches(loader))  # two epochs
    for run in runs[1:]:
        assert len(run) == len(runs[0])
        for (x0, y0), (x, y) in zip(runs[0], run):
            assert x0.shape[1:] == (3, 16, 16)
            assert torch.equal(x0, x) and torch.equal(y0, y)


def test_resume_mid_epoch_gives_the_rest_bit_for_bit(folders):
    pipeline = T.Compose([T.RandomResizedCrop(16), T.ToTensor()])
    a = feedline.ImageFolder(folders[0], transform=pipeline)
    b = feedline.ImageFolder(folders[1], transform=pipeline)
    mix = feedline.Mixture([a, feedline.Stream(b, label_offset=3)], weights=[0.7, 0.3], epoch_size=15)
    full = feedline.DataLoader(mix, batch_size=2, shuffle=True, seed=3)
    batches(full)
    whole = batches(full)  # epoch 1
    loader = feedline.DataLoader(mix, batch_size=2, shuffle=True, seed=3, num_workers=2)
    loader.set_epoch(1)
    it = iter(loader)
    for _ in range(3):
        next(it)
    state = loader.state_dict()
    loader.close()
    assert state["epoch"] == 1 and state["batch"] == 3 and state["samples"] == 15
    resumed = feedline.DataLoader(mix, batch_size=2, shuffle=True, seed=3, num_workers=2)
    resumed.load_state_dict(state)
    rest = batches(resumed)
    assert len(rest) == len(whole) - 3
    for (x, y), (xw, yw) in zip(rest, whole[3:]):
        assert torch.equal(x, xw) and torch.equal(y, yw)


def test_image_errors(folders):
    a = feedline.ImageFolder(folders[0], transform=FIXED)
    other = feedline.ImageFolder(folders[1], transform=T.Compose([T.Resize((8, 8)), T.PILToTensor()]))
    with pytest.raises(ValueError, match="different transforms") as e:
        feedline.Mixture([a, other])
    assert str(folders[0]) in str(e.value) and str(folders[1]) in str(e.value)
    with pytest.raises(ValueError, match="image datasets only or of tensors only"):
        feedline.Mixture([a, indexed(4, 0)])
    python_transform = feedline.ImageFolder(folders[1], transform=lambda image: image)
    with pytest.raises(TypeError, match="Python callable"):
        feedline.Mixture([python_transform, python_transform])
    # both name class 0, with other names: cat and ant
    with pytest.raises(ValueError, match="'ant'.*'cat'|'cat'.*'ant'"):
        feedline.Mixture([a, feedline.ImageFolder(folders[1], transform=FIXED)])


# --- tensors ---------------------------------------------------------------------------------------------------

def test_repeat_one_gives_every_sample_once_an_epoch():
    a = indexed(10, 0, label=0)
    b = torch.utils.data.TensorDataset(*indexed(20, 100, label=1))
    mix = feedline.Mixture([feedline.Stream(a, repeat=1), feedline.Stream(b, choose=7)])
    assert len(mix) == 17 and mix.counts == [10, 7] and mix.class_names is None
    loader = feedline.DataLoader(mix, batch_size=4, shuffle=True, seed=2, num_workers=2)
    seen_b = []
    for epoch in range(2):
        xs, ys = zip(*batches(loader))
        values = torch.cat(xs).flatten().long().tolist()
        labels = torch.cat(ys).tolist()
        from_a = sorted(v for v in values if v < 100)
        assert from_a == list(range(10))  # each of a's samples exactly once
        assert all(labels[k] == (0 if v < 100 else 1) for k, v in enumerate(values))
        seen_b += [v for v in values if v >= 100]
        assert loader.source_samples == [10, 7]
    # b deals from passes without replacement: two epochs of 7 are 14 different samples
    assert len(seen_b) == 14 and len(set(seen_b)) == 14
    assert mix[12][0].item() == 102.0 and mix[12][1].item() == 1


def test_tensor_label_map_and_offset():
    a = indexed(4, 0, label=0)
    b = (torch.arange(10, 16, dtype=torch.float32).unsqueeze(1), torch.tensor([0, 1, 2, 0, 1, 2]))
    mix = feedline.Mixture([a, feedline.Stream(b, label_map=[2, 0, 1], label_offset=1)])
    assert [int(mix[i][1]) for i in range(4, 10)] == [3, 1, 2, 3, 1, 2]
    loader = feedline.DataLoader(mix, batch_size=5, shuffle=False)
    x, y = (torch.cat(t) for t in zip(*batches(loader)))
    by_value = dict(zip(x.flatten().long().tolist(), y.tolist()))
    assert by_value == {0: 0, 1: 0, 2: 0, 3: 0, 10: 3, 11: 1, 12: 2, 13: 3, 14: 1, 15: 2}


def test_torch_dataloader_reads_a_mixture_by_its_epoch_order():
    mix = feedline.Mixture([indexed(6, 0), indexed(3, 50, label=1)], weights=[0.5, 0.5])
    order = mix.epoch_order(0, shuffle=True, seed=4)
    assert len(order) == len(mix) == 9
    loader = torch.utils.data.DataLoader(mix, batch_size=3, sampler=order)
    values = torch.cat([x for x, _ in loader]).flatten().tolist()
    assert sum(v >= 50 for v in values) == mix.counts[1]


def test_non_mixture_has_no_source_samples():
    loader = feedline.DataLoader(indexed(4, 0), batch_size=2)
    batches(loader)
    assert loader.source_samples is None


def test_tensor_sources_that_disagree_are_named():
    with pytest.raises(ValueError, match="source 2"):
        feedline.Mixture([indexed(4, 0), (torch.zeros(4, 3), torch.zeros(4, dtype=torch.int64))])
    with pytest.raises(ValueError, match="source 2"):
        feedline.Mixture([indexed(4, 0), (torch.zeros(4, 1), torch.zeros(3, dtype=torch.int64))])
    with pytest.raises(TypeError, match="source 2"):
        feedline.Mixture([indexed(4, 0), "not a dataset"])


def test_stream_and_mixture_argument_errors():
    pair = indexed(4, 0)
    with pytest.raises(ValueError, match="at most one of proportion, repeat and choose"):
        feedline.Stream(pair, proportion=0.5, repeat=2)
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="above 0"):
            feedline.Stream(pair, proportion=bad)
        with pytest.raises(ValueError, match="above 0"):
            feedline.Stream(pair, repeat=bad)
    with pytest.raises(ValueError, match="choose=0"):
        feedline.Stream(pair, choose=0)
    with pytest.raises(TypeError, match="choose must be an int"):
        feedline.Stream(pair, choose=2.5)
    with pytest.raises(ValueError, match="no entry for class 1"):
        feedline.Stream(pair, label_map={0: 3, 2: 4})
    with pytest.raises(ValueError, match="class numbers"):
        feedline.Stream(pair, label_map=[0, -1])
    assert feedline.Stream(pair, label_map={1: 5, 0: 7}).label_map == [7, 5]
    assert feedline.Stream(pair).repeat == 1.0
    with pytest.raises(ValueError, match="sets its own share"):
        feedline.Mixture([feedline.Stream(pair, repeat=2), pair], weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="2 weights for 3 sources"):
        feedline.Mixture([pair, pair, pair], weights=[1, 2])
    with pytest.raises(ValueError, match="at least one source"):
        feedline.Mixture([])
    with pytest.raises(ValueError, match="epoch_size=0"):
        feedline.Mixture([pair], epoch_size=0)
    # proportions with repeats: the core refuses, naming the source
    with pytest.raises(ValueError, match="source"):
        feedline.Mixture([feedline.Stream(pair, proportion=0.5), feedline.Stream(pair, repeat=1)])
    # a label the map does not hold
    with pytest.raises(ValueError):
        mix = feedline.Mixture([feedline.Stream((torch.zeros(2, 1), torch.tensor([0, 3])), label_map=[1, 2])])
        batches(feedline.DataLoader(mix, batch_size=2))
