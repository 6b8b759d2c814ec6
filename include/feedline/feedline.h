// feedline in one include: every installed header, layer by layer. Data flows one way, io -> dataset -> loader ->
// train -> dist; a layer includes only the layers before it. The io headers need no LibTorch (a project that links
// feedline::feedline_io alone includes those it uses, not this file). docs/api.md describes each header.
#pragma once

// io: files (local and remote), IDX, CSV, Parquet, tables, column choice, conversion, image decoding. No LibTorch.
#include "feedline/io/arg.h"
#include "feedline/io/columns.h"
#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/image_decode.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/remote.h"
#include "feedline/io/table.h"

// dataset: tables made into tensors and datasets (row, tensor, device-resident, streamed Parquet, images), and
// samples stored encoded made whole by a per-sample transform.
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/dataset_mode.h"
#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_file.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/dataset/stream_dataset.h"

// loader: shuffled batches from worker threads, pinned, in sampler order.
#include "feedline/loader/loader.h"

// train: SimpleCNN and torchvision's ResNets, the training loop for any module, checkpoints, CPU settings.
#include "feedline/train/models.h"
#include "feedline/train/train.h"

// dist: data-parallel training on torch.distributed's c10d.
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
