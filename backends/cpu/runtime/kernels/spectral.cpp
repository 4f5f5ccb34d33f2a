// Spectral kernels: DFT (opsets 17 and 20), STFT and MelWeightMatrix (opset 17). The window
// generators (Hann, Hamming, Blackman) live in misc.cpp.
//
// Transforms run in double precision on complex lines (fft.h) whatever the tensor type, and
// are written back in the input's floating type. Real input (last dimension 1) goes through
// the same complex transform as complex input: the spectra are small and one code path is
// easier to trust than a separate real-to-complex FFT. `onesided` keeps the first
// floor(n/2) + 1 bins; the inverse transform is scaled by 1/n.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "cpu/runtime/kernels/fft.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

// A scalar (or one-element) int32/int64 input; nullopt when the input is omitted or empty.
Result<std::optional<int64_t>> OptionalScalarInt(KernelContext& c, size_t i, const char* what) {
  if (!c.has_input(i) || c.in(i).elements() == 0) return std::optional<int64_t>{};
  auto v = IntsOf(c.input(i));
  if (!v || v->size() != 1 || c.in(i).rank() > 1)
    return c.Error(c.op().op_type + " " + what + " must be a scalar int32 or int64 tensor");
  return std::optional<int64_t>{(*v)[0]};
}

Status CheckSignal(KernelContext& c, const Tensor& x, int64_t min_rank, const char* name) {
  if (!IsFloatType(x.dtype()))
    return c.Error(c.op().op_type + " " + name + " must be float16, bfloat16, float or double");
  if (x.rank() < min_rank || (x.shape().back() != 1 && x.shape().back() != 2))
    return c.Error(c.op().op_type + " " + name + " must have rank >= " + std::to_string(min_rank) +
                   " and a last dimension of 1 (real) or 2 (real, imaginary); got rank " +
                   std::to_string(x.rank()));
  return Status::Ok();
}

// Input 0: [..., signal dims ..., 1 or 2]. Opset 17: axis attribute (default 1), dft_length
// input 1. Opset 20: dft_length input 1, axis input 2 (default -2); a negative axis counts from
// the back of the full shape, so -2 is the last signal dimension in both versions.
Status Dft(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (Status s = CheckSignal(c, x, 2, "input"); !s.ok()) return s;
  const int64_t rank = x.rank();
  int64_t axis = c.op().Int("axis", 1);
  if (c.op().version >= 20) {
    auto a = OptionalScalarInt(c, 2, "axis");
    if (!a.ok()) return a.status();
    axis = a->value_or(-2);
  }
  const int64_t given_axis = axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return c.Error("DFT axis " + std::to_string(given_axis) +
                   " is out of range for an input of rank " + std::to_string(rank) +
                   " (the last dimension holds real and imaginary parts)");
  auto length = OptionalScalarInt(c, 1, "dft_length");
  if (!length.ok()) return length.status();
  const int64_t n = length->value_or(x.shape()[axis]);
  if (n < 1)
    return c.Error("DFT length must be at least 1, got " + std::to_string(n) +
                   (length->has_value() ? " from dft_length" : " from the axis dimension"));
  const bool inverse = c.op().Int("inverse", 0) != 0;
  const bool onesided = c.op().Int("onesided", 0) != 0;
  if (inverse && onesided) return c.Error("DFT inverse and onesided cannot both be set");

  const int64_t bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> out_shape = x.shape();
  out_shape[axis] = bins;
  out_shape.back() = 2;
  if (n > kMaxTensorElements) return c.Error("DFT length must be at most 2^40");
  Tensor& y = c.OutputUninit(0, x.dtype(), out_shape);
  // No line to transform: the plan alone could take terabytes for a long dft_length.
  if (y.elements() == 0) return Status::Ok();

  const int64_t outer = Product(x.shape(), 0, axis), len = x.shape()[axis];
  const int64_t inner = Product(x.shape(), axis + 1, rank - 1), comp = x.shape().back();
  const int64_t used = std::min(len, n);  // the rest of the line is zero padding
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  const FftPlan plan(n, inverse);
  std::vector<Complex> line(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < used; ++j) {
        const int64_t at = ((o * len + j) * inner + i) * comp;
        line[j] = {ElementAsDouble(x, at), comp == 2 ? ElementAsDouble(x, at + 1) : 0.0};
      }
      std::fill(line.begin() + used, line.end(), Complex{});
      plan.Run(line.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((o * bins + k) * inner + i) * 2;
        SetElementFromDouble(y, at, line[k].real() * scale);
        SetElementFromDouble(y, at + 1, line[k].imag() * scale);
      }
    }
  return Status::Ok();
}

