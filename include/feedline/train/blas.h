// The BLAS under LibTorch's CPU kernels and its threads. Process-wide settings, for the program that trains (the
// feedline tool applies them at start); a library never changes them by itself.
#pragma once

#include <string>

namespace feedline {

// LibTorch parallelises a CPU step with its own intra-op threads (torch::set_num_threads) and calls the BLAS
// from inside them; OpenBLAS built with pthreads then starts threads of its own in each call, more threads than
// cores, that spin while they wait. Measured here on 2 cores, a SimpleCNN epoch at batch 512 took 20-25% less
// time with OpenBLAS on 1 thread (LibTorch on 2) than with OpenBLAS on 2, and varied less; with LibTorch on 1
// thread, OpenBLAS's second thread bought nothing. set_blas_threads(1) is that setting.
//
// Sets the threads of each BLAS call where the BLAS is OpenBLAS, found in the running process; returns false,
// changing nothing, where it is not (MKL in pip's LibTorch, reference BLAS). Call it before training starts.
bool set_blas_threads(int threads);

// The BLAS found in the process and its threads, in words ("OpenBLAS 0.3.21 ... , 1 thread per call"), or an
// empty string where it is not OpenBLAS.
std::string blas_description();

}  // namespace feedline
