/* tgroup_cuda.cu — the trial-group ops (nn/tgroup_ops.h) on an NVIDIA GPU: one cuBLAS handle and one
 * stream per group, every GEMM a cublasDgemmStridedBatched over the slots (trials), the element-wise
 * work in a few fused kernels, everything in double precision and resident on the device.
 *
 * The kernels' bodies live in tgroup_kern.h, shared with a host emulation in tests/test_tgroup.c, and
 * follow src/nn/tgroup_cpu.c expression by expression; this file is compiled with --fmad=false so
 * that a·b + c rounds twice, as on the CPU. Per-slot reductions (bias gradients, the loss) are serial
 * over rows in one thread, in row order, like the CPU loops; only the reconstruction sums use a block
 * tree. cuBLAS's GEMMs sum in their own order, so results agree with the CPU reference to rounding.
 *
 * Errors: launches and cuBLAS calls are checked as they are queued; the first failure is kept and
 * returned by finish() (which synchronises the stream), so the pass in tgroup.c needs no checks. A graph
 * capture that fails is not an error (nothing of it ran): capture_begin/capture_end answer 0, say why in
 * capture_why, and the caller launches directly (tgroup_ops.h).
 * Built into the CUDA module libbellamy-cuda.so, never into libbellamy: the core finds the table through
 * bl_cuda_module_entry (module.h, load.c), the module's only exported symbol.
 * Not here: the order of the pass, random draws, bookkeeping (src/nn/tgroup.c).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "bl_config.h"
#include "common/error.h"
}
#define BL_KDEV __device__ static inline
#include "nn/tgroup_ops.h"
#include "nn/cuda/module.h"
#include "nn/cuda/tgroup_kern.h"

#define TPB BL_KERN_TPB

struct cu_ctx {
    cudaStream_t    stream;
    cublasHandle_t  blas;
    void           *workspace;  /* cuBLAS's, ours so that graph capture never allocates */
    cudaGraphExec_t exec;       /* the recorded epoch (capture_end), or NULL */
    int             have_stream, have_blas;
    int             capturing;  /* between a capture_begin that answered 1 and capture_end */
    bl_status       st;         /* first failure since the last finish */
    char            msg[200];
    char            why[256];   /* why the last capture_begin/capture_end answered 0 */
};

/* cuBLAS's workspace: 32 MiB is what its documentation recommends for Hopper (4 MiB elsewhere); ours
 * rather than cuBLAS's pool, so that nothing allocates during a graph capture. */
#define WORKSPACE_BYTES ((size_t)32 << 20)

static void fail(cu_ctx *c, bl_status st, const char *what, const char *why) {
    if (c->st) return;
    c->st = st;
    snprintf(c->msg, sizeof c->msg, "CUDA %s: %s", what, why);
}
/* A failed runtime call also becomes the thread's "last error", which the next launch check would
 * report again as its own: consume it (sticky errors stay, and every later call reports them anyway). */
static void check(cu_ctx *c, cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fail(c, BL_EINTERNAL, what, cudaGetErrorString(e));
        cudaGetLastError();
    }
}
static void check_blas(cu_ctx *c, cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        char why[96];
        snprintf(why, sizeof why, "cuBLAS %s (%d)", cublasGetStatusName(s), (int)s);
        fail(c, BL_EINTERNAL, what, why);
    }
}

/* The module's availability check (module.h): a device, and a driver that runs this build's runtime. */
static bl_status cu_available(bl_error *err) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        const char *why = cudaGetErrorString(e);
        cudaGetLastError(); /* not sticky: clear it so later calls start clean */
        if (e == cudaErrorInsufficientDriver) {
            /* the commonest failure on a GPU machine: a driver older than this build's runtime */
            int drv = 0, rt = 0;
            cudaDriverGetVersion(&drv); /* 0 when no driver is installed */
            cudaRuntimeGetVersion(&rt);
            cudaGetLastError();
            if (drv == 0)
                return bl_seterr(err, BL_EUNSUPPORTED, "no CUDA device: %s (no NVIDIA driver found; this build's "
                                 "runtime is CUDA %d.%d)", why, rt / 1000, rt % 1000 / 10);
            return bl_seterr(err, BL_EUNSUPPORTED, "no CUDA device: %s (the driver supports CUDA %d.%d, this build's "
                             "runtime is CUDA %d.%d; CUDA 13 needs driver R580 or newer)", why, drv / 1000,
                             drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        }
        return bl_seterr(err, BL_EUNSUPPORTED, "no CUDA device: %s", why);
    }
    if (n < 1) return bl_seterr(err, BL_EUNSUPPORTED, "no CUDA device: none found");
    return BL_OK;
}