// signal [batch, length, 1 or 2], frame_step, optional window [frame_length], optional
// frame_length. Frame f covers samples [f * step, f * step + frame_length); frames that would
// run past the end are not produced. Output [batch, frames, bins, 2].
Status Stft(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (Status s = CheckSignal(c, x, 3, "signal"); !s.ok()) return s;
  if (x.rank() != 3) return c.Error("STFT signal must have shape [batch, length, 1 or 2]");
  auto step = OptionalScalarInt(c, 1, "frame_step");
  if (!step.ok()) return step.status();
  if (!step->has_value() || **step < 1) return c.Error("STFT frame_step must be at least 1");
  const Tensor* window = c.has_input(2) && c.in(2).elements() > 0 ? c.input(2) : nullptr;
  if (window && (window->rank() != 1 || !IsFloatType(window->dtype())))
    return c.Error("STFT window must be a 1-D floating tensor");
  auto frame_length = OptionalScalarInt(c, 3, "frame_length");
  if (!frame_length.ok()) return frame_length.status();
  int64_t n = 0;
  if (frame_length->has_value()) {
    n = **frame_length;
    if (window && window->shape()[0] != n)
      return c.Error("STFT window length " + std::to_string(window->shape()[0]) +
                     " differs from frame_length " + std::to_string(n));
  } else if (window) {
    n = window->shape()[0];
  } else {
    return c.Error("STFT needs a window or a frame_length");
  }
  const int64_t batch = x.shape()[0], length = x.shape()[1], comp = x.shape()[2];
  if (n < 1 || n > length)
    return c.Error("STFT frame_length " + std::to_string(n) + " must be in [1, signal length " +
                   std::to_string(length) + "]");
  const bool onesided = c.op().Int("onesided", 1) != 0;
  const int64_t hop = **step, frames = 1 + (length - n) / hop, bins = onesided ? n / 2 + 1 : n;
  Tensor& y = c.OutputUninit(0, x.dtype(), {batch, frames, bins, 2});
  if (y.elements() == 0) return Status::Ok();  // as in DFT: no frame, no plan

  std::vector<double> w(static_cast<size_t>(n), 1.0);
  if (window)
    for (int64_t j = 0; j < n; ++j) w[j] = ElementAsDouble(*window, j);
  const FftPlan plan(n, false);
  std::vector<Complex> line(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = (b * length + f * hop + j) * comp;
        line[j] =
            Complex{ElementAsDouble(x, at), comp == 2 ? ElementAsDouble(x, at + 1) : 0.0} * w[j];
      }
      plan.Run(line.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        SetElementFromDouble(y, at, line[k].real());
        SetElementFromDouble(y, at + 1, line[k].imag());
      }
    }
  return Status::Ok();
}

double HertzToMel(double hz) {
  return 2595.0 * std::log10(1.0 + hz / 700.0);
}
double MelToHertz(double mel) {
  return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
}

// Output [floor(dft_length / 2) + 1, num_mel_bins]: triangular filters with peak 1. The
// num_mel_bins + 2 band edges are spaced evenly in mel from lower_edge_hertz in steps of
// (mel(upper) - mel(lower)) / (num_mel_bins + 2) (so the top edge stays below upper_edge_hertz;
// this is what ONNX's reference and test data use) and mapped to spectrogram bins as
// floor((dft_length + 1) * hz / sample_rate). Filter i rises from edge i to edge i + 1 and falls
// to edge i + 2; when its rising side is empty, its centre bin is 1.
Status MelWeightMatrix(KernelContext& c) {
  int64_t ints[3];
  const char* names[3] = {"num_mel_bins", "dft_length", "sample_rate"};
  for (size_t i = 0; i < 3; ++i) {
    auto v = OptionalScalarInt(c, i, names[i]);
    if (!v.ok()) return v.status();
    if (!v->has_value() || **v < 1)
      return c.Error(std::string("MelWeightMatrix ") + names[i] + " must be at least 1");
    ints[i] = **v;
  }
  const int64_t mel_bins = ints[0], dft_length = ints[1], sample_rate = ints[2];
  for (size_t i = 3; i < 5; ++i)
    if (!c.has_input(i) || c.in(i).elements() != 1 || !IsFloatType(c.in(i).dtype()))
      return c.Error("MelWeightMatrix lower_edge_hertz and upper_edge_hertz must be float scalars");
  const double lower = ElementAsDouble(c.in(3), 0), upper = ElementAsDouble(c.in(4), 0);
  if (!(lower >= 0) || !(upper >= lower) || !std::isfinite(upper))
    return c.Error(
        "MelWeightMatrix needs 0 <= lower_edge_hertz <= upper_edge_hertz (finite), got " +
        std::to_string(lower) + " and " + std::to_string(upper));
  const auto dtype = static_cast<DataType>(c.op().Int("output_datatype", 1));
  if (!IsFloatType(dtype))
    return c.Error("MelWeightMatrix output_datatype must be a floating type");
  const int64_t spectrum_bins = dft_length / 2 + 1;
  Tensor& y = c.Output(0, dtype, {spectrum_bins, mel_bins});

  const double low_mel = HertzToMel(lower);
  const double mel_step = (HertzToMel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = MelToHertz(low_mel + mel_step * static_cast<double>(i));
    const double bin =
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    // Clamped just past the spectrum so the loops below stay short for any edge frequency.
    edge[i] = static_cast<int64_t>(std::min(bin, static_cast<double>(spectrum_bins + 1)));
  }
  // Bins past the spectrum (edges above sample_rate / 2) are dropped.
  auto set = [&](int64_t bin, int64_t band, double v) {
    if (bin >= 0 && bin < spectrum_bins) SetElementFromDouble(y, bin * mel_bins + band, v);
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edge[i], centre = edge[i + 1], hi = edge[i + 2];
    if (centre == lo) {
      set(centre, i, 1.0);
    } else {
      for (int64_t j = lo; j <= centre; ++j)
        set(j, i, static_cast<double>(j - lo) / static_cast<double>(centre - lo));
    }
    for (int64_t j = centre; j < hi; ++j)
      set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - centre));
  }
  return Status::Ok();
}

}  // namespace

void RegisterSpectralKernels(KernelTable& t) {
  t["DFT"] = Dft;
  t["STFT"] = Stft;
  t["MelWeightMatrix"] = MelWeightMatrix;
}

}  // namespace ortc::exec
