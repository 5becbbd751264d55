// oneDNN 2.6 (Debian) against 3.x (PyPI) on the conv and matmul shapes the
// zoo runs: which library tessel builds on is chosen by this measurement
// (docs/benchmarks.md, "oneDNN 3.2 against 2.6.3"). Compiles against either
// API; bench/onednn/compare.sh builds both and runs them interleaved.
// Output: one line per primitive:
//   RES <ver> <threads> <eff_isa> <case> <impl> best_us median_us iters
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
using clk = std::chrono::steady_clock;

static engine eng(engine::kind::cpu, 0);
static stream strm(eng);

static void fill(memory &m) {
  float *p = static_cast<float *>(m.get_data_handle());
  size_t n = m.get_desc().get_size() / sizeof(float);
  std::mt19937 g(42);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (size_t i = 0; i < n; ++i) p[i] = d(g);
}

static const char *isa_name(cpu_isa i) {
  switch (i) {
    case cpu_isa::sse41:
      return "sse41";
    case cpu_isa::avx:
      return "avx";
    case cpu_isa::avx2:
      return "avx2";
    case cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case cpu_isa::avx512_core:
      return "avx512_core";
    case cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
#if DNNL_VERSION_MAJOR >= 3
    case cpu_isa::avx512_core_fp16:
      return "avx512_core_fp16";
    case cpu_isa::avx2_vnni_2:
      return "avx2_vnni_2";
    case cpu_isa::avx512_core_amx_fp16:
      return "avx512_core_amx_fp16";
#endif
    default:
      return "other";
  }
}

struct Result {
  double best, med;
  int n;
};

// Time: 20 warm-ups, then up to 200 runs or ~0.5 s (min 20 runs).
static Result time_prim(primitive &p, std::unordered_map<int, memory> &args) {
  for (int i = 0; i < 20; ++i) p.execute(strm, args);
  strm.wait();
  std::vector<double> t;
  auto start = clk::now();
  for (int i = 0; i < 200; ++i) {
    auto a = clk::now();
    p.execute(strm, args);
    strm.wait();
    auto b = clk::now();
    t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    if (i >= 19 && std::chrono::duration<double>(b - start).count() > 0.5) break;
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2], (int)t.size()};
}

static std::string g_ver;
static std::string g_isa;
static int g_thr;
static const char *g_filter = nullptr;

static void report(const char *name, const std::string &impl, Result r) {
  std::printf("RES %s %d %s %-14s %-28s %10.1f %10.1f %4d\n", g_ver.c_str(), g_thr, g_isa.c_str(),
              name, impl.c_str(), r.best, r.med, r.n);
  std::fflush(stdout);
}

static bool selected(const char *name) { return !g_filter || std::strstr(name, g_filter); }