/* ---- context and memory ---------------------------------------------------------------------- */

static void cu_close(void *ctx) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c) return;
    if (c->have_stream) cudaStreamSynchronize(c->stream);
    if (c->exec) cudaGraphExecDestroy(c->exec);
    if (c->have_blas) cublasDestroy(c->blas);
    if (c->workspace) cudaFree(c->workspace);
    if (c->have_stream) cudaStreamDestroy(c->stream);
    cudaGetLastError(); /* what failed here concerns nobody after us */
    free(c);
}

/* A cuBLAS failure in cu_open: BL_ENOMEM when it ran out of memory, else BL_EUNSUPPORTED. */
static bl_status blas_open_err(bl_error *err, cublasStatus_t s, const char *what) {
    return bl_seterr(err, s == CUBLAS_STATUS_ALLOC_FAILED ? BL_ENOMEM : BL_EUNSUPPORTED, "cuBLAS %s: %s (%d)", what,
                     cublasGetStatusName(s), (int)s);
}

static bl_status cu_open(void **out, bl_error *err) {
    *out = NULL;
    cu_ctx *c = (cu_ctx *)calloc(1, sizeof *c);
    if (!c) return bl_seterr(err, BL_ENOMEM, "out of memory");
    bl_status st = BL_OK;
    cublasStatus_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        st = bl_seterr(err, BL_EUNSUPPORTED, "CUDA stream: %s", cudaGetErrorString(e));
        goto fail;
    }
    c->have_stream = 1;
    if ((s = cublasCreate(&c->blas)) != CUBLAS_STATUS_SUCCESS) {
        st = blas_open_err(err, s, "handle");
        goto fail;
    }
    c->have_blas = 1;
    if ((s = cublasSetStream(c->blas, c->stream)) != CUBLAS_STATUS_SUCCESS) {
        st = blas_open_err(err, s, "stream");
        goto fail;
    }
    /* Stated rather than assumed: IEEE double GEMMs, no emulated FP64 (CUDA 13 offers fixed-point
     * emulation behind a math mode); the tolerances of tests/test_gpu.c rest on this. */
    if ((s = cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
        st = blas_open_err(err, s, "math mode");
        goto fail;
    }
    /* after cublasSetStream, which resets the workspace to cuBLAS's default pool */
    if ((e = cudaMalloc(&c->workspace, WORKSPACE_BYTES)) != cudaSuccess) {
        c->workspace = NULL;
        st = bl_seterr(err, e == cudaErrorMemoryAllocation ? BL_ENOMEM : BL_EUNSUPPORTED,
                       "CUDA: cuBLAS workspace of %zu MiB: %s", WORKSPACE_BYTES >> 20, cudaGetErrorString(e));
        goto fail;
    }
    if ((s = cublasSetWorkspace(c->blas, c->workspace, WORKSPACE_BYTES)) != CUBLAS_STATUS_SUCCESS) {
        st = blas_open_err(err, s, "workspace");
        goto fail;
    }
    *out = c;
    return BL_OK;
fail:
    cu_close(c); /* also clears the thread's last error, so that later calls start clean */
    return st;
}

static void *cu_alloc(void *ctx, size_t bytes) {
    cu_ctx *c = (cu_ctx *)ctx;
    void *p = NULL;
    if (bytes == 0) bytes = 8;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        check(c, e, "cudaMalloc");
        return NULL; /* reported by finish */
    }
    check(c, cudaMemsetAsync(p, 0, bytes, c->stream), "cudaMemsetAsync");
    return p;
}
static void cu_free(void *ctx, void *p) {
    (void)ctx;
    if (p) cudaFree(p);
}
static void *cu_host_alloc(void *ctx, size_t bytes) {
    cu_ctx *c = (cu_ctx *)ctx;
    void *p = NULL;
    if (bytes == 0) bytes = 8;
    cudaError_t e = cudaMallocHost(&p, bytes);
    if (e != cudaSuccess) {
        check(c, e, "cudaMallocHost");
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}
static void cu_host_free(void *ctx, void *p) {
    (void)ctx;
    if (p) cudaFreeHost(p);
}
static void cu_put(void *ctx, void *dst, const void *src, size_t bytes) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (bytes) check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream), "copy to device");
}
static void cu_get(void *ctx, void *dst, const void *src, size_t bytes) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (bytes) check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream), "copy to host");
}
static void cu_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (bytes) check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream), "device copy");
}
static bl_status cu_finish(void *ctx, bl_error *err) {
    cu_ctx *c = (cu_ctx *)ctx;
    check(c, cudaStreamSynchronize(c->stream), "stream");
    bl_status st = c->st;
    if (st) bl_seterr(err, st, "%s", c->msg);
    c->st = BL_OK;
    return st;
}

