// CUB called directly: the peer of `lumbre bench primitives` for scan, compaction and radix
// sort, with cudaMemcpyAsync as the roofline.
//
// Build: nvcc -O3 -arch=native -std=c++17 benches/peers/cub.cu -o cub   (or -arch=sm_90)
// Run:   ./cub [--max-log2 N]   (sizes 2^24, 2^26 and 2^28, none above 2^N)
//
// Prints the device, the CUB version and one Markdown table: median of 20 timed runs after 3
// warm-ups (CUDA events), temporary storage allocated once per row, outside the timing. The
// inputs are the xorshift32 sequences of `lumbre bench primitives` (the same seeds), so both
// sides sort, scan and compact the same numbers. `benches/peers/side_by_side.py` sets this
// table beside ours.

#include <cub/cub.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Every CUDA (and CUB) call is checked: a failure prints where and why, and exits 1.
#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t check_err_ = (call);                                                                \
    if (check_err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,                \
                   cudaGetErrorName(check_err_), cudaGetErrorString(check_err_));                   \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

namespace {

constexpr int kWarmup = 3;
constexpr int kRepeats = 20;
// Each run starts behind a kernel that spins this long, so that the timed operation's first
// launch is queued before the GPU reaches it (as ours starts each run on a busy GPU).
constexpr unsigned long long kSpinNs = 100000;
// Left free beyond a row's buffers, for CUB's temporary storage and the context.
constexpr size_t kSlackBytes = size_t(512) << 20;

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// The first n of ours' `random_u32(n, seed)` (crates/cli/src/bench/primitives.rs): xorshift32.
std::vector<uint32_t> random_u32(size_t n, uint32_t seed) {
  std::vector<uint32_t> out(n);
  uint32_t s = seed | 1u;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    out[i] = s;
  }
  return out;
}

// Median GPU time in ms of `op`, each run after `prep` (untimed: restores an in-place
// operation's input) and the spin kernel.
template <typename Prep, typename Op>
float median_ms(cudaStream_t s, Prep prep, Op op) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    prep();
    spin_kernel<<<1, 1, 0, s>>>(kSpinNs);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start, s));
    op();
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i >= kWarmup) times.push_back(ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return 0.5f * (times[kRepeats / 2 - 1] + times[kRepeats / 2]);
}

struct Row {
  std::string op;
  int log2 = 0;
  float ms = -1;            // below zero: not run
  const char* unit = "";    // "GB/s" or "G keys/s"
  double bytes = 0;         // bytes read plus bytes written
  std::string problem;      // "FAIL: ..." or "skipped: ...", printed in the rate column
};

void print_row(const Row& r) {
  char ms[32] = "-", rate[256], bytes[32];
  if (r.ms >= 0) std::snprintf(ms, sizeof ms, "%.4f", r.ms);
  const double n = double(size_t(1) << r.log2);
  if (!r.problem.empty()) {
    std::snprintf(rate, sizeof rate, "%s", r.problem.c_str());
  } else if (std::strcmp(r.unit, "GB/s") == 0) {
    std::snprintf(rate, sizeof rate, "%.1f GB/s", r.bytes / r.ms / 1e6);
  } else {
    std::snprintf(rate, sizeof rate, "%.2f G keys/s", n / r.ms / 1e6);
  }
  std::snprintf(bytes, sizeof bytes, "%.3f GB", r.bytes / 1e9);
  std::printf("| %s | 2^%d | %s | %s | %s |\n", r.op.c_str(), r.log2, ms, rate, bytes);
  std::fflush(stdout);
}

// Whether `need` bytes (plus slack) are free on the device; if not, says so in the row.
bool fits(size_t need, Row& r) {
  size_t free_bytes = 0, total = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (need + kSlackBytes <= free_bytes) return true;
  char why[128];
  std::snprintf(why, sizeof why, "skipped: needs %.2f GB, %.2f GB free", (need + kSlackBytes) / 1e9,
                free_bytes / 1e9);
  r.problem = why;
  return false;
}

template <typename T>
T* device_alloc(size_t n) {
  T* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(T)));
  return p;
}

// The roofline: reads and writes n u32 (8 bytes per element).
Row memcpy_row(int log2, cudaStream_t s) {
  const size_t n = size_t(1) << log2;
  Row r{"memcpy u32 (cudaMemcpyAsync)", log2};
  r.unit = "GB/s";
  r.bytes = 8.0 * n;
  if (!fits(8 * n, r)) return r;
  uint32_t* src = device_alloc<uint32_t>(n);
  uint32_t* dst = device_alloc<uint32_t>(n);
  CHECK(cudaMemsetAsync(src, 1, 4 * n, s));
  r.ms = median_ms(s, [] {}, [&] { CHECK(cudaMemcpyAsync(dst, src, 4 * n, cudaMemcpyDeviceToDevice, s)); });
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  return r;
}

