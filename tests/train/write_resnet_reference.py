# The reference that tests/train/resnet_test.cpp holds feedline's ResNets to, written by torchvision itself.
#
#   /usr/bin/python3 write_resnet_reference.py OUT_DIR NAME...     (NAME: resnet18, resnet34, resnet50)
#
# For each NAME, OUT_DIR/NAME.pt (torch.save of a plain dict, which LibTorch's torch::pickle_load reads) holds:
#   state_dict       torchvision's model built with a fixed seed, its BatchNorm weights, biases and running
#                    statistics then set at random (so that loading each of them by name matters), as a dict
#   state_dict_keys, parameter_names, buffer_names   lists of names, in torchvision's order
#   decayed, not_decayed   parameter names as torchvision's references/classification/utils.py set_weight_decay
#                    groups them with norm_weight_decay and the custom key "bias" (re-stated below: references/ is
#                    not part of the torchvision package)
#   parameter_count  the number of parameters at 1000 classes
#   input            a fixed [2, 3, 64, 64] batch
#   eval_output      the model's output on `input` in eval mode
#   train_output     its output in train mode (batch statistics), from the same state
#   train_buffers    the buffers after that train-mode step (running statistics updated, num_batches_tracked + 1)
import sys

import torch
import torchvision

NORM_CLASSES = (
    torch.nn.modules.batchnorm._BatchNorm,
    torch.nn.LayerNorm,
    torch.nn.GroupNorm,
    torch.nn.modules.instancenorm._InstanceNorm,
    torch.nn.LocalResponseNorm,
)


def weight_decay_split(model):
    decayed, not_decayed = [], []

    def add(module, prefix):
        for name, p in module.named_parameters(recurse=False):
            if not p.requires_grad:
                continue
            full = prefix + name
            if name == "bias" or isinstance(module, NORM_CLASSES):
                not_decayed.append(full)
            else:
                decayed.append(full)
        for child_name, child in module.named_children():
            add(child, prefix + child_name + ".")

    add(model, "")
    return decayed, not_decayed


def reference(name, seed):
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(7)
    x = torch.randn(2, 3, 64, 64)
    decayed, not_decayed = weight_decay_split(model)
    out = {
        "state_dict": {k: v.clone() for k, v in model.state_dict().items()},
        "state_dict_keys": list(model.state_dict().keys()),
        "parameter_names": [k for k, _ in model.named_parameters()],
        "buffer_names": [k for k, _ in model.named_buffers()],
        "decayed": decayed,
        "not_decayed": not_decayed,
        "parameter_count": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "input": x,
    }
    with torch.no_grad():
        model.eval()
        out["eval_output"] = model(x)
        model.train()
        out["train_output"] = model(x)
    out["train_buffers"] = {k: v.clone() for k, v in model.named_buffers()}
    return out


def main():
    out_dir, names = sys.argv[1], sys.argv[2:]
    for name in names:
        torch.save(reference(name, seed=1234), "%s/%s.pt" % (out_dir, name))


if __name__ == "__main__":
    main()
