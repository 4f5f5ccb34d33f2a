// One-dimensional complex discrete Fourier transforms of any length, in double precision, for the
// spectral kernels (DFT, STFT). A plan is made once per length and direction and then run on
// every line of a tensor.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace ortc::exec {

using Complex = std::complex<double>;

// X[k] = sum_j x[j] exp(sign 2 pi i j k / n), sign = -1 forward and +1 inverse. The inverse is
// not scaled by 1/n: callers scale.
//   - n a power of two: iterative radix-2 Cooley-Tukey, O(n log n).
//   - other n up to kDirectMaxLength: direct summation over a table of the n twiddles, O(n^2);
//     for short lines it is as fast and the most accurate.
//   - longer n: Bluestein's chirp-z algorithm, which writes the transform as a convolution and
//     does that with power-of-two FFTs of length >= 2n - 1, O(n log n).
class FftPlan {
 public:
  static constexpr int64_t kDirectMaxLength = 32;

  FftPlan(int64_t n, bool inverse);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  int64_t size() const { return n_; }
  // Transforms `data` (n values) in place.
  void Run(Complex* data) const;

 private:
  enum class Method { kRadix2, kDirect, kBluestein };
  void Radix2(Complex* data) const;
  void Direct(Complex* data) const;
  void Bluestein(Complex* data) const;

  int64_t n_;
  Method method_;
  std::vector<Complex> twiddles_;  // exp(sign 2 pi i k / n): k < n/2 (radix-2), k < n (direct)
  std::vector<int64_t> bit_reverse_;
  // Bluestein: the chirp exp(sign pi i j^2 / n), the transformed filter and the forward and
  // inverse power-of-two plans the convolution runs on.
  std::vector<Complex> chirp_, filter_;
  std::unique_ptr<FftPlan> conv_forward_, conv_inverse_;
};

}  // namespace ortc::exec
