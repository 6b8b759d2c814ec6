// The BLAS under LibTorch's CPU kernels and its threads. Process-wide settings, for the program that trains (the
// feedline tool applies them at start); a library never changes them by itself.
#pragma once

#include <string>

namespace feedline {

// LibTorch parallelises a CPU step with its own intra-op threads (torch::set_num_threads) and calls the BLAS
// from inside them; OpenBLAS built with pthreads then starts threads of its own in each call, more threads than
// cores, that spin while they wait and take cores from LibTorch's own threads. One BLAS thread a call, inside each
// of LibTorch's, keeps one busy thread a core: set_blas_threads(1) is that setting (what it is worth on a CPU
// epoch: docs/BENCHMARKS.md, "CPU settings").
//
// Sets the threads of each BLAS call where the BLAS is OpenBLAS, found in the running process; returns false,
// changing nothing, where it is not (MKL in pip's LibTorch, reference BLAS). Call it before training starts.
bool set_blas_threads(int threads);

// The BLAS found in the process and its threads, in words ("OpenBLAS 0.3.21 ... , 1 thread per call"), or an
// empty string where it is not OpenBLAS.
std::string blas_description();

}  // namespace feedline