/* ---- GEMM ------------------------------------------------------------------------------------ */

/* The row-/column-major mapping is bl_kern_colmajor (tgroup_kern.h), shared with the host emulation. */
static void cu_gemm(void *ctx, int ta, int tb, int M, int N, int K, double alpha, const double *A, long lda,
                    long sA, const double *B, long ldb, long sB, double beta, double *C, long ldc, long sC,
                    int batch) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (M <= 0 || N <= 0 || batch <= 0) return;
    const bl_cm_gemm g = bl_kern_colmajor(ta, tb, M, N, K, A, lda, sA, B, ldb, sB);
    check_blas(c,
               cublasDgemmStridedBatched(c->blas, g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, g.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         g.m, g.n, g.k, &alpha, g.A, (int)g.lda, (long long)g.sA, g.B, (int)g.ldb,
                                         (long long)g.sB, &beta, C, (int)ldc, (long long)sC, batch),
               "cublasDgemmStridedBatched");
}

/* ---- kernels: the bodies of tgroup_kern.h in a grid-stride loop, or one block per slot ------------ */

static unsigned grid_for(size_t n) {
    size_t b = (n + TPB - 1) / TPB;
    if (b < 1) b = 1;
    return (unsigned)(b > (1u << 20) ? (1u << 20) : b); /* the kernels loop over the rest */
}

/* __grid_constant__: the bodies take the state's address without a per-thread copy. */
#define STATE const __grid_constant__ bl_tg_state s
#define GRID_LOOP(i, total) \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (total); i += (size_t)gridDim.x * blockDim.x)

__global__ void k_gather(STATE, const __grid_constant__ bl_tg_view v, int use_order, long i0, int B, size_t n) {
    GRID_LOOP(i, n) kb_gather(&s, &v, use_order, i0, B, i);
}
__global__ void k_bias_selu(STATE, int rows, int cols, double *Y, long ldy, long sY, long bias, size_t n) {
    GRID_LOOP(i, n) kb_bias_selu(&s, rows, cols, Y, ldy, sY, bias, i);
}
__global__ void k_selu_dropout(STATE, int B, double *a, double *d, int which, long i0, int training, size_t n) {
    GRID_LOOP(i, n) kb_selu_dropout(&s, B, a, d, which, i0, training, i);
}
__global__ void k_codes(STATE, int B, size_t n) {
    GRID_LOOP(i, n) kb_codes(&s, B, i);
}
__global__ void k_dropout_selu_back(STATE, int B, double *dx, const double *y, int which, long i0,
                                    const double *extra, size_t n) {
    GRID_LOOP(i, n) kb_dropout_selu_back(&s, B, dx, y, which, i0, extra, i);
}
__global__ void k_code_back(STATE, int B, int clean, size_t n) {
    GRID_LOOP(i, n) kb_code_back(&s, B, clean, i);
}
__global__ void k_adam(STATE, double beta1, double beta2, double eps, long ib, size_t n) {
    GRID_LOOP(i, n) kb_adam(&s, beta1, beta2, eps, ib, i);
}
__global__ void k_keep_best(STATE, size_t n) {
    GRID_LOOP(i, n) kb_keep_best(&s, i);
}
__global__ void k_average(STATE, size_t n) {
    GRID_LOOP(i, n) kb_average(&s, i);
}

/* Block kernels: launched with exactly TPB threads, one block per slot. */
__global__ void k_recon(STATE, int B) {
    __shared__ double red[2][TPB];
    const int t = threadIdx.x;
    double part[2];
    kb_recon_part(&s, B, blockIdx.x, t, TPB, part);
    red[0][t] = part[0];
    red[1][t] = part[1];
    __syncthreads();
    for (int h = TPB / 2; h > 0; h /= 2) { /* the host emulation runs this same tree */
        if (t < h) {
            red[0][t] += red[0][t + h];
            red[1][t] += red[1][t + h];
        }
        __syncthreads();
    }
    if (t == 0) kb_recon_store(&s, blockIdx.x, red[0][0], red[1][0]);
}
__global__ void k_head(STATE, int B, int want_grad, long col) {
    kb_head_rows(&s, B, want_grad, blockIdx.x, threadIdx.x, TPB);
    __syncthreads();
    kb_head_sums(&s, B, want_grad, col, blockIdx.x, threadIdx.x, TPB);
}
__global__ void k_selu_back_bias(STATE, int B, int cols, double *dY, long ld, long sD, const double *Y, long ldy,
                                 long sY, long bias) {
    kb_sbb_elem(B, cols, dY, ld, sD, Y, ldy, sY, blockIdx.x, threadIdx.x, TPB);
    __syncthreads();
    kb_sbb_sums(&s, B, cols, dY, ld, sD, bias, blockIdx.x, threadIdx.x, TPB);
}

