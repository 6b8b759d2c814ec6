"""The experiment's training loop (SimpleCNN, Adam 1e-3, cross-entropy, seed 42, 5 epochs) fed by
feedline.DataLoader. Run `feedline prepare --data-dir data` first; then:

    python3 examples/python/train_fashion_mnist.py [--data-dir data] [--epochs 5] [--limit 0]
"""
import argparse
import time

import torch
import torch.nn as nn

import feedline


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="data")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--limit", type=int, default=0, help="first N rows of each split (0: all)")
    args = p.parse_args()

    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    # Each file is decoded once, in C++, into one float tensor (pixels / 255); worker threads gather the batches.
    train_loader = feedline.DataLoader(f"{args.data_dir}/FashionMNIST/train.parquet", batch_size=512, shuffle=True,
                                       seed=42, num_workers=2, persistent_workers=True, pin_memory=device.type == "cuda",
                                       limit=args.limit)
    test_loader = feedline.DataLoader(f"{args.data_dir}/FashionMNIST/test.parquet", batch_size=512,
                                      limit=args.limit)

    model = SimpleCNN().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_times, test_times = [], []
    for epoch in range(args.epochs):
        model.train()
        start = time.perf_counter()
        for images, labels in train_loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
        train_times.append(time.perf_counter() - start)

        model.eval()
        start = time.perf_counter()
        correct = 0
        with torch.no_grad():
            for images, labels in test_loader:
                images, labels = images.to(device), labels.to(device)
                correct += (model(images).argmax(1) == labels).sum().item()
        test_times.append(time.perf_counter() - start)
        print(f"Epoch {epoch + 1}/{args.epochs}: loss {loss.item():.4f}, "
              f"test accuracy {100 * correct / test_loader.num_samples:.2f}%")

    print(f"Average Train Time per Epoch: {sum(train_times) / len(train_times):.2f}s")
    print(f"Average Test Time per Epoch: {sum(test_times) / len(test_times):.2f}s")
    print(f"Total Train Time: {sum(train_times):.2f}s")
    print(f"Total Test Time: {sum(test_times):.2f}s")


if __name__ == "__main__":
    main()
