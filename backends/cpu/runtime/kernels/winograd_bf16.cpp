// bf16 Winograd F(2x2,3x3): weight transform at plan time, input transform -> 16 bf16 GEMMs ->
// output transform per block of tiles, blocks spread over the intra-op threads.
#include "cpu/runtime/kernels/winograd_bf16.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <vector>

#include "cpu/runtime/kernels/onednn_support.h"

namespace ortc::exec {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

constexpr int kTileElems = 16;  // a 4x4 input tile, transformed: one GEMM per element
constexpr int kLanes = 16;      // floats per AVX-512 register

// The GEMM of one block size: [16, tiles, C] x [16, C, K] -> [16, tiles, K].
struct BlockGemm {
  int64_t tiles = 0;
  dnnl::matmul prim;
  memory::desc src_md, dst_md, scratch_md;
};

}  // namespace

struct WinogradBf16Plan {
  int64_t batch = 0, height = 0, width = 0, channels = 0, out_channels = 0;
  int64_t pad_top = 0, pad_left = 0, out_height = 0, out_width = 0;
  int64_t tile_rows = 0, tile_cols = 0;  // tiles per image: ceil(out / 2) each way
  int64_t block_tiles = 0, blocks = 0;   // every block but the last has block_tiles tiles
  BlockGemm full, last;
  memory::desc weights_md;
  std::shared_ptr<void> weights;  // transformed weights in the matmul's layout (bf16)
  FusedActivation act;
  bool relu_only = false;  // act is exactly one Relu: applied in the output transform
};

namespace {

// The transformed weights U[e][c][k] = (G g G^T)[e] for each (k, c) filter g, G the F(2,3)
// weight transform [[1,0,0],[.5,.5,.5],[.5,-.5,.5],[0,0,1]], in fp32, laid out [16, C, K].
std::vector<float> TransformWeights(const float* w, int64_t C, int64_t K) {
  std::vector<float> u(static_cast<size_t>(kTileElems * C * K));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (k * C + c) * 9;
      float cols[4][3];  // G g: rows of the 4x3 intermediate
      for (int j = 0; j < 3; ++j) {
        const float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        cols[0][j] = g0;
        cols[1][j] = 0.5f * (g0 + g1 + g2);
        cols[2][j] = 0.5f * (g0 - g1 + g2);
        cols[3][j] = g2;
      }
      for (int i = 0; i < 4; ++i) {
        const float g0 = cols[i][0], g1 = cols[i][1], g2 = cols[i][2];
        const float row[4] = {g0, 0.5f * (g0 + g1 + g2), 0.5f * (g0 - g1 + g2), g2};
        for (int j = 0; j < 4; ++j) u[((i * 4 + j) * C + c) * K + k] = row[j];
      }
    }
  return u;
}

// Transformed weights shared by every plan of the process made from the same constant bytes
// (sessions sharing a context binary map its weights once), as SharedReorderedWeights does for
// oneDNN's layouts.
std::shared_ptr<void> SharedTransformedWeights(const float* w, int64_t C, int64_t K,
                                               const memory::desc& packed_md) {
  using Key = std::tuple<const float*, int64_t, int64_t, std::string>;
  static std::mutex mu;
  static auto* cache = new std::map<Key, std::weak_ptr<void>>;  // outlives static destructors
  const Key key{w, C, K,
                std::string(reinterpret_cast<const char*>(&packed_md.data), sizeof packed_md.data)};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end()) {
    if (auto alive = it->second.lock()) return alive;
    cache->erase(it);
  }
  std::vector<float> u = TransformWeights(w, C, K);
  std::shared_ptr<void> bytes(std::aligned_alloc(64, (packed_md.get_size() + 63) / 64 * 64),
                              std::free);
  if (!bytes) throw std::bad_alloc();
  const dnnl::engine& eng = OneDnnEngine();
  memory from(memory::desc({kTileElems, C, K}, dt::f32, tag::abc), eng, u.data());
  memory to(packed_md, eng, bytes.get());
  dnnl::stream& s = OneDnnStream();
  dnnl::reorder(from, to).execute(s, from, to);  // rounds to bf16, nearest even
  s.wait();
  (*cache)[key] = bytes;
  return bytes;
}