// Exclusive sum of u32 into u32 (the accumulator is u32 too): reads and writes n u32.
Row scan_row(const std::vector<uint32_t>& values, int log2, cudaStream_t s) {
  const size_t n = size_t(1) << log2;
  Row r{"DeviceScan::ExclusiveSum u32", log2};
  r.unit = "GB/s";
  r.bytes = 8.0 * n;
  if (!fits(8 * n, r)) return r;
  uint32_t* in = device_alloc<uint32_t>(n);
  uint32_t* out = device_alloc<uint32_t>(n);
  CHECK(cudaMemcpy(in, values.data(), 4 * n, cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in, out, int(n), s));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  r.ms = median_ms(s, [] {}, [&] { CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, int(n), s)); });
  // Checked once, untimed: the first element and the last (the sum of all but the last input).
  uint32_t want_last = 0, first = 1, last = 0;
  for (size_t i = 0; i + 1 < n; ++i) want_last += values[i];
  CHECK(cudaMemcpy(&first, out, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&last, out + (n - 1), 4, cudaMemcpyDeviceToHost));
  if (first != 0 || last != want_last) {
    char why[128];
    std::snprintf(why, sizeof why, "FAIL: out[0] %u, out[n-1] %u, want 0 and %u", first, last, want_last);
    r.problem = why;
  }
  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return r;
}

// Compaction by flag, ours' pattern: the flag of a value is its lowest bit (about half kept).
// Reads n u32 values and n u8 flags (4 + 1 bytes per element), writes the kept values (4 bytes
// each) and the count (4 bytes); the rate counts exactly those bytes.
Row select_row(const std::vector<uint32_t>& values, int log2, cudaStream_t s) {
  const size_t n = size_t(1) << log2;
  Row r{"DeviceSelect::Flagged u32, u8 flags, half kept", log2};
  r.unit = "GB/s";
  std::vector<uint8_t> flags(n);
  size_t kept = 0;
  uint32_t want_last = 0;
  for (size_t i = 0; i < n; ++i) {
    flags[i] = uint8_t(values[i] & 1u);
    if (flags[i]) {
      ++kept;
      want_last = values[i];
    }
  }
  r.bytes = 5.0 * n + 4.0 * kept + 4.0;
  if (!fits(9 * n + 4, r)) return r;
  uint32_t* in = device_alloc<uint32_t>(n);
  uint8_t* d_flags = device_alloc<uint8_t>(n);
  uint32_t* out = device_alloc<uint32_t>(n);
  int* count = device_alloc<int>(1);
  CHECK(cudaMemcpy(in, values.data(), 4 * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_flags, flags.data(), n, cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, in, d_flags, out, count, int(n), s));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  r.ms = median_ms(s, [] {}, [&] {
    CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, in, d_flags, out, count, int(n), s));
  });
  // Checked once, untimed: the count and the last kept value.
  int got = -1;
  uint32_t last = 0;
  CHECK(cudaMemcpy(&got, count, sizeof got, cudaMemcpyDeviceToHost));
  if (got > 0) CHECK(cudaMemcpy(&last, out + (got - 1), 4, cudaMemcpyDeviceToHost));
  if (got != int(kept) || last != want_last) {
    char why[160];
    std::snprintf(why, sizeof why, "FAIL: kept %d ending %u, want %zu ending %u", got, last, kept, want_last);
    r.problem = why;
  }
  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(d_flags));
  CHECK(cudaFree(out));
  CHECK(cudaFree(count));
  return r;
}

