// Complex FFT plans of any length (see fft.h for the choice of method per length).
#include "cpu/runtime/kernels/fft.h"

#include <cmath>
#include <utility>

namespace ortc::exec {
namespace {

bool IsPowerOfTwo(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// exp(i angle), with angle = sign 2 pi k / n reduced first so large k stay accurate.
Complex Twiddle(int64_t k, int64_t n, double sign) {
  const double angle = sign * 2.0 * M_PI * static_cast<double>(k % n) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

}  // namespace

FftPlan::FftPlan(int64_t n, bool inverse) : n_(n) {
  const double sign = inverse ? 1.0 : -1.0;
  if (IsPowerOfTwo(n)) {
    method_ = Method::kRadix2;
    twiddles_.resize(static_cast<size_t>(n / 2));
    for (int64_t k = 0; k < n / 2; ++k) twiddles_[k] = Twiddle(k, n, sign);
    bit_reverse_.resize(static_cast<size_t>(n));
    int bits = 0;
    while ((int64_t{1} << bits) < n) ++bits;
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      bit_reverse_[i] = r;
    }
  } else if (n <= kDirectMaxLength) {
    method_ = Method::kDirect;
    twiddles_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) twiddles_[k] = Twiddle(k, n, sign);
  } else {
    method_ = Method::kBluestein;
    // j k = (j^2 + k^2 - (k - j)^2) / 2, so X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]) with
    // the chirp c[j] = exp(sign pi i j^2 / n): a convolution of length 2n - 1.
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    chirp_.resize(static_cast<size_t>(n));
    int64_t square = 0;  // j^2 mod 2n, kept exact by stepping (j+1)^2 = j^2 + 2j + 1
    for (int64_t j = 0; j < n; ++j) {
      const double angle = sign * M_PI * static_cast<double>(square) / static_cast<double>(n);
      chirp_[j] = {std::cos(angle), std::sin(angle)};
      square = (square + 2 * j + 1) % (2 * n);
    }
    conv_forward_ = std::make_unique<FftPlan>(m, false);
    conv_inverse_ = std::make_unique<FftPlan>(m, true);
    filter_.assign(static_cast<size_t>(m), Complex{});
    filter_[0] = std::conj(chirp_[0]);
    for (int64_t j = 1; j < n; ++j) filter_[j] = filter_[m - j] = std::conj(chirp_[j]);
    conv_forward_->Run(filter_.data());
  }
}

FftPlan::~FftPlan() = default;

void FftPlan::Run(Complex* data) const {
  if (n_ <= 1) return;
  switch (method_) {
    case Method::kRadix2:
      Radix2(data);
      break;
    case Method::kDirect:
      Direct(data);
      break;
    case Method::kBluestein:
      Bluestein(data);
      break;
  }
}

void FftPlan::Radix2(Complex* a) const {
  for (int64_t i = 0; i < n_; ++i)
    if (i < bit_reverse_[i]) std::swap(a[i], a[bit_reverse_[i]]);
  for (int64_t len = 2; len <= n_; len <<= 1) {
    const int64_t half = len / 2, step = n_ / len;
    for (int64_t start = 0; start < n_; start += len)
      for (int64_t j = 0; j < half; ++j) {
        const Complex u = a[start + j], v = a[start + j + half] * twiddles_[j * step];
        a[start + j] = u + v;
        a[start + j + half] = u - v;
      }
  }
}

void FftPlan::Direct(Complex* a) const {
  std::vector<Complex> out(static_cast<size_t>(n_));
  for (int64_t k = 0; k < n_; ++k) {
    Complex acc{};
    int64_t index = 0;  // j k mod n
    for (int64_t j = 0; j < n_; ++j) {
      acc += a[j] * twiddles_[index];
      index += k;
      if (index >= n_) index -= n_;
    }
    out[k] = acc;
  }
  for (int64_t k = 0; k < n_; ++k) a[k] = out[k];
}

void FftPlan::Bluestein(Complex* a) const {
  const int64_t m = conv_forward_->size();
  std::vector<Complex> work(static_cast<size_t>(m), Complex{});
  for (int64_t j = 0; j < n_; ++j) work[j] = a[j] * chirp_[j];
  conv_forward_->Run(work.data());
  for (int64_t j = 0; j < m; ++j) work[j] *= filter_[j];
  conv_inverse_->Run(work.data());
  const double scale = 1.0 / static_cast<double>(m);
  for (int64_t k = 0; k < n_; ++k) a[k] = work[k] * chirp_[k] * scale;
}

}  // namespace ortc::exec