dnnl::matmul::primitive_desc DescribeGemm(int64_t tiles, int64_t C, int64_t K) {
  const memory::desc src({kTileElems, tiles, C}, dt::bf16, tag::abc);
  const memory::desc wei({kTileElems, C, K}, dt::bf16, tag::any);
  const memory::desc dst({kTileElems, tiles, K}, dt::f32, tag::abc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), attr, OneDnnEngine());
}

BlockGemm MakeGemm(const dnnl::matmul::primitive_desc& pd, int64_t tiles) {
  return BlockGemm{tiles, dnnl::matmul(pd), pd.src_desc(), pd.dst_desc(), pd.scratchpad_desc()};
}

// Tiles per block: at least 256, since every block reads all the transformed weights again
// (resnet18's 14x14 layers of 256 channels ran 1.3x slower in blocks of 21 tiles than in one of
// 49; its 56x56 and 28x28 layers ran within noise of one block per layer in blocks of 64-256);
// more where the block's transformed input (bf16) and GEMM result (fp32) still fit in about
// 512 KiB, half of a Zen 4 / Sapphire Rapids core's L2.
int64_t BlockTilesFor(int64_t C, int64_t K) {
  const int64_t bytes_per_tile = kTileElems * (2 * C + 4 * K);
  return std::max<int64_t>(256, (512 << 10) / bytes_per_tile);
}

// Per-thread buffers of a block: transformed input, GEMM result, matmul scratchpad.
struct BlockScratch {
  ScratchBuffer input, result, pad;
};
BlockScratch& ThreadBlockScratch() {
  thread_local BlockScratch scratch;
  return scratch;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) inline __m256i ToBf16(__m512 v) {
  return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
}

// V[e][t][c] = (B^T d B)[e] for the block's tiles, B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],
// [0,1,0,-1]], d the 4x4 input patch at the tile (zero outside the image), rounded to bf16.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void TransformInput(
    const WinogradBf16Plan& p, const float* x, int64_t first_tile, int64_t tiles, uint16_t* v) {
  const int64_t C = p.channels, per_image = p.tile_rows * p.tile_cols;
  const size_t elem_stride = static_cast<size_t>(tiles * C);
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t tile = first_tile + t, n = tile / per_image, in_image = tile % per_image;
    const int64_t row0 = 2 * (in_image / p.tile_cols) - p.pad_top;
    const int64_t col0 = 2 * (in_image % p.tile_cols) - p.pad_left;
    const float* image = x + n * p.height * p.width * C;
    const float* at[4][4];  // each patch pixel's channels, or null in the padding
    for (int r = 0; r < 4; ++r)
      for (int q = 0; q < 4; ++q) {
        const int64_t yy = row0 + r, xx = col0 + q;
        at[r][q] = yy >= 0 && yy < p.height && xx >= 0 && xx < p.width
                       ? image + (yy * p.width + xx) * C
                       : nullptr;
      }
    uint16_t* out = v + t * C;
    for (int64_t c = 0; c < C; c += kLanes) {
      __m512 d[4][4];
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) d[r][q] = at[r][q] ? _mm512_loadu_ps(at[r][q] + c) : zero;
      __m512 m[4][4];  // B^T d
      for (int q = 0; q < 4; ++q) {
        m[0][q] = _mm512_sub_ps(d[0][q], d[2][q]);
        m[1][q] = _mm512_add_ps(d[1][q], d[2][q]);
        m[2][q] = _mm512_sub_ps(d[2][q], d[1][q]);
        m[3][q] = _mm512_sub_ps(d[1][q], d[3][q]);
      }
      for (int r = 0; r < 4; ++r) {  // (B^T d) B
        const __m512 e[4] = {_mm512_sub_ps(m[r][0], m[r][2]), _mm512_add_ps(m[r][1], m[r][2]),
                             _mm512_sub_ps(m[r][2], m[r][1]), _mm512_sub_ps(m[r][1], m[r][3])};
        for (int q = 0; q < 4; ++q)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (r * 4 + q) * elem_stride + c),
                              ToBf16(e[q]));
      }
    }
  }
}