// A sort's output against its input: ascending, the same sum and xor of keys (a cheap check
// that the keys are the input's), and with values, each value the index of its key in the
// input, ascending among equal keys (CUB's radix sort is stable).
template <typename K>
std::string sort_problem(const K* input, const std::vector<K>& keys, const std::vector<uint32_t>* vals) {
  char why[160];
  K sum_in = 0, sum_out = 0, xor_in = 0, xor_out = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    sum_in += input[i];
    xor_in ^= input[i];
    sum_out += keys[i];
    xor_out ^= keys[i];
    if (i > 0 && keys[i - 1] > keys[i]) {
      std::snprintf(why, sizeof why, "FAIL: not sorted at %zu", i);
      return why;
    }
    if (vals) {
      const uint32_t v = (*vals)[i];
      const bool stable = i == 0 || keys[i - 1] != keys[i] || (*vals)[i - 1] < v;
      if (v >= keys.size() || input[v] != keys[i] || !stable) {
        std::snprintf(why, sizeof why, "FAIL: value %u at %zu does not index its key", v, i);
        return why;
      }
    }
  }
  if (sum_in != sum_out || xor_in != xor_out) return "FAIL: the sorted keys are not the input's";
  return "";
}

// Radix sort of n keys (with u32 values if kPairs), bits [0, end_bit). The DoubleBuffer
// variants, CUB's fastest path: passes ping-pong between two buffers of CUB's choosing, no
// copy back. Before each run the unsorted input is copied from a pristine buffer (untimed).
// Bytes moved: one read and one write of the keys (and values); CUB's passes move more.
template <typename K, bool kPairs>
Row sort_row(const std::string& name, const std::vector<K>& input, const std::vector<uint32_t>& values,
             int log2, int end_bit, cudaStream_t s) {
  const size_t n = size_t(1) << log2;
  Row r{name, log2};
  r.unit = "G keys/s";
  const size_t key_bytes = n * sizeof(K), value_bytes = kPairs ? 4 * n : 0;
  r.bytes = 2.0 * double(key_bytes + value_bytes);
  if (!fits(3 * (key_bytes + value_bytes), r)) return r;
  K* pristine = device_alloc<K>(n);
  K* k0 = device_alloc<K>(n);
  K* k1 = device_alloc<K>(n);
  uint32_t *pristine_v = nullptr, *v0 = nullptr, *v1 = nullptr;
  CHECK(cudaMemcpy(pristine, input.data(), key_bytes, cudaMemcpyHostToDevice));
  if (kPairs) {
    pristine_v = device_alloc<uint32_t>(n);
    v0 = device_alloc<uint32_t>(n);
    v1 = device_alloc<uint32_t>(n);
    CHECK(cudaMemcpy(pristine_v, values.data(), value_bytes, cudaMemcpyHostToDevice));
  }
  cub::DoubleBuffer<K> keys(k0, k1);
  cub::DoubleBuffer<uint32_t> vals(v0, v1);
  size_t temp_bytes = 0;
  auto sort = [&](void* temp) -> cudaError_t {
    if constexpr (kPairs) {
      return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, vals, int(n), 0, end_bit, s);
    } else {
      return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, int(n), 0, end_bit, s);
    }
  };
  CHECK(sort(nullptr));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto restore = [&] {
    CHECK(cudaMemcpyAsync(k0, pristine, key_bytes, cudaMemcpyDeviceToDevice, s));
    keys = cub::DoubleBuffer<K>(k0, k1);
    if (kPairs) {
      CHECK(cudaMemcpyAsync(v0, pristine_v, value_bytes, cudaMemcpyDeviceToDevice, s));
      vals = cub::DoubleBuffer<uint32_t>(v0, v1);
    }
  };
  r.ms = median_ms(s, restore, [&] { CHECK(sort(temp)); });
  // Checked once, untimed: the last run's output, wherever the DoubleBuffer left it.
  std::vector<K> sorted(n);
  std::vector<uint32_t> sorted_vals(kPairs ? n : 0);
  CHECK(cudaMemcpy(sorted.data(), keys.Current(), key_bytes, cudaMemcpyDeviceToHost));
  if (kPairs) CHECK(cudaMemcpy(sorted_vals.data(), vals.Current(), value_bytes, cudaMemcpyDeviceToHost));
  r.problem = sort_problem(input.data(), sorted, kPairs ? &sorted_vals : nullptr);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(pristine));
  CHECK(cudaFree(k0));
  CHECK(cudaFree(k1));
  if (kPairs) {
    CHECK(cudaFree(pristine_v));
    CHECK(cudaFree(v0));
    CHECK(cudaFree(v1));
  }
  return r;
}