// Conv: batch 1, nhwc src/dst, weights any, bias x, optional relu.
static void conv_case(const char *name, int ic, int oc, int g, int ih, int iw, int k, int s,
                      int pad, bool relu, tag act = tag::nhwc,
                      algorithm alg = algorithm::convolution_direct, const char *want = nullptr) {
  if (!selected(name)) return;
  int oh = (ih + 2 * pad - k) / s + 1, ow = (iw + 2 * pad - k) / s + 1;
  memory::desc src_md({1, ic, ih, iw}, dt::f32, act);
  memory::desc dst_md({1, oc, oh, ow}, dt::f32, act);
  memory::dims wdims = g > 1 ? memory::dims{g, oc / g, ic / g, k, k} : memory::dims{oc, ic, k, k};
  memory::desc w_any(wdims, dt::f32, tag::any);
  memory::desc w_plain(wdims, dt::f32, g > 1 ? tag::goihw : tag::oihw);
  memory::desc b_md({oc}, dt::f32, tag::x);
  memory::dims strides{s, s}, dil{0, 0}, pl{pad, pad}, pr{pad, pad};
  // padding_r so that output size matches exactly
  pr[0] = (oh - 1) * s + k - ih - pad;
  pr[1] = (ow - 1) * s + k - iw - pad;

  primitive_attr attr;
  post_ops po;
#if DNNL_VERSION_MAJOR >= 3
  if (relu) po.append_eltwise(algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(po);
  convolution_forward::primitive_desc pd;
  try {
    pd = convolution_forward::primitive_desc(eng, prop_kind::forward_inference, alg, src_md, w_any,
                                             b_md, dst_md, strides, dil, pl, pr, attr);
  } catch (const dnnl::error &e) {
    report(name, "unimplemented", {0, 0, 0});
    return;
  }
#else
  if (relu) po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(po);
  convolution_forward::desc d(prop_kind::forward_inference, alg, src_md, w_any, b_md, dst_md,
                              strides, dil, pl, pr);
  convolution_forward::primitive_desc pd;
  try {
    pd = convolution_forward::primitive_desc(d, attr, eng);
  } catch (const dnnl::error &e) {
    report(name, "unimplemented", {0, 0, 0});
    return;
  }
#endif
  if (want) {  // walk the implementation list for a specific variant
    bool found = false;
    do {
      if (std::string(pd.impl_info_str()).find(want) != std::string::npos) {
        found = true;
        break;
      }
    } while (pd.next_impl());
    if (!found) {
      report(name, std::string("no_") + want, {0, 0, 0});
      return;
    }
  }
  memory src(pd.src_desc(), eng), dst(pd.dst_desc(), eng), bias(pd.bias_desc(), eng);
  memory wplain(w_plain, eng), w(pd.weights_desc(), eng);
  fill(src);
  fill(wplain);
  fill(bias);
  reorder(wplain, w).execute(strm, wplain, w);
  strm.wait();
  convolution_forward prim(pd);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  std::string impl = pd.impl_info_str();
  if (impl.rfind("ref", 0) == 0) {  // reference kernels take seconds: not timed
    report(name, impl + "(untimed)", {0, 0, 0});
    return;
  }
  report(name, impl, time_prim(prim, args));
}

// MatMul [M,K] x [K,N] + bias[1,N], weights any.
static void matmul_case(const char *name, int M, int K, int N) {
  if (!selected(name)) return;
  memory::desc a_md({M, K}, dt::f32, tag::ab);
  memory::desc w_any({K, N}, dt::f32, tag::any);
  memory::desc w_plain({K, N}, dt::f32, tag::ab);
  memory::desc b_md({1, N}, dt::f32, tag::ab);
  memory::desc c_md({M, N}, dt::f32, tag::ab);
  primitive_attr attr;
#if DNNL_VERSION_MAJOR >= 3
  matmul::primitive_desc pd(eng, a_md, w_any, b_md, c_md, attr);
#else
  matmul::desc d(a_md, w_any, b_md, c_md);
  matmul::primitive_desc pd(d, attr, eng);
#endif
  memory a(pd.src_desc(), eng), c(pd.dst_desc(), eng), bias(pd.bias_desc(), eng);
  memory wplain(w_plain, eng), w(pd.weights_desc(), eng);
  fill(a);
  fill(wplain);
  fill(bias);
  reorder(wplain, w).execute(strm, wplain, w);
  strm.wait();
  matmul prim(pd);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, c}};
  report(name, pd.impl_info_str(), time_prim(prim, args));
}

int main(int argc, char **argv) {
  if (argc > 1) g_filter = argv[1];
  auto v = version();
  g_ver =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  g_thr = omp_get_max_threads();
  g_isa = isa_name(get_effective_cpu_isa());
  //        name            ic   oc    g   ih  iw  k  s  pad relu
  conv_case("1_dw3x3s1_240", 240, 240, 240, 14, 14, 3, 1, 1, true);
  conv_case("2_dw3x3s2_72", 72, 72, 72, 56, 56, 3, 2, 1, false);
  conv_case("3_pw240to80", 240, 80, 1, 14, 14, 1, 1, 0, false);
  conv_case("4_pw40to120", 40, 120, 1, 28, 28, 1, 1, 0, true);
  conv_case("5_pw160to960", 160, 960, 1, 7, 7, 1, 1, 0, false);
  conv_case("6_c3x3_256", 256, 256, 1, 14, 14, 3, 1, 1, true);
  conv_case("7_gc3x3_128g32", 128, 128, 32, 28, 28, 3, 1, 1, false);
  matmul_case("8a_mm768x3072", 128, 768, 3072);
  matmul_case("8b_mm768x768", 128, 768, 768);
  conv_case("9_dw7x7_96", 96, 96, 96, 56, 56, 7, 1, 3, false);
  // Extra: tessel's blocked-layout paths for the ResNet 3x3 (nChw16c direct, Winograd)
  conv_case("6b_c3x3_blk16", 256, 256, 1, 14, 14, 3, 1, 1, true, tag::nChw16c);
  conv_case("6w_wino2x3", 256, 256, 1, 14, 14, 3, 1, 1, true, tag::nChw16c,
            algorithm::convolution_winograd, "wino_2x3");
  conv_case("6w_wino4x3", 256, 256, 1, 14, 14, 3, 1, 1, true, tag::nChw16c,
            algorithm::convolution_winograd, "wino_4x3");
  return 0;
}