// y = A^T M A (+ bias, + residual, Relu when that is the whole activation) for the block's
// tiles, A^T = [[1,1,1,0],[0,1,-1,-1]]; the other activations after each tile row.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void TransformOutput(
    const WinogradBf16Plan& p, const float* m, int64_t first_tile, int64_t tiles, const float* bias,
    const float* residual, float* y) {
  const int64_t K = p.out_channels, per_image = p.tile_rows * p.tile_cols;
  const size_t elem_stride = static_cast<size_t>(tiles * K);
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t tile = first_tile + t, n = tile / per_image, in_image = tile % per_image;
    const int64_t row0 = 2 * (in_image / p.tile_cols), col0 = 2 * (in_image % p.tile_cols);
    const int rows = static_cast<int>(std::min<int64_t>(2, p.out_height - row0));
    const int cols = static_cast<int>(std::min<int64_t>(2, p.out_width - col0));
    const int64_t image = n * p.out_height * p.out_width * K;
    const float* in = m + t * K;
    for (int64_t k = 0; k < K; k += kLanes) {
      __m512 s[2][4];  // A^T M
      for (int q = 0; q < 4; ++q) {
        const __m512 m0 = _mm512_loadu_ps(in + (0 * 4 + q) * elem_stride + k);
        const __m512 m1 = _mm512_loadu_ps(in + (1 * 4 + q) * elem_stride + k);
        const __m512 m2 = _mm512_loadu_ps(in + (2 * 4 + q) * elem_stride + k);
        const __m512 m3 = _mm512_loadu_ps(in + (3 * 4 + q) * elem_stride + k);
        s[0][q] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
        s[1][q] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
      }
      const __m512 b = bias ? _mm512_loadu_ps(bias + k) : zero;
      for (int r = 0; r < rows; ++r) {
        const __m512 out[2] = {_mm512_add_ps(_mm512_add_ps(s[r][0], s[r][1]), s[r][2]),
                               _mm512_sub_ps(_mm512_sub_ps(s[r][1], s[r][2]), s[r][3])};
        for (int q = 0; q < cols; ++q) {
          const int64_t at = image + ((row0 + r) * p.out_width + col0 + q) * K + k;
          __m512 v = _mm512_add_ps(out[q], b);
          if (residual) v = _mm512_add_ps(v, _mm512_loadu_ps(residual + at));
          // The masked form: GCC 12's _mm512_max_ps warns about its own undefined operand.
          if (p.relu_only) v = _mm512_mask_max_ps(v, 0xFFFF, v, zero);
          _mm512_storeu_ps(y + at, v);
        }
      }
    }
    if (!p.relu_only && !p.act.steps.empty())
      for (int r = 0; r < rows; ++r)
        ApplyFusedActivation(p.act, y + image + ((row0 + r) * p.out_width + col0) * K, cols * K);
  }
}

void RunBlock(const WinogradBf16Plan& p, int64_t block, const float* x, const float* bias,
              const float* residual, float* y) {
  const bool last = block == p.blocks - 1;
  const BlockGemm& gemm = last ? p.last : p.full;
  const int64_t first = block * p.block_tiles;
  BlockScratch& scratch = ThreadBlockScratch();
  auto* v = static_cast<uint16_t*>(scratch.input.Get(gemm.src_md.get_size()));
  auto* m = static_cast<float*>(scratch.result.Get(gemm.dst_md.get_size()));
  TransformInput(p, x, first, gemm.tiles, v);
  const dnnl::engine& eng = OneDnnEngine();
  dnnl::stream& s = OneDnnStream();
  memory src(gemm.src_md, eng, v), dst(gemm.dst_md, eng, m);
  memory wei(p.weights_md, eng, p.weights.get());
  memory pad(gemm.scratch_md, eng, scratch.pad.Get(gemm.scratch_md.get_size()));
  gemm.prim.execute(s, {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, wei},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, pad}});
  s.wait();
  TransformOutput(p, m, first, gemm.tiles, bias, residual, y);
}

}  // namespace

bool WinogradBf16Candidate(const ConvGeometry& g) {
  static const bool cpu_has =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  auto all_one = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  auto small_pads = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x >= 0 && x <= 2; });
  };
  return cpu_has && g.bf16 && g.algorithm != ConvAlgorithm::kDirect && g.channels_last &&
         !g.input_nchw && g.in.size() == 2 && g.kernel == std::vector<int64_t>{3, 3} &&
         all_one(g.strides) && all_one(g.dilations) && g.group == 1 && small_pads(g.pads_begin) &&
         small_pads(g.pads_end) && g.out.size() == 2 && g.out[0] >= 1 && g.out[1] >= 1 &&
         g.in_channels % kLanes == 0 && g.out_channels % kLanes == 0 &&
         // 0 channels or images would make 0 tiles and 0 blocks, which the blocking divides by.
         g.batch >= 1 && g.in_channels >= kLanes && g.out_channels >= kLanes;
}