/* ---- the table ------------------------------------------------------------------------------- */

#define LAUNCH_CHECK(c, name) check((c), cudaGetLastError(), name)

static void cu_gather(void *ctx, const bl_tg_state *s, const bl_tg_view *v, int use_order, long i0, int B) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_gather_n(s, B);
    k_gather<<<grid_for(n), TPB, 0, c->stream>>>(*s, *v, use_order, i0, B, n);
    LAUNCH_CHECK(c, "gather");
}
static void cu_bias_selu(void *ctx, const bl_tg_state *s, int rows, int cols, double *Y, long ldy, long sY,
                         long bias) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_bias_selu_n(s, rows, cols);
    k_bias_selu<<<grid_for(n), TPB, 0, c->stream>>>(*s, rows, cols, Y, ldy, sY, bias, n);
    LAUNCH_CHECK(c, "bias_selu");
}
static void cu_selu_dropout(void *ctx, const bl_tg_state *s, int B, double *a, double *d, int which, long i0,
                            int training) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_ae_n(s, B, s->net.H);
    k_selu_dropout<<<grid_for(n), TPB, 0, c->stream>>>(*s, B, a, d, which, i0, training, n);
    LAUNCH_CHECK(c, "selu_dropout");
}
static void cu_codes(void *ctx, const bl_tg_state *s, int B) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_codes_n(s, B);
    k_codes<<<grid_for(n), TPB, 0, c->stream>>>(*s, B, n);
    LAUNCH_CHECK(c, "codes");
}
static void cu_recon(void *ctx, const bl_tg_state *s, int B) {
    cu_ctx *c = (cu_ctx *)ctx;
    k_recon<<<s->n, TPB, 0, c->stream>>>(*s, B);
    LAUNCH_CHECK(c, "recon");
}
static void cu_head(void *ctx, const bl_tg_state *s, int B, int want_grad, long col) {
    cu_ctx *c = (cu_ctx *)ctx;
    k_head<<<s->n, TPB, 0, c->stream>>>(*s, B, want_grad, col);
    LAUNCH_CHECK(c, "head");
}
static void cu_selu_back_bias(void *ctx, const bl_tg_state *s, int B, int cols, double *dY, long ld, long sD,
                              const double *Y, long ldy, long sY, long bias) {
    cu_ctx *c = (cu_ctx *)ctx;
    k_selu_back_bias<<<s->n, TPB, 0, c->stream>>>(*s, B, cols, dY, ld, sD, Y, ldy, sY, bias);
    LAUNCH_CHECK(c, "selu_back_bias");
}
static void cu_dropout_selu_back(void *ctx, const bl_tg_state *s, int B, double *dx, const double *y, int which,
                                 long i0, const double *extra) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_ae_n(s, B, s->net.H);
    k_dropout_selu_back<<<grid_for(n), TPB, 0, c->stream>>>(*s, B, dx, y, which, i0, extra, n);
    LAUNCH_CHECK(c, "dropout_selu_back");
}
static void cu_code_back(void *ctx, const bl_tg_state *s, int B, int clean) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_ae_n(s, B, s->net.C);
    k_code_back<<<grid_for(n), TPB, 0, c->stream>>>(*s, B, clean, n);
    LAUNCH_CHECK(c, "code_back");
}
static void cu_adam(void *ctx, const bl_tg_state *s, double beta1, double beta2, double eps, long ib) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_params_n(s);
    k_adam<<<grid_for(n), TPB, 0, c->stream>>>(*s, beta1, beta2, eps, ib, n);
    LAUNCH_CHECK(c, "adam");
}
static void cu_keep_best(void *ctx, const bl_tg_state *s) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_params_n(s);
    k_keep_best<<<grid_for(n), TPB, 0, c->stream>>>(*s, n);
    LAUNCH_CHECK(c, "keep_best");
}
static void cu_average(void *ctx, const bl_tg_state *s) {
    cu_ctx *c = (cu_ctx *)ctx;
    const size_t n = kb_params_n(s);
    k_average<<<grid_for(n), TPB, 0, c->stream>>>(*s, n);
    LAUNCH_CHECK(c, "average");
}