int usage(const char* why) {
  std::fprintf(stderr, "%s\nusage: cub [--max-log2 N]   (N in 10..=30; sizes 2^24, 2^26, 2^28 up to 2^N)\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int max_log2 = 28;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = nullptr;
    if (std::strcmp(a, "--max-log2") == 0) {
      if (i + 1 >= argc) return usage("--max-log2 needs a value");
      v = argv[++i];
    } else if (std::strncmp(a, "--max-log2=", 11) == 0) {
      v = a + 11;
    } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      usage("CUB's scan, compaction and radix sort, and cudaMemcpyAsync, timed with CUDA events.");
      return 0;
    } else {
      std::string why = std::string("unknown argument ") + a;
      return usage(why.c_str());
    }
    char* end = nullptr;
    const long parsed = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || parsed < 10 || parsed > 30) {
      std::string why = std::string("--max-log2 ") + v + ": not a whole number in 10..=30";
      return usage(why.c_str());
    }
    max_log2 = int(parsed);
  }
  std::vector<int> sizes;
  for (int log2 : {24, 26, 28})
    if (log2 <= max_log2) sizes.push_back(log2);
  if (sizes.empty()) sizes.push_back(max_log2);
  const size_t max_n = size_t(1) << sizes.back();

  int device = 0, runtime = 0, driver = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  CHECK(cudaRuntimeGetVersion(&runtime));
  CHECK(cudaDriverGetVersion(&driver));
  std::printf("device: %s (sm_%d%d, %d SMs, %.1f GB)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.totalGlobalMem / 1e9);
  std::printf("CUB %d.%d.%d (CUB_VERSION %d), CUDA runtime %d.%d, driver %d.%d\n\n", CUB_VERSION / 100000,
              CUB_VERSION / 100 % 1000, CUB_VERSION % 100, CUB_VERSION, runtime / 1000, runtime % 1000 / 10,
              driver / 1000, driver % 1000 / 10);
  std::printf("| operation | size | median ms | rate | bytes moved |\n| --- | --- | --- | --- | --- |\n");
  std::fflush(stdout);

  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  // Ours' inputs: scan and compaction values of seed 1; sort keys of seed 7 (u32), 9 (u64: two
  // draws, high word first); values 0..n.
  {
    const std::vector<uint32_t> values = random_u32(max_n, 1);
    for (int log2 : sizes) print_row(memcpy_row(log2, s));
    for (int log2 : sizes) print_row(scan_row(values, log2, s));
    for (int log2 : sizes) print_row(select_row(values, log2, s));
  }
  {
    const std::vector<uint32_t> keys = random_u32(max_n, 7);
    std::vector<uint32_t> iota(max_n);
    for (size_t i = 0; i < max_n; ++i) iota[i] = uint32_t(i);
    for (int log2 : sizes) print_row(sort_row<uint32_t, false>("DeviceRadixSort::SortKeys u32", keys, iota, log2, 32, s));
    // Morton keys of 30 bits: the same keys' low 30 bits, sorted on bits [0, 30).
    std::vector<uint32_t> keys30(keys);
    for (uint32_t& k : keys30) k &= (1u << 30) - 1;
    for (int log2 : sizes)
      print_row(sort_row<uint32_t, false>("DeviceRadixSort::SortKeys u32, end_bit=30", keys30, iota, log2, 30, s));
    keys30.clear();
    keys30.shrink_to_fit();
    for (int log2 : sizes)
      print_row(sort_row<uint32_t, true>("DeviceRadixSort::SortPairs u32 + u32", keys, iota, log2, 32, s));
  }
  {
    const std::vector<uint32_t> words = random_u32(2 * max_n, 9);
    std::vector<uint64_t> keys(max_n);
    for (size_t i = 0; i < max_n; ++i) keys[i] = uint64_t(words[2 * i]) << 32 | words[2 * i + 1];
    const std::vector<uint32_t> none;
    for (int log2 : sizes) print_row(sort_row<uint64_t, false>("DeviceRadixSort::SortKeys u64", keys, none, log2, 64, s));
  }
  CHECK(cudaStreamDestroy(s));

  std::printf(
      "\nmedian of %d runs after %d warm-ups, CUDA events; each run behind a %llu us spin kernel\n"
      "rate: GB/s counts bytes read plus bytes written; sorts: keys per second\n"
      "bytes moved: memcpy and scan 8 B per element; Flagged 4 + 1 B per element in, 4 B per kept value "
      "and the count out; sorts one read and one write of the keys (and values)\n"
      "sorts: DoubleBuffer variants (CUB's fastest path), the unsorted input restored before each run, untimed\n"
      "inputs: the xorshift32 sequences of `lumbre bench primitives` (values seed 1, flag = value & 1; "
      "u32 keys seed 7; u64 keys seed 9; values 0..n)\n",
      kRepeats, kWarmup, kSpinNs / 1000);
  return 0;
}
