#!/usr/bin/python3
"""torchrun, as `torchrun` runs it, with the redirect settings of torch 1.13 under Python 3.11 mended.

torch 1.13's Std.from_str("0") (the default of --redirects and --tee) looks its value up by iterating over Std, an
IntFlag; since Python 3.11 that iteration leaves out the zero member Std.NONE, so from_str gives None and the agent
fails as it starts its workers. to_map, which turns the setting into one value per local rank, is the one place
those values pass: here it reads None as Std.NONE. Usage: torchrun.py <torchrun's arguments>.
"""
import sys

import torch.distributed.elastic.multiprocessing as elastic_mp
import torch.distributed.elastic.multiprocessing.api as elastic_api
from torch.distributed.elastic.multiprocessing.api import Std

_to_map = elastic_api.to_map


def to_map(val_or_map, local_world_size):
    if val_or_map is None:
        val_or_map = Std.NONE
    elif isinstance(val_or_map, dict):
        val_or_map = {k: Std.NONE if v is None else v for k, v in val_or_map.items()}
    return _to_map(val_or_map, local_world_size)


elastic_api.to_map = to_map
elastic_mp.to_map = to_map

from torch.distributed.run import main  # noqa: E402 (after the mend)

if __name__ == "__main__":
    sys.exit(main())
