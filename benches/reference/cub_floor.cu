// What NVIDIA's own CUB reaches on the operations whose bench rows stay below 0.85x of the copy
// (issue 46): the inclusive sum of 2^26 f32 (`cumsum`), select-flagged (`a[mask]`), select-if
// of indices (`flatnonzero`), and HistogramEven of f32 into 100 bins (`histogram`) and of i32
// into 1000 (`bincount`), each next to a device-to-device copy of 2^26 f32 in the same process;
// then a plain one-pass decoupled look-back scan (warp-striped 16-byte loads, warp scans, one
// 64-bit status word a tile) in several block and tile shapes, to show where tile shape moves
// the scan. Bandwidths count the bytes as the bench report's rows do. CUB ships with nvcc:
//
//     nvcc -O3 -arch=sm_90 -std=c++17 -o cub_floor benches/reference/cub_floor.cu && ./cub_floor
//
// On an H200 (CUDA 13.0, 2026-12-01, two runs): copy 4078-4104 GB/s; CUB's InclusiveSum
// 2971-3020 GB/s (0.72x-0.74x of the copy), Select::Flagged 2288-2308 GB/s, Select::If of
// indices 2251 GB/s, HistogramEven 718 GB/s (uniform f32, 100 bins) and 321 GB/s (i32, 1000
// bins); the plain look-back scan 0.66x-0.77x, best at 512 x 32 or 128 x 64.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <cuda_runtime.h>
static const long long N = 1ll << 26;
template <class F> float timeit(const char *name, double bytes, F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < 23; ++r) { cudaDeviceSynchronize(); cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 3) t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end());
  cudaError_t e = cudaGetLastError();
  printf("%-46s best %8.2f med %8.2f us  %6.0f GB/s %s\n", name, t[0], t[t.size()/2], bytes / t[0] / 1e3, e ? cudaGetErrorString(e) : "");
  return t[0];
}
struct NonZero { __device__ bool operator()(const float &v) const { return v != 0.f; } };
struct IdxNonZero { const float *x; __device__ bool operator()(const long long &i) const { return x[i] != 0.f; } };
// One-pass decoupled look-back scan written plainly (warp-striped float4s, warp scans, one status word a tile).
__device__ __forceinline__ unsigned long long ld_status(const unsigned long long *p) { unsigned long long v; asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_status(unsigned long long *p, unsigned long long v) { asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ unsigned long long pack(unsigned flag, float v) { return ((unsigned long long)flag << 32) | __float_as_uint(v); }
template <int BLOCK, int ITEMS> __global__ void __launch_bounds__(BLOCK) lb(const float *x, float *y, long long n, unsigned long long *status, unsigned *ticket) {
  constexpr int W = BLOCK / 32, V = ITEMS / 4;
  __shared__ unsigned tile_s; __shared__ float wtot[W]; __shared__ float wpre[W];
  if (threadIdx.x == 0) tile_s = atomicAdd(ticket, 1u);
  __syncthreads();
  const long long tile = tile_s;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long base = tile * BLOCK * ITEMS, wbase = base + (long long)warp * 32 * ITEMS;
  const bool full = base + BLOCK * ITEMS <= n;
  float4 v[V];
  if (full) {
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = __ldcs((const float4 *)(x + wbase) + k * 32 + lane);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) { long long i = wbase + (long long)(k * 32 + lane) * 4; float e[4];
      for (int j = 0; j < 4; ++j) e[j] = i + j < n ? x[i + j] : 0.f; v[k] = make_float4(e[0], e[1], e[2], e[3]); }
  }
  float carry = 0.f;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    v[k].y += v[k].x; v[k].z += v[k].y; v[k].w += v[k].z;
    float s = v[k].w, inc = s;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) { float t = __shfl_up_sync(0xffffffffu, inc, o); if (lane >= o) inc += t; }
    float add = carry + inc - s;
    v[k].x += add; v[k].y += add; v[k].z += add; v[k].w += add;
    carry += __shfl_sync(0xffffffffu, inc, 31);
  }
  if (lane == 0) wtot[warp] = carry;
  __syncthreads();
  if (warp == 0) {
    float wt = lane < W ? wtot[lane] : 0.f, inc = wt;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) { float t = __shfl_up_sync(0xffffffffu, inc, o); if (lane >= o) inc += t; }
    const float agg = __shfl_sync(0xffffffffu, inc, 31);
    float prefix = 0.f;
    if (tile == 0) { if (lane == 0) st_status(status, pack(2u, agg)); }
    else {
      if (lane == 0) st_status(status + tile, pack(1u, agg));
      long long pred = tile - 1;
      while (true) {
        long long i = pred - lane;
        unsigned long long st = i >= 0 ? ld_status(status + i) : pack(2u, 0.f);
        while (__any_sync(0xffffffffu, (st >> 32) == 0)) { if ((st >> 32) == 0) st = ld_status(status + i); }
        unsigned m2 = __ballot_sync(0xffffffffu, (st >> 32) == 2);
        int stop = m2 ? __ffs(m2) - 1 : 31;
        float val = lane <= stop ? __uint_as_float((unsigned)st) : 0.f;
#pragma unroll
        for (int o = 16; o; o >>= 1) val += __shfl_xor_sync(0xffffffffu, val, o);
        prefix += val;
        if (m2) break;
        pred -= 32;
      }
      if (lane == 0) st_status(status + tile, pack(2u, prefix + agg));
    }
    if (lane < W) wpre[lane] = prefix + inc - wt;
  }
  __syncthreads();
  const float add = wpre[warp];
  if (full) {
#pragma unroll
    for (int k = 0; k < V; ++k) { float4 o = v[k]; o.x += add; o.y += add; o.z += add; o.w += add; __stcs((float4 *)(y + wbase) + k * 32 + lane, o); }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) { long long i = wbase + (long long)(k * 32 + lane) * 4; float e[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
      for (int j = 0; j < 4; ++j) if (i + j < n) y[i + j] = e[j] + add; }
  }
}
int main() {
  float *x, *y, *cp, *u; unsigned char *mask; long long *idx; int *xi, *nsel; unsigned long long *hist; void *tmp = nullptr; size_t tb = 0, t2 = 0;
  cudaMalloc(&x, N * 4); cudaMalloc(&u, N * 4); cudaMalloc(&y, N * 4); cudaMalloc(&cp, N * 4); cudaMalloc(&mask, N); cudaMalloc(&idx, N * 8); cudaMalloc(&xi, N * 4); cudaMalloc(&nsel, 8); cudaMalloc(&hist, 1024 * 8);
  std::vector<float> hx(N), hu(N); std::vector<unsigned char> hm(N); std::vector<int> hi(N);
  unsigned long long s = 88172645463325252ull;
  for (long long i = 0; i < N; ++i) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; hm[i] = s & 1; hx[i] = (s >> 1) & 1 ? (float)((s >> 20) % 1000) / 1000.f + 0.001f : 0.f; hi[i] = (int)((s >> 30) % 1000); hu[i] = (float)((s >> 40) * (1.0 / 16777216.0)); }
  cudaMemcpy(x, hx.data(), N * 4, cudaMemcpyHostToDevice); cudaMemcpy(mask, hm.data(), N, cudaMemcpyHostToDevice); cudaMemcpy(xi, hi.data(), N * 4, cudaMemcpyHostToDevice); cudaMemcpy(u, hu.data(), N * 4, cudaMemcpyHostToDevice);
  double B = N * 4.0;
  float copy = timeit("copy 2^26 f32 (read+write)", 2 * B, [&] { cudaMemcpyAsync(cp, x, N * 4, cudaMemcpyDeviceToDevice); });
  double floor = 2 * B / copy / 1e3; printf("copy floor %.0f GB/s; 0.85x %.0f\n", floor, 0.85 * floor);
  cub::DeviceScan::InclusiveSum(nullptr, t2, x, y, N); tb = std::max(tb, t2);
  cub::DeviceSelect::Flagged(nullptr, t2, x, mask, y, nsel, N); tb = std::max(tb, t2);
  thrust::counting_iterator<long long> ci(0);
  cub::DeviceSelect::If(nullptr, t2, ci, idx, nsel, N, IdxNonZero{x}); tb = std::max(tb, t2);
  cub::DeviceHistogram::HistogramEven(nullptr, t2, u, (unsigned long long *)hist, 101, 0.f, 1.f, (int)N); tb = std::max(tb, t2);
  cub::DeviceHistogram::HistogramEven(nullptr, t2, xi, (unsigned long long *)hist, 1001, 0, 1000, (int)N); tb = std::max(tb, t2);
  cudaMalloc(&tmp, tb);
  timeit("CUB InclusiveSum 2^26 f32 (r+w)", 2 * B, [&] { size_t t = tb; cub::DeviceScan::InclusiveSum(tmp, t, x, y, N); });
  std::vector<float> hy(N); cudaMemcpy(hy.data(), y, N * 4, cudaMemcpyDeviceToHost); printf("  last %.1f\n", hy[N - 1]);
  int hn = 0;
  timeit("CUB Select::Flagged f32, mask half (x+m+out)", B + N + B / 2, [&] { size_t t = tb; cub::DeviceSelect::Flagged(tmp, t, x, mask, y, nsel, N); });
  cudaMemcpy(&hn, nsel, 4, cudaMemcpyDeviceToHost); printf("  selected %d\n", hn);
  timeit("CUB Select::If indices x!=0 (x + i64 out)", B + hn * 0 + 8.0 * N / 2, [&] { size_t t = tb; cub::DeviceSelect::If(tmp, t, ci, idx, nsel, N, IdxNonZero{x}); });
  cudaMemcpy(&hn, nsel, 4, cudaMemcpyDeviceToHost); printf("  nonzero %d\n", hn);
  timeit("CUB HistogramEven uniform f32, 100 bins (read)", B, [&] { size_t t = tb; cub::DeviceHistogram::HistogramEven(tmp, t, u, (unsigned long long *)hist, 101, 0.f, 1.f, (int)N); });
  timeit("CUB HistogramEven i32 1000 bins (read)", B, [&] { size_t t = tb; cub::DeviceHistogram::HistogramEven(tmp, t, xi, (unsigned long long *)hist, 1001, 0, 1000, (int)N); });
  unsigned long long *status; unsigned *ticket; long long maxt = N / 128 + 2;
  cudaMalloc(&status, maxt * 8 + 64); ticket = (unsigned *)(status + maxt);
  auto run_lb = [&](const char *name, auto kern, int block, int items) {
    long long tiles = (N + (long long)block * items - 1) / ((long long)block * items);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> t;
    for (int r = 0; r < 23; ++r) { cudaMemset(status, 0, maxt * 8 + 64); cudaDeviceSynchronize(); cudaEventRecord(a); kern<<<tiles, block>>>(x, y, N, status, ticket); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 3) t.push_back(ms * 1000); }
    std::sort(t.begin(), t.end()); cudaError_t e = cudaGetLastError();
    cudaMemcpy(hy.data(), y, N * 4, cudaMemcpyDeviceToHost);
    printf("%-46s best %8.2f med %8.2f us  %6.0f GB/s (%.2fx) last %.1f mid %.1f %s\n", name, t[0], t[t.size()/2], 2 * B / t[0] / 1e3, 2 * B / t[0] / 1e3 / floor, hy[N - 1], hy[N / 2], e ? cudaGetErrorString(e) : "");
  };
  run_lb("lookback 256 x 16", lb<256, 16>, 256, 16);
  run_lb("lookback 256 x 32", lb<256, 32>, 256, 32);
  run_lb("lookback 256 x 64", lb<256, 64>, 256, 64);
  run_lb("lookback 128 x 32", lb<128, 32>, 128, 32);
  run_lb("lookback 128 x 64", lb<128, 64>, 128, 64);
  run_lb("lookback 512 x 16", lb<512, 16>, 512, 16);
  run_lb("lookback 512 x 32", lb<512, 32>, 512, 32);
  return 0;
}