/* ---- graphs: an epoch's launches recorded once, replayed each epoch ---------------------------- */

/* The contract is tgroup_ops.h's: the ops between a capture_begin that answered 1 and capture_end are
 * recorded, never run; when capture_begin answers 0 the stream is not capturing and the caller runs the
 * ops directly, once. Why a capture failed goes to c->why (capture_why), never to c->st: nothing of a
 * failed capture ran, so nothing failed that finish should report. */
static int cu_capture_begin(void *ctx) {
    cu_ctx *c = (cu_ctx *)ctx;
    c->why[0] = 0;
    if (c->st) { /* a failure is pending: finish reports it; the caller's direct run changes nothing */
        snprintf(c->why, sizeof c->why, "not started: an earlier failure is pending (%s)", c->msg);
        return 0;
    }
    if (c->capturing) { /* the caller broke the contract; record nothing twice */
        snprintf(c->why, sizeof c->why, "not started: a capture is already open");
        return 0;
    }
    const cudaError_t e = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        snprintf(c->why, sizeof c->why, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
        cudaGetLastError(); /* not sticky: clear it, or the next launch check would report it */
        /* should the stream be capturing after all, end that capture: the caller now runs directly */
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(c->stream, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone) {
            cudaGraph_t graph = NULL;
            cudaStreamEndCapture(c->stream, &graph);
            if (graph) cudaGraphDestroy(graph);
        }
        cudaGetLastError();
        return 0;
    }
    c->capturing = 1;
    return 1;
}

static int cu_capture_end(void *ctx) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c->capturing) { /* capture_begin answered 0: the ops ran directly; there is nothing to end */
        snprintf(c->why, sizeof c->why, "capture_end without a capture");
        return 0;
    }
    c->capturing = 0;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e = cudaStreamEndCapture(c->stream, &graph); /* ends capture mode even on failure */
    if (e != cudaSuccess || !graph) {
        snprintf(c->why, sizeof c->why, "cudaStreamEndCapture: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no graph");
    } else if (c->st) {
        snprintf(c->why, sizeof c->why, "an op failed while recording: %s", c->msg);
    } else if ((e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess) {
        snprintf(c->why, sizeof c->why, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
        exec = NULL;
    }
    if (graph) cudaGraphDestroy(graph);
    if (!exec) {
        cudaGetLastError(); /* capture errors are not sticky: clear the last one */
        c->st = BL_OK;      /* forget what failed during the capture: nothing of it ran */
        c->msg[0] = 0;
        return 0;
    }
    if (c->exec) cudaGraphExecDestroy(c->exec);
    c->exec = exec;
    c->why[0] = 0;
    return 1;
}

static void cu_replay(void *ctx) {
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c->exec) fail(c, BL_EINTERNAL, "graph launch", "no graph recorded");
    else check(c, cudaGraphLaunch(c->exec, c->stream), "graph launch");
}

static const char *cu_capture_why(void *ctx) { return ((cu_ctx *)ctx)->why; }

/* Positional, in tgroup_ops.h's field order (C++17 has no designated initialisers): a constant table,
 * so no C++ start-up code runs. */
static const bl_tg_ops cuda_ops = {
    "cuda", 1,
    cu_open, cu_close, cu_alloc, cu_free, cu_host_alloc, cu_host_free, cu_put, cu_get, cu_copy, cu_finish,
    cu_gemm, cu_gather, cu_bias_selu, cu_selu_dropout, cu_codes, cu_recon, cu_head, cu_selu_back_bias,
    cu_dropout_selu_back, cu_code_back, cu_adam, cu_keep_best, cu_capture_begin, cu_capture_end, cu_replay,
    cu_capture_why, cu_average,
};

/* ---- the module's entry point (module.h) ---------------------------------------------------------- */

static const bl_cuda_module cuda_module = {
    BL_CUDA_MODULE_ABI, BL_CUDA_MODULE_SIZES, BL_VERSION, CUDART_VERSION, cu_available, &cuda_ops,
};

/* The one symbol the module exports (module.map keeps every other one local). */
extern "C" __attribute__((visibility("default"))) const bl_cuda_module *bl_cuda_module_entry(void) {
    return &cuda_module;
}