// Measured per node with `ortc run --profile` on resnet18's bf16 bundle (2-core Zen 4, oneDNN
// 2.6), against the same bundle compiled with cpu:conv_algorithm=direct: at one thread the
// 56x56 (784 tiles) and 28x28 (196 tiles) layers ran 1.3x-1.45x faster than oneDNN's direct bf16
// kernel, and in a standalone harness the 14x14 layers (49 tiles) 1.5x while the 7x7 ones (16
// tiles of 512 channels) ran 0.8x: too few tiles to reuse the transformed weights, 16/9 the size
// of the direct kernel's. At two threads the 56x56 and 28x28 layers ran 1.45x-1.7x faster.
bool WinogradBf16Pays(const ConvGeometry& g, int threads) {
  if (!WinogradBf16Candidate(g)) return false;
  if (g.algorithm == ConvAlgorithm::kWinograd) return true;
  const int64_t tiles = g.batch * ((g.out[0] + 1) / 2) * ((g.out[1] + 1) / 2);
  return tiles >= 40 * std::max(1, threads);
}

std::shared_ptr<const WinogradBf16Plan> MakeWinogradBf16Plan(const ConvGeometry& g,
                                                             const float* weights,
                                                             const FusedActivation& act,
                                                             int threads) {
  auto p = std::make_shared<WinogradBf16Plan>();
  p->batch = g.batch;
  p->height = g.in[0];
  p->width = g.in[1];
  p->channels = g.in_channels;
  p->out_channels = g.out_channels;
  p->pad_top = g.pads_begin[0];
  p->pad_left = g.pads_begin[1];
  p->out_height = g.out[0];
  p->out_width = g.out[1];
  p->tile_rows = (g.out[0] + 1) / 2;
  p->tile_cols = (g.out[1] + 1) / 2;
  p->act = act;
  p->relu_only = act.steps.size() == 1 && act.steps[0].kind == FusedStep::Kind::kRelu;
  const int64_t tiles = g.batch * p->tile_rows * p->tile_cols;
  // Blocks of at most BlockTilesFor tiles, as many as a multiple of the thread count, so
  // every thread gets an equal share.
  const int64_t per_block = BlockTilesFor(g.in_channels, g.out_channels);
  const int64_t t = std::max(1, threads);
  int64_t blocks = (tiles + per_block - 1) / per_block;
  blocks = std::min(tiles, (blocks + t - 1) / t * t);
  p->block_tiles = (tiles + blocks - 1) / blocks;
  p->blocks = (tiles + p->block_tiles - 1) / p->block_tiles;
  const int64_t last_tiles = tiles - (p->blocks - 1) * p->block_tiles;
  const auto full = DescribeGemm(p->block_tiles, g.in_channels, g.out_channels);
  p->full = MakeGemm(full, p->block_tiles);
  p->last = last_tiles == p->block_tiles
                ? p->full
                : MakeGemm(DescribeGemm(last_tiles, g.in_channels, g.out_channels), last_tiles);
  p->weights_md = full.weights_desc();
  if (p->last.tiles != p->full.tiles &&
      DescribeGemm(last_tiles, g.in_channels, g.out_channels).weights_desc() != p->weights_md)
    throw dnnl::error(dnnl_unimplemented, "bf16 matmul layouts differ between block sizes");
  p->weights = SharedTransformedWeights(weights, g.in_channels, g.out_channels, p->weights_md);
  return p;
}

void RunWinogradBf16(const WinogradBf16Plan& p, const float* x, const float* bias,
                     const float* residual, float* y) {
  // Inside the parallel region each block's matmul runs on its own thread (oneDNN does not
  // nest OpenMP teams), with that thread's stream and scratchpad. An exception must not leave
  // the region: the first one is kept and thrown after it.
  std::exception_ptr failure;
  std::mutex failure_mu;
#pragma omp parallel for schedule(static) if (p.blocks > 1)
  for (int64_t b = 0; b < p.blocks; ++b) {
    try {
      RunBlock(p, b, x, bias, residual, y);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ortc::exec
