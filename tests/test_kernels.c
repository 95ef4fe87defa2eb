/* test_kernels.c — every kernel copy this machine can run, checked against the portable reference (the
 * generic copy), in the manner of dav1d's checkasm: random network shapes (1–10 properties in any
 * essential/optional mix, 1 to hundreds of distinct values per property, the paper's dimensions and
 * others), random batches (1 row to hundreds, not multiples of 8), every dropout mask mode, training and
 * evaluation, frozen blocks, bit and thermometer vectors; the outputs, losses, gradients and random
 * draws of the pass, the predictions and ensemble medians (1–16 members), the activations and Adam.
 * A test of the test breaks a copy on purpose and requires the checker to notice.
 * BELLAMY_CPU caps the copies checked (tools/test runs this suite once per cap under the sanitizers).
 * Where the reference is the only copy (a build for another processor, BELLAMY_CPU=generic), the tests
 * that compare a copy with it have nothing to compare and report SKIP; the others check the reference
 * against what it must compute (libm, the members' median, NaN) and run.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "nn/bpass.h"
#include "nn/nn.h"

/* Relative agreement of a copy with its reference: 1e-12 between float64 copies; between float32 copies
 * and against float64 the check sets it from the shapes (f32_tol, F32_VS_F64). */
static double TOL = 1e-12;

/* ---- random shapes ---- */

typedef struct rview {
    bl_bnet_dims d;
    size_t n_rows, n_sx, n_vals[32];
    uint32_t *sx, *val;
    double *target, *sx_feat, *vecs[32];
    const double *cvecs[32];
    bl_bview v;
} rview;

static size_t pick(bl_rng *r, size_t lo, size_t hi) { return lo + (size_t)bl_rng_int(r, hi - lo + 1); }

/* A view like a user's data: paper (or odd) dimensions, np properties, values per property from one to
 * hundreds, vectors as binarizer bits or as a log thermometer's fractions. */
static void rview_make(rview *f, bl_rng *r, int paper, int n_ess, int n_opt, size_t n_rows) {
    memset(f, 0, sizeof *f);
    bl_bnet_dims_default(&f->d, n_ess, n_opt);
    if (!paper) {
        f->d.f_hidden = 3 + (int)pick(r, 0, 14);
        f->d.f_out = 1 + (int)pick(r, 0, 9);
        f->d.vec_len = 5 + (int)pick(r, 0, 40);
        f->d.ae_hidden = 2 + (int)pick(r, 0, 9);
        f->d.code = 1 + (int)pick(r, 0, 5);
        f->d.z_hidden = 2 + (int)pick(r, 0, 9);
    }
    const int np = n_ess + n_opt, V = f->d.vec_len;
    f->n_rows = n_rows;
    f->n_sx = pick(r, 1, 24);
    f->sx_feat = malloc(f->n_sx * 3 * sizeof(double));
    for (size_t i = 0; i < f->n_sx * 3; i++) f->sx_feat[i] = 3.5 * bl_rng_uniform(r) - 0.5; /* also outside [0, 1] */
    for (int p = 0; p < np; p++) {
        const int many = bl_rng_int(r, 4) == 0;
        f->n_vals[p] = many ? pick(r, 50, 400) : pick(r, 1, 12);
        f->vecs[p] = malloc(f->n_vals[p] * (size_t)V * sizeof(double));
        const int thermo = bl_rng_int(r, 2) == 0;
        for (size_t i = 0; i < f->n_vals[p] * (size_t)V; i++)
            f->vecs[p][i] = thermo ? (bl_rng_int(r, 3) == 0 ? bl_rng_uniform(r) : (double)bl_rng_int(r, 2))
                                   : (double)bl_rng_int(r, 2);
        f->cvecs[p] = f->vecs[p];
    }
    f->sx = malloc(n_rows * sizeof *f->sx);
    f->val = malloc(n_rows * (size_t)(np ? np : 1) * sizeof *f->val);
    f->target = malloc(n_rows * sizeof *f->target);
    for (size_t i = 0; i < n_rows; i++) {
        f->sx[i] = (uint32_t)bl_rng_int(r, f->n_sx);
        for (int p = 0; p < np; p++) f->val[i * (size_t)np + (size_t)p] = (uint32_t)bl_rng_int(r, f->n_vals[p]);
        f->target[i] = 0.1 + 4.0 * bl_rng_uniform(r);
    }
    f->v.n_rows = n_rows;
    f->v.sx = f->sx;
    f->v.val = f->val;
    f->v.target = f->target;
    f->v.n_sx = f->n_sx;
    f->v.sx_feat = f->sx_feat;
    f->v.n_vals = f->n_vals;
    f->v.vecs = f->cvecs;
}

static void rview_free(rview *f) {
    for (int p = 0; p < 32; p++) free(f->vecs[p]);
    free(f->sx), free(f->val), free(f->target), free(f->sx_feat);
}

/* |a − b| within TOL of the larger magnitude, or of floor (for sums that cancel); NaN only with NaN. */
static int close(double a, double b, double floor) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= TOL * fmax(fmax(fabs(a), fabs(b)), floor);
}

static double max_abs(const double *x, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* ---- the pass: one copy against the reference ---- */

typedef struct pass_case {
    int paper, n_ess, n_opt, mode, training, grad, recon, frozen_ae;
    double dropout;
    size_t n_rows, B, max_batch;
    uint64_t seed;
    double jitter; /* the second table's network: each parameter times 1 ± jitter (a fixed draw of signs) */
} pass_case;

/* Runs the case through both tables, each on a network of its own precision (ref->f32, k->f32); returns
 * the number of disagreements (0: the copy passes) and describes the first in why. */
static int check_pass(const bl_kernel_table *ref, const bl_kernel_table *k, const pass_case *c, char *why,
                      size_t why_len) {
    bl_rng r;
    bl_rng_seed(&r, c->seed);
    rview f;
    rview_make(&f, &r, c->paper, c->n_ess, c->n_opt, c->n_rows);
    bl_bnet net[2];
    bl_bwork *w[2];
    bl_error e;
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        bl_rng wr;
        bl_rng_seed(&wr, c->seed + 1);
        bl_bnet_dims d = f.d;
        d.f32 = (i == 0 ? ref : k)->f32;
        ck_assert_int_eq(bl_bnet_init(&net[i], &d, &wr, &e), BL_OK);
        net[i].P.param[net[i].z2b] = 1.0 + 0.25 * (double)(c->seed % 4); /* both sides of the output SELU */
        if (i == 1 && c->jitter != 0.0) { /* each parameter up or down, so every pre-activation moves */
            bl_rng jr;
            bl_rng_seed(&jr, c->seed + 3);
            for (size_t j = 0; j < net[i].P.n; j++) net[i].P.param[j] *= 1.0 + (bl_rng_u64(&jr) & 1 ? c->jitter : -c->jitter);
        }
        if (c->frozen_ae == 1 || c->frozen_ae == 2) /* 1: g, h and f; 2: g alone (no d code); 3: h alone */
            ck_assert_int_eq(bl_params_set_frozen(&net[i].P, "g.", 1, NULL, &e), BL_OK);
        if (c->frozen_ae == 1 || c->frozen_ae == 3)
            ck_assert_int_eq(bl_params_set_frozen(&net[i].P, "h.", 1, NULL, &e), BL_OK);
        if (c->frozen_ae == 1) ck_assert_int_eq(bl_params_set_frozen(&net[i].P, "f.", 1, NULL, &e), BL_OK);
        ck_assert_int_eq(bl_bwork_new(&net[i], &f.v, c->max_batch, &w[i], &e), BL_OK);
        bl_params_zero_grad(&net[i].P);
    }
    size_t *rows = malloc(c->B * sizeof *rows);
    for (size_t i = 0; i < c->B; i++) rows[i] = (size_t)bl_rng_int(&r, f.n_rows);
    double *pred[2] = {malloc(c->B * sizeof(double)), malloc(c->B * sizeof(double))};
    bl_bloss L[2];
    bl_rng dr[2];
    const bl_kernel_table *tab[2] = {ref, k};
    for (int i = 0; i < 2; i++) {
        bl_rng_seed(&dr[i], c->seed + 7);
        bl_bpass ps = {.training = c->training, .dropout = c->dropout, .want_grad = c->grad, .recon = c->recon,
                       .per_row_dropout = c->mode, .rng = &dr[i]};
        /* two passes into the same gradients: accumulation and the slot maps' reset are exercised too */
        for (int rep = 0; rep < 2; rep++)
            ck_assert_int_eq(tab[i]->pass(&net[i], &f.v, rows, c->B, &ps, w[i], pred[i], &L[i], &e), BL_OK);
    }
    const double lf = fmax(fabs(L[0].total), 1e-300);
    const double a[4] = {L[0].runtime, L[0].recon, L[0].total, L[0].abs_err};
    const double b[4] = {L[1].runtime, L[1].recon, L[1].total, L[1].abs_err};
    const char *nm[4] = {"runtime loss", "reconstruction loss", "total loss", "absolute error"};
    for (int q = 0; q < 4 && !bad; q++)
        if (!close(a[q], b[q], q == 3 ? 1e-300 : lf)) {
            snprintf(why, why_len, "%s %.17g, reference %.17g", nm[q], b[q], a[q]);
            bad++;
        }
    const double pf = max_abs(pred[0], c->B);
    for (size_t i = 0; i < c->B && !bad; i++)
        if (!close(pred[0][i], pred[1][i], pf)) {
            snprintf(why, why_len, "prediction %zu: %.17g, reference %.17g", i, pred[1][i], pred[0][i]);
            bad++;
        }
    if (c->grad) {
        const double gf = max_abs(net[0].P.grad, net[0].P.n);
        for (size_t i = 0; i < net[0].P.n && !bad; i++)
            if (!close(net[0].P.grad[i], net[1].P.grad[i], gf)) {
                snprintf(why, why_len, "gradient %zu: %.17g, reference %.17g (largest %.3g)", i, net[1].P.grad[i],
                         net[0].P.grad[i], gf);
                bad++;
            }
    }
    if (!bad && memcmp(dr[0].s, dr[1].s, sizeof dr[0].s) != 0) {
        snprintf(why, why_len, "the generator's state differs after the pass: another number of draws");
        bad++;
    }
    for (int i = 0; i < 2; i++) {
        bl_bwork_free(w[i]);
        bl_bnet_free(&net[i]);
        free(pred[i]);
    }
    free(rows);
    rview_free(&f);
    return bad;
}

static pass_case random_case(bl_rng *r, int i) {
    pass_case c;
    memset(&c, 0, sizeof c);
    c.paper = i % 5 != 4; /* mostly the vector kernels' dimensions */
    const int np = (int)pick(r, 1, 10);
    c.n_ess = (int)pick(r, 0, (size_t)np);
    c.n_opt = np - c.n_ess;
    c.mode = i % 3;
    c.training = i % 7 != 6;
    c.dropout = c.training ? (const double[]){0.05, 0.1, 0.2, 0.5}[bl_rng_int(r, 4)] : 0.0;
    c.recon = i % 11 != 10;
    c.grad = i % 9 != 8;
    c.frozen_ae = i % 13 == 12 ? 1 : i % 17 == 16 ? 2 : i % 19 == 18 ? 3 : 0;
    c.n_rows = pick(r, 1, 300);
    c.max_batch = pick(r, 1, 257);
    c.B = pick(r, 1, c.max_batch);
    c.seed = 1000 + (uint64_t)i;
    return c;
}

/* How many random cases: more in a release build, fewer under the sanitizers (slow). */
static int n_cases(void) {
#if defined(__SANITIZE_ADDRESS__)
    return 60;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 60;
#else
    return 300;
#endif
#else
    return 300;
#endif
}

/* How many copies besides the reference this process may use (0: nothing to compare with it). */
static int other_copies(void) {
    int n = 0;
    for (int level = BL_CPU_GENERIC + 1; level < BL_CPU_LEVELS; level++) n += bl_kernels_copy(level) != NULL;
    return n;
}

#define SKIP_WITHOUT_OTHER_COPIES()                                                                              \
    do {                                                                                                         \
        if (other_copies() == 0)                                                                                 \
            BL_TEST_SKIP("the reference (generic) is the only kernel copy here (processor %s, in use %s): no "   \
                         "other copy to compare with it", bl_cpu_level_name(bl_cpu_detected()), bl_kernels()->name); \
    } while (0)

START_TEST(every_copy_pass_matches_the_reference) {
    SKIP_WITHOUT_OTHER_COPIES();
    const bl_kernel_table *ref = bl_kernels_copy(BL_CPU_GENERIC);
    ck_assert_ptr_nonnull(ref);
    int copies = 0;
    for (int level = BL_CPU_GENERIC + 1; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *k = bl_kernels_copy(level);
        if (!k) continue;
        copies++;
        bl_rng r;
        bl_rng_seed(&r, 42);
        for (int i = 0; i < n_cases(); i++) {
            const pass_case c = random_case(&r, i);
            char why[512] = "";
            ck_assert_msg(check_pass(ref, k, &c, why, sizeof why) == 0,
                          "%s pass, case %d (%s dims, %d+%d properties, mode %d, B %zu of %zu, dropout %g, grad %d, "
                          "recon %d, frozen %d): %s",
                          k->name, i, c.paper ? "paper" : "odd", c.n_ess, c.n_opt, c.mode, c.B, c.max_batch, c.dropout,
                          c.grad, c.recon, c.frozen_ae, why);
        }
    }
    ck_assert_int_eq(copies, other_copies());
    fprintf(stderr, "test_kernels: checked %d copies against the reference (this processor: %s, in use: %s)\n", copies,
            bl_cpu_level_name(bl_cpu_detected()), bl_kernels()->name);
}
END_TEST

/* ---- deliberately broken copies: the checker must catch each ---- */

static const bl_kernel_table *g_real;
static int g_break;

static bl_status broken_pass(bl_bnet *net, const bl_bview *v, const size_t *rows, size_t B, const bl_bpass *pass,
                             bl_bwork *w, double *pred, bl_bloss *loss, bl_error *err) {
    bl_status st = g_real->pass(net, v, rows, B, pass, w, pred, loss, err);
    if (g_break == 0) net->P.grad[net->h3w + 5] *= 1.0 + 1e-9;  /* one decoder gradient, slightly off */
    if (g_break == 1) loss->recon *= 1.0 + 1e-10;                /* the reconstruction loss */
    if (g_break == 2 && pred) pred[B - 1] += 1e-9;                /* the last row's prediction (a tail) */
    if (g_break == 3 && pass->rng) (void)bl_rng_u64(pass->rng);   /* one draw too many */
    if (g_break == 4) net->P.grad[net->g0w] += 1e-6;             /* the encoder's first layer */
    return st;
}

START_TEST(the_checker_catches_broken_copies) {
    const bl_kernel_table *ref = bl_kernels_copy(BL_CPU_GENERIC);
    bl_kernel_table broken = *bl_kernels();
    g_real = bl_kernels();
    broken.pass = broken_pass;
    pass_case c = {.paper = 1, .n_ess = 3, .n_opt = 2, .mode = 1, .training = 1, .grad = 1, .recon = 1,
                   .dropout = 0.1, .n_rows = 90, .B = 37, .max_batch = 64, .seed = 5};
    char why[512];
    for (g_break = 0; g_break < 5; g_break++)
        ck_assert_msg(check_pass(ref, &broken, &c, why, sizeof why) > 0, "breakage %d went unnoticed", g_break);
    g_break = -1;
    ck_assert_msg(check_pass(ref, &broken, &c, why, sizeof why) == 0, "an intact copy failed: %s", why);
}
END_TEST

/* ---- predictions and the ensemble median ---- */

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

START_TEST(every_copy_predicts_like_the_reference) {
    enum { KMAX = 16, NS = 203 };
    const bl_kernel_table *ref = bl_kernels_copy(BL_CPU_GENERIC);
    for (int dims = 0; dims < 2; dims++) {
        bl_bnet_dims d;
        bl_bnet_dims_default(&d, 2, 1);
        if (dims) d.f_hidden = 12; /* the plain loops */
        bl_rng r;
        bl_rng_seed(&r, 77 + (uint64_t)dims);
        bl_bnet nets[KMAX];
        const bl_bnet *np[KMAX];
        bl_error e;
        for (int k = 0; k < KMAX; k++) {
            ck_assert_int_eq(bl_bnet_init(&nets[k], &d, &r, &e), BL_OK);
            for (size_t i = 0; i < nets[k].P.n; i++) nets[k].P.param[i] *= 1.5;
            nets[k].P.param[nets[k].z2b] = 0.5 + 0.1 * k; /* outputs of both signs of SELU, close together */
            np[k] = &nets[k];
        }
        static double ctx[KMAX * 8], feat[NS * 3], out[NS], want[NS], each[KMAX][NS], F[KMAX][NS * 8];
        for (int k = 0; k < KMAX * 8; k++) ctx[k] = 4.0 * bl_rng_uniform(&r) - 2.0;
        for (int i = 0; i < NS * 3; i++) feat[i] = 4.0 * bl_rng_uniform(&r) - 1.0;
        const int Ks[] = {1, 2, 3, 4, 5, 6, 7, 16};
        const size_t ns[] = {1, 7, 8, 9, 64, 65, NS};
        /* every copy, the reference too: the median of its own members, bit for bit, and NaN kept; the
         * other copies also against the reference (the reference against itself would prove nothing) */
        for (int level = 0; level < BL_CPU_LEVELS; level++) {
            const bl_kernel_table *kt = bl_kernels_copy(level);
            if (!kt) continue;
            /* one network and f alone, against the reference */
            for (size_t t = 0; t < sizeof ns / sizeof ns[0] && level > BL_CPU_GENERIC; t++) {
                for (size_t i = 0; i < NS; i++) out[i] = want[i] = -12345.0;
                kt->predict(np[0], ctx, feat, ns[t], out);
                ref->predict(np[0], ctx, feat, ns[t], want);
                for (size_t i = 0; i < NS; i++)
                    ck_assert_msg(i < ns[t] ? close(out[i], want[i], 1e-300) : out[i] == -12345.0,
                                  "%s predict, dims %d, n %zu, sample %zu: %.17g, reference %.17g", kt->name, dims,
                                  ns[t], i, out[i], want[i]);
                double Fa[NS * 8], Fb[NS * 8];
                kt->f_forward(np[0], feat, ns[t], Fa);
                ref->f_forward(np[0], feat, ns[t], Fb);
                for (size_t i = 0; i < ns[t] * (size_t)d.f_out; i++)
                    ck_assert_msg(close(Fa[i], Fb[i], 1e-300), "%s f_forward %zu: %.17g, reference %.17g", kt->name, i,
                                  Fa[i], Fb[i]);
            }
            /* each member alone through this copy, and its f outputs */
            const double *Fp[KMAX];
            for (int k = 0; k < KMAX; k++) {
                kt->predict(np[k], ctx + 8 * k, feat, NS, each[k]);
                kt->f_forward(np[k], feat, NS, F[k]);
                Fp[k] = F[k];
            }
            for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++) {
                const int K = Ks[a];
                for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
                    for (int from_f = 0; from_f < 2; from_f++) {
                        for (size_t i = 0; i < NS; i++) out[i] = -12345.0;
                        if (from_f) kt->predict_median_f(np, K, ctx, Fp, ns[t], out);
                        else kt->predict_median(np, K, ctx, feat, ns[t], out);
                        ref->predict_median(np, K, ctx, feat, ns[t], want);
                        for (size_t i = 0; i < ns[t]; i++) {
                            double v[KMAX];
                            for (int k = 0; k < K; k++) v[k] = each[k][i];
                            qsort(v, (size_t)K, sizeof v[0], cmp_double);
                            const double med = K % 2 ? v[K / 2] : 0.5 * (v[K / 2 - 1] + v[K / 2]);
                            /* bit for bit the median of this copy's members, and close to the reference's */
                            ck_assert_msg(out[i] == med, "%s dims %d K %d n %zu%s sample %zu: %.17g, median %.17g",
                                          kt->name, dims, K, ns[t], from_f ? " from f" : "", i, out[i], med);
                            if (level > BL_CPU_GENERIC)
                                ck_assert_msg(close(out[i], want[i], 1e-300), "%s median %.17g, reference %.17g",
                                              kt->name, out[i], want[i]);
                        }
                        for (size_t i = ns[t]; i < NS; i++) ck_assert_double_eq(out[i], -12345.0);
                    }
            }
            /* one broken member (a NaN output) makes the median NaN: a sort could bury it */
            const double keep = nets[2].P.param[nets[2].z2b];
            nets[2].P.param[nets[2].z2b] = NAN;
            for (int k = 0; k < KMAX; k++) kt->f_forward(np[k], feat, NS, F[k]);
            for (int K = 4; K <= 5; K++)
                for (int from_f = 0; from_f < 2; from_f++) {
                    if (from_f) kt->predict_median_f(np, K, ctx, Fp, 20, out);
                    else kt->predict_median(np, K, ctx, feat, 20, out);
                    for (int i = 0; i < 20; i++)
                        ck_assert_msg(isnan(out[i]), "%s dims %d K %d sample %d: %g", kt->name, dims, K, i, out[i]);
                }
            nets[2].P.param[nets[2].z2b] = keep;
        }
        for (int k = 0; k < KMAX; k++) bl_bnet_free(&nets[k]);
    }
}
END_TEST

/* ---- activations and Adam ---- */

static double lselu(double x) { return x > 0 ? BL_SELU_LAMBDA * x : BL_SELU_LAMBDA * BL_SELU_ALPHA * expm1(x); }

START_TEST(every_copy_activation_is_within_a_few_ulp_of_libm) {
    enum { N = 40000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    size_t n = 0;
    for (int i = 0; i < 20000; i++) x[n++] = -60.0 + 120.0 * i / 19999.0; /* the working range */
    for (int i = 0; i < 9000; i++) {                                     /* ±1e-300 .. ±1e3 */
        double m = pow(10.0, -300.0 + 303.0 * i / 8999.0);
        x[n++] = m;
        x[n++] = -m;
    }
    const double special[] = {0.0, -0.0, 1e-320, -1e-320, -40.0, -40.5, -708.0, -745.2, -1e300, 1e300,
                              19.0, 20.0, 30.0, 0.34657359027997264, -0.34657359027997264, INFINITY,
                              -INFINITY};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) x[n++] = special[i];
    for (; n < N; n++) x[n] = 1e-8 * (double)(n % 977) - 5e-6;
    for (int level = 0; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *kt = bl_kernels_copy(level);
        if (!kt) continue;
        for (int fn = 0; fn < 2; fn++) {
            const size_t lens[] = {n, 1, 3, 5, 9};
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                kt->act(fn, x, lens[li], y);
                for (size_t i = 0; i < lens[li]; i++) {
                    double ref = fn == 0 ? lselu(x[i]) : tanh(x[i]);
                    if (ref == 0 || isinf(ref)) {
                        ck_assert_msg(y[i] == ref, "%s fn %d at %g: %g, want %g", kt->name, fn, x[i], y[i], ref);
                        continue;
                    }
                    double ulp = nextafter(fabs(ref), INFINITY) - fabs(ref);
                    double err = fabs(y[i] - ref) / ulp;
                    ck_assert_msg(err <= 4.0, "%s fn %d at %.17g: %.17g, libm %.17g (%g ulp)", kt->name, fn, x[i], y[i],
                                  ref, err);
                }
            }
            double nan_in = NAN, nan_out;
            kt->act(fn, &nan_in, 1, &nan_out);
            ck_assert_msg(isnan(nan_out), "%s fn %d: NaN gives %g", kt->name, fn, nan_out);
        }
    }
    free(x);
    free(y);
}
END_TEST

/* The same operations in the same order in every copy: parameters and moments agree bit for bit with
 * the reference for every length (vector body and tail), with and without weight decay. */
START_TEST(every_copy_adam_is_bit_identical) {
    SKIP_WITHOUT_OTHER_COPIES();
    bl_rng r;
    bl_rng_seed(&r, 77);
    const size_t lens[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 1151};
    const bl_kernel_table *ref = bl_kernels_copy(BL_CPU_GENERIC);
    int copies = 0;
    for (int level = 1; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *kt = bl_kernels_copy(level);
        if (!kt) continue;
        copies++;
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            const size_t n = lens[li];
            double *P[2], *M[2], *V[2], *g = malloc(n * sizeof(double));
            for (int k = 0; k < 2; k++) {
                P[k] = malloc(n * sizeof(double));
                M[k] = calloc(n, sizeof(double));
                V[k] = calloc(n, sizeof(double));
            }
            for (size_t i = 0; i < n; i++) P[0][i] = bl_rng_normal(&r);
            memcpy(P[1], P[0], n * sizeof(double));
            for (long step = 1; step <= 25; step++) {
                for (size_t i = 0; i < n; i++) g[i] = (step % 5 == 0 ? 1e-6 : 3.0) * bl_rng_normal(&r);
                if (step == 7) g[n / 2] = 0.0;
                const double b1 = 0.9, b2 = 0.999;
                bl_adam_hyper h = {.lr = 0.01, .beta1 = b1, .beta2 = b2, .eps = 1e-8,
                                   .weight_decay = (li % 2) ? 0.01 : 0.0,
                                   .bc1 = 1.0 - pow(b1, (double)step), .bc2 = 1.0 - pow(b2, (double)step)};
                kt->adam(n, &h, P[0], g, M[0], V[0]);
                ref->adam(n, &h, P[1], g, M[1], V[1]);
            }
            ck_assert_msg(memcmp(P[0], P[1], n * sizeof(double)) == 0, "%s adam n %zu: parameters differ", kt->name, n);
            ck_assert_int_eq(memcmp(M[0], M[1], n * sizeof(double)), 0);
            ck_assert_int_eq(memcmp(V[0], V[1], n * sizeof(double)), 0);
            double moved = 0.0;
            for (size_t i = 0; i < n; i++) moved += fabs(M[0][i]);
            ck_assert(moved > 0.0);
            for (int k = 0; k < 2; k++) free(P[k]), free(M[k]), free(V[k]);
            free(g);
        }
    }
    ck_assert_int_eq(copies, other_copies());
}
END_TEST

/* The table in use is the capped level's; no copy above the cap is handed out. */
START_TEST(the_cap_decides_the_copies) {
    const int lvl = bl_cpu_level();
    ck_assert_int_le(lvl, bl_cpu_detected());
    ck_assert_int_eq(bl_kernels()->level, lvl);
    ck_assert_str_eq(bl_kernels()->name, bl_cpu_level_name(lvl));
    for (int l = 0; l < BL_CPU_LEVELS; l++) {
        if (l <= lvl) ck_assert_ptr_nonnull(bl_kernels_copy(l));
        else ck_assert_ptr_null(bl_kernels_copy(l));
    }
    ck_assert_ptr_null(bl_kernels_copy(-1));
    ck_assert_ptr_null(bl_kernels_copy(BL_CPU_LEVELS));
    const char *env = getenv("BELLAMY_CPU");
    if (env && strcmp(env, "generic") == 0) ck_assert_int_eq(lvl, BL_CPU_GENERIC);
    if (env && strcmp(env, "avx2") == 0) ck_assert_int_le(lvl, BL_CPU_AVX2);
    ck_assert_int_eq(bl_cpu_check(NULL), BL_OK);
}
END_TEST

/* ---- the float32 copies ----
 * Each float32 copy against the float32 reference (the generic copy compiled with BL_F32) to a
 * tolerance from the case's shapes, and the float32 reference against the float64 one to a stated
 * bound. A float32 sum of n terms is within about n·2⁻²⁴ of the exact one relative to its largest
 * term (and two copies that order it differently within twice that); a value passes through the
 * decoder (V + H terms), z (the properties' terms) and the batch's gradient sum (B rows), so
 * f32_tol = 2⁻²⁴ · 8 · (V + H + Z·(np + 1) + B), relative to the largest magnitude of its kind, as the
 * float64 checks are; the factor 8 covers the few chained layers and SELU/tanh within 4 ulp. Measured
 * on 300 cases: every copy passes at a tenth of it, and fails at a hundredth (4e-7 there, 10 float ulp). */
static double f32_tol(const pass_case *c) {
    const int V = c->paper ? 40 : 45, H = c->paper ? 8 : 11, Z = c->paper ? 8 : 11; /* odd dims: their maxima */
    return ldexp(8.0 * (double)(V + H + Z * (c->n_ess + c->n_opt + 1) + (int)c->B), -24);
}
/* float32 against float64 (the same case, the same draws): 1e-4 of the largest magnitude of each kind
 * of output, a fixed bound a user can rely on (f32_tol is at most 1.9e-4 on these shapes, but the
 * float64 side adds no rounding of its own to the float32 error). */
#define F32_VS_F64 1e-4

static int other_copies_f32(void) {
    int n = 0;
    for (int level = BL_CPU_GENERIC + 1; level < BL_CPU_LEVELS; level++) n += bl_kernels_copy_prec(level, 1) != NULL;
    return n;
}

START_TEST(every_float32_copy_pass_matches_the_float32_reference) {
    SKIP_WITHOUT_OTHER_COPIES();
    const bl_kernel_table *ref = bl_kernels_copy_prec(BL_CPU_GENERIC, 1);
    ck_assert_ptr_nonnull(ref);
    ck_assert_int_eq(ref->f32, 1);
    ck_assert_int_eq(other_copies_f32(), other_copies()); /* every float64 copy has its float32 twin */
    int copies = 0;
    double worst = 0.0;
    for (int level = BL_CPU_GENERIC + 1; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *k = bl_kernels_copy_prec(level, 1);
        if (!k) continue;
        ck_assert_int_eq(k->f32, 1);
        copies++;
        bl_rng r;
        bl_rng_seed(&r, 43);
        for (int i = 0; i < n_cases(); i++) {
            const pass_case c = random_case(&r, i);
            char why[512] = "";
            TOL = f32_tol(&c);
            worst = fmax(worst, TOL);
            ck_assert_msg(check_pass(ref, k, &c, why, sizeof why) == 0,
                          "%s float32 pass, case %d (%s dims, %d+%d properties, mode %d, B %zu of %zu, dropout %g, "
                          "grad %d, recon %d, frozen %d; tolerance %.3g): %s",
                          k->name, i, c.paper ? "paper" : "odd", c.n_ess, c.n_opt, c.mode, c.B, c.max_batch, c.dropout,
                          c.grad, c.recon, c.frozen_ae, TOL, why);
        }
    }
    TOL = 1e-12;
    ck_assert_int_eq(copies, other_copies());
    fprintf(stderr, "test_kernels: checked %d float32 copies against the float32 reference (tolerances up to %.3g)\n",
            copies, worst);
}
END_TEST

/* The float32 reference computes what the float64 one does, to F32_VS_F64: the same masks (the same
 * draws), losses, predictions and gradients — except where a case sits on a kink of SELU's derivative
 * (λα to the left of 0, λ to the right: a pre-activation within float's rounding of 0 takes the other
 * side in float32, and that unit's derivative changes by a factor α = 1.67; SmoothL1's at |e| = 1 alike).
 * Such a case shows itself in float64 alone: its parameters moved by ±2⁻¹⁸ relative (each its own sign,
 * so the first layers' pre-activations move too) change the gradients beyond the bound, where a smooth
 * case moves by a few 4e-6. Only a gradient's disagreement is excused that way (losses, predictions and
 * draws are continuous or exact), each skip is named, and at most 1 % of the cases (one of the
 * sanitizers' 60) may be skipped. */
START_TEST(the_float32_reference_agrees_with_float64) {
    const bl_kernel_table *r64 = bl_kernels_copy_prec(BL_CPU_GENERIC, 0), *r32 = bl_kernels_copy_prec(BL_CPU_GENERIC, 1);
    bl_rng r;
    bl_rng_seed(&r, 44);
    TOL = F32_VS_F64;
    int kinks = 0;
    for (int i = 0; i < n_cases(); i++) {
        const pass_case c = random_case(&r, i);
        char why[512] = "", why2[512];
        if (check_pass(r64, r32, &c, why, sizeof why) == 0) continue;
        pass_case up = c, down = c;
        up.jitter = 0x1p-18;
        down.jitter = -0x1p-18;
        const int kink = strncmp(why, "gradient ", 9) == 0 &&
                         ((check_pass(r64, r64, &up, why2, sizeof why2) > 0 && strncmp(why2, "gradient ", 9) == 0) ||
                          (check_pass(r64, r64, &down, why2, sizeof why2) > 0 && strncmp(why2, "gradient ", 9) == 0));
        ck_assert_msg(kink,
                      "float32 against float64, case %d (%s dims, %d+%d properties, mode %d, B %zu, dropout %g, grad %d): %s",
                      i, c.paper ? "paper" : "odd", c.n_ess, c.n_opt, c.mode, c.B, c.dropout, c.grad, why);
        fprintf(stderr, "test_kernels: float32 against float64, case %d skipped, on a kink: %s\n", i, why);
        kinks++;
    }
    ck_assert_msg(kinks <= (n_cases() + 99) / 100, "%d of %d cases on a kink", kinks, n_cases());
    fprintf(stderr, "test_kernels: float32 against float64, %d of %d cases on a kink of a derivative (skipped)\n",
            kinks, n_cases());
    /* and it is float32: the same case differs from float64 beyond float64's rounding */
    TOL = 1e-12;
    pass_case c = {.paper = 1, .n_ess = 3, .n_opt = 2, .mode = 1, .training = 1, .grad = 1, .recon = 1,
                   .dropout = 0.1, .n_rows = 90, .B = 37, .max_batch = 64, .seed = 5};
    char why[512];
    ck_assert_msg(check_pass(r64, r32, &c, why, sizeof why) > 0, "the float32 reference computes in float64");
}
END_TEST

/* Predictions: every float32 copy against the float32 reference, and that against float64. */
START_TEST(every_float32_copy_predicts_like_the_references) {
    enum { K = 6, NS = 203 };
    const bl_kernel_table *r64 = bl_kernels_copy_prec(BL_CPU_GENERIC, 0), *r32 = bl_kernels_copy_prec(BL_CPU_GENERIC, 1);
    for (int dims = 0; dims < 2; dims++) {
        bl_bnet_dims d;
        bl_bnet_dims_default(&d, 2, 1);
        if (dims) d.f_hidden = 12; /* the plain loops */
        bl_rng r;
        bl_rng_seed(&r, 91 + (uint64_t)dims);
        bl_bnet nets[K];
        const bl_bnet *np[K];
        bl_error e;
        for (int k = 0; k < K; k++) {
            ck_assert_int_eq(bl_bnet_init(&nets[k], &d, &r, &e), BL_OK);
            for (size_t i = 0; i < nets[k].P.n; i++) nets[k].P.param[i] *= 1.5;
            nets[k].P.param[nets[k].z2b] = 0.5 + 0.1 * k;
            np[k] = &nets[k];
        }
        static double ctx[K * 8], feat[NS * 3], want[NS], out[NS], F[K][NS * 8];
        for (int k = 0; k < K * 8; k++) ctx[k] = 4.0 * bl_rng_uniform(&r) - 2.0;
        for (int i = 0; i < NS * 3; i++) feat[i] = 4.0 * bl_rng_uniform(&r) - 1.0;
        /* f32_tol's terms for a prediction: f's 16 and 8 sums, z's 8, the median */
        TOL = ldexp(8.0 * (16 + 8 + 8 + 8), -24);
        for (int level = 0; level < BL_CPU_LEVELS; level++) {
            const bl_kernel_table *kt = bl_kernels_copy_prec(level, 1);
            if (!kt) continue;
            const bl_kernel_table *ref = level == BL_CPU_GENERIC ? r64 : r32;
            if (level == BL_CPU_GENERIC) TOL = F32_VS_F64;
            const size_t ns[] = {1, 7, 8, 9, 65, NS};
            for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
                for (size_t i = 0; i < NS; i++) out[i] = -12345.0;
                kt->predict(np[0], ctx, feat, ns[t], out);
                ref->predict(np[0], ctx, feat, ns[t], want);
                const double mag = max_abs(want, ns[t]);
                for (size_t i = 0; i < NS; i++)
                    ck_assert_msg(i < ns[t] ? close(out[i], want[i], mag) : out[i] == -12345.0,
                                  "%s float32 predict, dims %d, n %zu, sample %zu: %.17g, reference %.17g", kt->name,
                                  dims, ns[t], i, out[i], want[i]);
                const double *Fp[K];
                for (int k = 0; k < K; k++) {
                    kt->f_forward(np[k], feat, ns[t], F[k]);
                    Fp[k] = F[k];
                }
                for (int from_f = 0; from_f < 2; from_f++) {
                    if (from_f) kt->predict_median_f(np, K, ctx, Fp, ns[t], out);
                    else kt->predict_median(np, K, ctx, feat, ns[t], out);
                    ref->predict_median(np, K, ctx, feat, ns[t], want);
                    const double m2 = max_abs(want, ns[t]);
                    for (size_t i = 0; i < ns[t]; i++)
                        ck_assert_msg(close(out[i], want[i], m2), "%s float32 median%s, dims %d, n %zu, sample %zu: %.17g, reference %.17g",
                                      kt->name, from_f ? " from f" : "", dims, ns[t], i, out[i], want[i]);
                }
            }
            TOL = ldexp(8.0 * (16 + 8 + 8 + 8), -24);
            /* float32 outputs are floats: the copy really computes in float */
            kt->predict(np[0], ctx, feat, NS, out);
            for (size_t i = 0; i < NS; i++) ck_assert_msg((double)(float)out[i] == out[i], "%s: %.17g is no float", kt->name, out[i]);
        }
        TOL = 1e-12;
        for (int k = 0; k < K; k++) bl_bnet_free(&nets[k]);
    }
}
END_TEST

/* On the paper's dimensions (every network bellamy-train builds) the float32 AVX-512 copy runs AVX2's
 * order of operations on every value (its predictions take 16 samples per vector, its decoder two to four
 * slots per vector, kern/dec16.c, its encoder's per-slot layers two and four, kern/enc16.c, each computed
 * alike), so the two copies compute the same bits: a float32 model, the CPU default, trains and predicts
 * alike on AVX2 and AVX-512 machines (issue 28 item 4). The pass, Adam and the predictions, bit for bit.
 * Other dimensions (a library caller's own) take plain loops the compiler vectorises per instruction set:
 * held to f32_tol above, not to the bit. */
START_TEST(the_float32_vector_copies_agree_bit_for_bit) {
    const bl_kernel_table *a2 = bl_kernels_copy_prec(BL_CPU_AVX2, 1), *a5 = bl_kernels_copy_prec(BL_CPU_AVX512, 1);
    if (!a2 || !a5)
        BL_TEST_SKIP("the float32 avx2 and avx512 copies are not both usable here (processor %s, in use %s)",
                     bl_cpu_level_name(bl_cpu_detected()), bl_kernels()->name);
    bl_rng r;
    bl_rng_seed(&r, 47);
    TOL = 0.0; /* close() then asks for equality */
    int cases = 0;
    for (int i = 0; i < n_cases(); i++) {
        const pass_case c = random_case(&r, i);
        char why[512] = "";
        if (!c.paper) continue;
        cases++;
        ck_assert_msg(check_pass(a2, a5, &c, why, sizeof why) == 0,
                      "float32 pass, case %d (%s dims, %d+%d properties, mode %d, B %zu of %zu, dropout %g, grad %d, "
                      "recon %d, frozen %d): avx512 against avx2: %s",
                      i, c.paper ? "paper" : "odd", c.n_ess, c.n_opt, c.mode, c.B, c.max_batch, c.dropout, c.grad,
                      c.recon, c.frozen_ae, why);
    }
    ck_assert_int_gt(cases, 0);
    TOL = 1e-12;
    const size_t lens[] = {1, 7, 8, 9, 16, 17, 1151};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        const size_t n = lens[li];
        double *P[2], *M[2], *V[2], *g = malloc(n * sizeof(double));
        for (int k = 0; k < 2; k++) P[k] = malloc(n * sizeof(double)), M[k] = calloc(n, sizeof(double)),
                                    V[k] = calloc(n, sizeof(double));
        for (size_t i = 0; i < n; i++) P[0][i] = P[1][i] = (double)(float)bl_rng_normal(&r);
        for (long step = 1; step <= 25; step++) {
            for (size_t i = 0; i < n; i++) g[i] = (double)(float)((step % 5 == 0 ? 1e-6 : 3.0) * bl_rng_normal(&r));
            bl_adam_hyper h = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = li % 2 ? 0.01 : 0.0,
                               .bc1 = 1.0 - pow(0.9, (double)step), .bc2 = 1.0 - pow(0.999, (double)step)};
            a2->adam(n, &h, P[0], g, M[0], V[0]);
            a5->adam(n, &h, P[1], g, M[1], V[1]);
        }
        ck_assert_msg(memcmp(P[0], P[1], n * sizeof(double)) == 0 && memcmp(M[0], M[1], n * sizeof(double)) == 0 &&
                          memcmp(V[0], V[1], n * sizeof(double)) == 0,
                      "float32 adam, n %zu: avx512 differs from avx2", n);
        for (int k = 0; k < 2; k++) free(P[k]), free(M[k]), free(V[k]);
        free(g);
    }
    enum { K = 6, NS = 203 };
    for (int dims = 0; dims < 2; dims++) { /* 2+1 and 0+3 properties */
        bl_bnet_dims d;
        bl_bnet_dims_default(&d, dims ? 0 : 2, dims ? 3 : 1);
        d.f32 = 1;
        bl_bnet nets[K];
        const bl_bnet *np[K];
        bl_error e;
        for (int k = 0; k < K; k++) {
            ck_assert_int_eq(bl_bnet_init(&nets[k], &d, &r, &e), BL_OK);
            for (size_t i = 0; i < nets[k].P.n; i++) nets[k].P.param[i] = (double)(float)(1.5 * nets[k].P.param[i]);
            np[k] = &nets[k];
        }
        static double ctx[K * 8], feat[NS * 3], o2[NS], o5[NS], F2[K][NS * 8], F5[K][NS * 8];
        for (int k = 0; k < K * 8; k++) ctx[k] = 4.0 * bl_rng_uniform(&r) - 2.0;
        for (int i = 0; i < NS * 3; i++) feat[i] = 4.0 * bl_rng_uniform(&r) - 1.0;
        const size_t ns[] = {1, 7, 8, 9, 65, NS};
        for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
            a2->predict(np[0], ctx, feat, ns[t], o2);
            a5->predict(np[0], ctx, feat, ns[t], o5);
            ck_assert_msg(memcmp(o2, o5, ns[t] * sizeof(double)) == 0, "float32 predict, dims %d, n %zu: avx512 differs",
                          dims, ns[t]);
            const double *F2p[K], *F5p[K];
            for (int k = 0; k < K; k++) {
                a2->f_forward(np[k], feat, ns[t], F2[k]);
                a5->f_forward(np[k], feat, ns[t], F5[k]);
                F2p[k] = F2[k], F5p[k] = F5[k];
            }
            a2->predict_median_f(np, K, ctx, F2p, ns[t], o2);
            a5->predict_median_f(np, K, ctx, F5p, ns[t], o5);
            ck_assert_msg(memcmp(o2, o5, ns[t] * sizeof(double)) == 0, "float32 median from f, dims %d, n %zu: avx512 differs",
                          dims, ns[t]);
            a2->predict_median(np, K, ctx, feat, ns[t], o2);
            a5->predict_median(np, K, ctx, feat, ns[t], o5);
            ck_assert_msg(memcmp(o2, o5, ns[t] * sizeof(double)) == 0, "float32 median, dims %d, n %zu: avx512 differs",
                          dims, ns[t]);
        }
        for (int k = 0; k < K; k++) bl_bnet_free(&nets[k]);
    }
}
END_TEST

/* SELU and tanh in float32 within a few float ulp of libm's (double, rounded to float): the working range,
 * every 1999th float of both signs from 1e-30 to 10, and every 13th from 3.5 to 7, just below 1, where
 * float's spacing halves and a tanh's relative error counts twice (a rational tanh measured 5 float ulp
 * there, bench/README.md). tanh never leaves [−1, 1]; NaN stays NaN. */
START_TEST(every_float32_activation_is_within_a_few_float_ulp) {
    enum { NW = 20000 };
    const float ends[2][2] = {{1e-30f, 10.0f}, {3.5f, 7.0f}};
    const uint32_t steps[2] = {1999, 13};
    uint32_t bits[2][2];
    memcpy(bits, ends, sizeof bits);
    const size_t N = NW + 2 * ((bits[0][1] - bits[0][0]) / steps[0] + (bits[1][1] - bits[1][0]) / steps[1] + 2) + 4;
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    ck_assert(x && y);
    size_t n = 0;
    for (int i = 0; i < NW; i++) x[n++] = (double)(float)(-30.0 + 60.0 * i / (NW - 1));
    for (int r = 0; r < 2; r++)
        for (uint32_t b = bits[r][0]; b <= bits[r][1]; b += steps[r]) {
            float f;
            memcpy(&f, &b, sizeof f);
            x[n++] = f;
            x[n++] = -f;
        }
    const double special[] = {INFINITY, -INFINITY, 0.0, -0.0};
    for (size_t i = 0; i < 4; i++) x[n++] = special[i];
    ck_assert(n <= N);
    for (int level = 0; level < BL_CPU_LEVELS; level++) {
        const bl_kernel_table *kt = bl_kernels_copy_prec(level, 1);
        if (!kt) continue;
        for (int fn = 0; fn < 2; fn++) {
            kt->act(fn, x, n, y);
            double worst = 0.0;
            for (size_t i = 0; i < n; i++) {
                const float ref = (float)(fn == 0 ? lselu(x[i]) : tanh(x[i]));
                if (ref == 0.0f) {
                    ck_assert_msg(fabs(y[i]) < 1e-37, "%s fn %d at %g: %g", kt->name, fn, x[i], y[i]);
                    continue;
                }
                if (fn == 1)
                    ck_assert_msg(fabs(y[i]) <= 1.0, "%s float32 tanh at %.9g: %.9g", kt->name, x[i], y[i]);
                const double ulp = (double)(nextafterf(fabsf(ref), INFINITY) - fabsf(ref));
                const double err = isinf(ref) ? (y[i] == ref ? 0.0 : INFINITY) : fabs(y[i] - (double)ref) / ulp;
                worst = err > worst ? err : worst;
                ck_assert_msg(err <= 4.0, "%s float32 fn %d at %.9g: %.9g, libm %.9g (%g float ulp)",
                              kt->name, fn, x[i], y[i], (double)ref, err);
            }
            ck_assert_msg(worst > 0.0, "%s float32 fn %d: no rounding anywhere, so nothing was compared", kt->name, fn);
            double nan_in = NAN, nan_out;
            kt->act(fn, &nan_in, 1, &nan_out);
            ck_assert_msg(isnan(nan_out), "%s float32 fn %d: NaN gives %g", kt->name, fn, nan_out);
        }
    }
    free(x);
    free(y);
}
END_TEST

/* Every copy, in both precisions, runs its training pass with subnormals flushed and gives the caller's
 * floating-point mode back: weights of a subnormal size (the float32 copies round the double weights to
 * float, so theirs are float subnormals) give the pass of the same network with those weights zero, bit
 * for bit. Without the flush f's hidden units and the decoder's would hold subnormal activations, and the
 * gradients of the layers after them subnormal entries where the zero network has none. */
START_TEST(every_copy_pass_flushes_subnormals_and_restores_the_mode) {
#if !defined(__SSE__)
    BL_TEST_SKIP("no MXCSR on this processor: the pass computes subnormals as IEEE 754 says");
#else
    int checked = 0;
    for (int f32 = 0; f32 < 2; f32++)
        for (int level = 0; level < BL_CPU_LEVELS; level++) {
            const bl_kernel_table *kt = bl_kernels_copy_prec(level, f32);
            if (!kt) continue;
            for (int paper = 1; paper >= 0; paper--) {
                bl_rng r;
                bl_rng_seed(&r, 71 + (uint64_t)paper);
                rview f;
                rview_make(&f, &r, paper, 3, 2, 90);
                f.d.f32 = f32;
                const double sub = f32 ? 1e-41 : 4e-310; /* subnormal in the pass's precision */
                bl_bnet net[2];
                bl_bwork *w[2];
                bl_error e;
                double pred[2][64];
                bl_bloss L[2];
                size_t rows[64];
                for (size_t i = 0; i < 64; i++) rows[i] = (size_t)bl_rng_int(&r, f.n_rows);
                for (int k = 0; k < 2; k++) {
                    bl_rng wr;
                    bl_rng_seed(&wr, 5);
                    ck_assert_int_eq(bl_bnet_init(&net[k], &f.d, &wr, &e), BL_OK);
                    const size_t nf0 = (size_t)f.d.f_hidden * (size_t)f.d.f_in;
                    const size_t nh0 = (size_t)f.d.ae_hidden * (size_t)f.d.code;
                    for (size_t i = 0; i < nf0; i++) net[k].P.param[net[k].f0w + i] = k ? 0.0 : sub;
                    for (size_t i = 0; i < (size_t)f.d.f_hidden; i++) net[k].P.param[net[k].f0b + i] = 0.0;
                    for (size_t i = 0; i < nh0; i++) net[k].P.param[net[k].h0w + i] = k ? 0.0 : sub;
                    ck_assert_int_eq(bl_bwork_new(&net[k], &f.v, 64, &w[k], &e), BL_OK);
                    bl_params_zero_grad(&net[k].P);
                    /* the caller's mode: the default, then one with the flush already set */
                    const unsigned int mode = k ? 0x9fc0u : 0x1f80u, saved = _mm_getcsr();
                    bl_bpass ps = {.training = 1, .dropout = 0.0, .want_grad = 1, .recon = 1, .per_row_dropout = 1};
                    _mm_setcsr(mode);
                    const bl_status st = kt->pass(&net[k], &f.v, rows, 64, &ps, w[k], pred[k], &L[k], &e);
                    const unsigned int after = _mm_getcsr() & ~0x3fu; /* less the exception flags */
                    _mm_setcsr(saved); /* before any assertion: a failure must not leave the test's mode behind */
                    ck_assert_int_eq(st, BL_OK);
                    ck_assert_msg(after == mode, "%s%s: the pass left MXCSR %#x, the caller had %#x", kt->name,
                                  f32 ? "/f32" : "", after, mode);
                }
                ck_assert_msg(memcmp(&L[0], &L[1], sizeof L[0]) == 0 && memcmp(pred[0], pred[1], sizeof pred[0]) == 0,
                              "%s%s (%s dims): subnormal weights changed the losses or predictions", kt->name,
                              f32 ? "/f32" : "", paper ? "paper" : "odd");
                for (size_t i = 0; i < net[0].P.n; i++)
                    ck_assert_msg(memcmp(&net[0].P.grad[i], &net[1].P.grad[i], sizeof(double)) == 0,
                                  "%s%s (%s dims): gradient %zu is %g with subnormal weights, %g with zeros", kt->name,
                                  f32 ? "/f32" : "", paper ? "paper" : "odd", i, net[0].P.grad[i], net[1].P.grad[i]);
                for (int k = 0; k < 2; k++) {
                    bl_bwork_free(w[k]);
                    bl_bnet_free(&net[k]);
                }
                rview_free(&f);
                checked++;
            }
        }
    ck_assert_int_ge(checked, 4);
#endif
}
END_TEST

/* A pass that reads the frozen layers back from the pass before (bl_bpass.reuse, fine-tuning's epochs)
 * computes what the full pass computes, bit for bit, in every copy and precision: six epochs of
 * z-only (or f and z) training with Adam between them, on shapes like test_kernels' others. And it does
 * read them back: after a frozen weight is changed behind its back, a reusing pass still gives the old
 * codes' answer (the caller's promise is what keeps them valid), where a full pass sees the change; it
 * recomputes everything after a pass on other rows, with dropout, or with reconstruction. */
static void reuse_epochs(const bl_kernel_table *kt, rview *f, int f32, int freeze_f, const size_t *rows, size_t B,
                         int mode, uint64_t seed, double *out_pred, double *out_param, int reuse) {
    bl_rng wr;
    bl_rng_seed(&wr, seed);
    bl_bnet_dims d = f->d;
    d.f32 = f32;
    bl_bnet net;
    bl_bwork *w;
    bl_error e;
    ck_assert_int_eq(bl_bnet_init(&net, &d, &wr, &e), BL_OK);
    ck_assert_int_eq(bl_params_set_frozen(&net.P, "", 1, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_params_set_frozen(&net.P, "z.", 0, NULL, &e), BL_OK);
    if (freeze_f == 0) ck_assert_int_eq(bl_params_set_frozen(&net.P, "f.", 0, NULL, &e), BL_OK);
    ck_assert_int_eq(bl_bwork_new(&net, &f->v, B, &w, &e), BL_OK);
    bl_adam opt;
    ck_assert_int_eq(bl_adam_init(&opt, 0.01, 0.001, &e), BL_OK);
    for (int ep = 0; ep < 6; ep++) {
        if (freeze_f == 2 && ep == 3) ck_assert_int_eq(bl_params_set_frozen(&net.P, "f.", 0, NULL, &e), BL_OK);
        bl_params_zero_grad(&net.P);
        bl_bpass ps = {.training = 0, .want_grad = 1, .recon = 0, .per_row_dropout = mode, .reuse = reuse && ep > 0};
        bl_bloss L;
        ck_assert_int_eq(kt->pass(&net, &f->v, rows, B, &ps, w, out_pred + (size_t)ep * B, &L, &e), BL_OK);
        out_pred[6 * B + (size_t)ep] = L.total;
        ck_assert_int_eq(bl_adam_step(&opt, &net.P, &e), BL_OK);
    }
    memcpy(out_param, net.P.param, net.P.n * sizeof *out_param);
    bl_bwork_free(w);
    bl_bnet_free(&net);
}

START_TEST(every_copy_reuse_is_the_pass_bit_for_bit) {
    int checked = 0;
    for (int f32 = 0; f32 < 2; f32++)
        for (int level = 0; level < BL_CPU_LEVELS; level++) {
            const bl_kernel_table *kt = bl_kernels_copy_prec(level, f32);
            if (!kt) continue;
            bl_rng r;
            bl_rng_seed(&r, 91);
            for (int i = 0; i < 24; i++) {
                const int paper = i % 4 != 3, np = (int)pick(&r, 1, 8), n_ess = (int)pick(&r, 0, (size_t)np);
                rview f;
                rview_make(&f, &r, paper, n_ess, np - n_ess, pick(&r, 1, 200));
                const size_t B = pick(&r, 1, 130);
                size_t *rows = malloc(B * sizeof *rows);
                for (size_t k = 0; k < B; k++) rows[k] = (size_t)bl_rng_int(&r, f.n_rows);
                const size_t NP = 6 * B + 6, NW = 4096; /* six epochs' predictions and losses; the parameters */
                double *p0 = calloc(NP, sizeof *p0), *p1 = calloc(NP, sizeof *p1);
                double *w0 = calloc(NW, sizeof *w0), *w1 = calloc(NW, sizeof *w1);
                const int mode = i % 3, freeze_f = (i / 4) % 3; /* every f schedule with both kinds of dims */
                reuse_epochs(kt, &f, f32, freeze_f, rows, B, mode, 100 + (uint64_t)i, p0, w0, 0);
                reuse_epochs(kt, &f, f32, freeze_f, rows, B, mode, 100 + (uint64_t)i, p1, w1, 1);
                ck_assert_msg(memcmp(p0, p1, NP * sizeof *p0) == 0 && memcmp(w0, w1, NW * sizeof *w0) == 0,
                              "%s%s, case %d (%s dims, %d+%d properties, mode %d, B %zu, f %s): reusing the frozen "
                              "layers changed the predictions, losses or parameters",
                              kt->name, f32 ? "/f32" : "", i, paper ? "paper" : "odd", n_ess, np - n_ess, mode, B,
                              (const char *[]){"trained", "frozen", "unfrozen at epoch 3"}[freeze_f]);
                free(p0), free(p1), free(w0), free(w1), free(rows);
                rview_free(&f);
                checked++;
            }
            /* it reads back, and only where it may */
            for (int paper = 1; paper >= 0; paper--) {
                rview f;
                rview_make(&f, &r, paper, 2, 1, 40);
                f.d.f32 = f32;
                bl_bnet net;
                bl_bwork *w;
                bl_error e;
                bl_rng wr;
                bl_rng_seed(&wr, 3);
                ck_assert_int_eq(bl_bnet_init(&net, &f.d, &wr, &e), BL_OK);
                ck_assert_int_eq(bl_params_set_frozen(&net.P, "", 1, NULL, &e), BL_OK);
                ck_assert_int_eq(bl_params_set_frozen(&net.P, "z.", 0, NULL, &e), BL_OK);
                ck_assert_int_eq(bl_bwork_new(&net, &f.v, 16, &w, &e), BL_OK);
                size_t rows[5] = {0, 1, 2, 3, 4}, other[5] = {4, 3, 2, 1, 0};
                double a[5], b[5], c5[5];
                bl_bloss L;
                bl_rng dr;
                bl_rng_seed(&dr, 9);
                const bl_bpass full = {.want_grad = 1}, re = {.want_grad = 1, .reuse = 1},
                               drop = {.training = 1, .dropout = 0.2, .want_grad = 1, .rng = &dr, .reuse = 1},
                               rec = {.want_grad = 1, .recon = 1, .reuse = 1},
                               per_row = {.want_grad = 1, .per_row_dropout = 1, .reuse = 1};
                ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, &full, w, a, &L, &e), BL_OK);
                for (size_t k = 0; k < (size_t)f.d.ae_hidden * (size_t)f.d.vec_len; k++) net.P.param[net.g0w + k] *= -1.5;
                for (size_t k = 0; k < (size_t)f.d.f_hidden; k++) net.P.param[net.f0b + k] += 0.5;
                ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, &re, w, b, &L, &e), BL_OK);
                ck_assert_msg(memcmp(a, b, sizeof a) == 0, "%s%s: the reusing pass recomputed the frozen layers",
                              kt->name, f32 ? "/f32" : "");
                ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, &full, w, c5, &L, &e), BL_OK);
                ck_assert_msg(memcmp(a, c5, sizeof a) != 0, "%s%s: changing the frozen weights changed nothing",
                              kt->name, f32 ? "/f32" : "");
                const bl_bpass *breaks[4] = {&drop, &rec, &per_row, NULL};
                for (int q = 0; q < 4; q++) { /* after each, a reusing pass computes everything */
                    if (breaks[q]) ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, breaks[q], w, b, &L, &e), BL_OK);
                    else ck_assert_int_eq(kt->pass(&net, &f.v, other, 5, &full, w, b, &L, &e), BL_OK);
                    for (size_t k = 0; k < (size_t)f.d.f_hidden; k++) net.P.param[net.f0b + k] += 0.25;
                    double want[5], got[5];
                    ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, &re, w, got, &L, &e), BL_OK);
                    ck_assert_int_eq(kt->pass(&net, &f.v, rows, 5, &full, w, want, &L, &e), BL_OK);
                    ck_assert_msg(memcmp(want, got, sizeof want) == 0, "%s%s: a reusing pass after %s read stale layers",
                                  kt->name, f32 ? "/f32" : "",
                                  (const char *[]){"a dropout pass", "a reconstruction pass", "a pass with per-row slots",
                                                   "other rows"}[q]);
                }
                bl_bwork_free(w);
                bl_bnet_free(&net);
                rview_free(&f);
            }
        }
    ck_assert_int_ge(checked, 48);
}
END_TEST

Suite *bl_test_suite(void) {
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("copies");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, the_cap_decides_the_copies);
    tcase_add_test(tc, every_copy_pass_matches_the_reference);
    tcase_add_test(tc, the_checker_catches_broken_copies);
    tcase_add_test(tc, every_copy_predicts_like_the_reference);
    tcase_add_test(tc, every_copy_activation_is_within_a_few_ulp_of_libm);
    tcase_add_test(tc, every_copy_adam_is_bit_identical);
    tcase_add_test(tc, every_float32_copy_pass_matches_the_float32_reference);
    tcase_add_test(tc, the_float32_reference_agrees_with_float64);
    tcase_add_test(tc, every_float32_copy_predicts_like_the_references);
    tcase_add_test(tc, every_float32_activation_is_within_a_few_float_ulp);
    tcase_add_test(tc, the_float32_vector_copies_agree_bit_for_bit);
    tcase_add_test(tc, every_copy_pass_flushes_subnormals_and_restores_the_mode);
    tcase_add_test(tc, every_copy_reuse_is_the_pass_bit_for_bit);
    suite_add_tcase(s, tc);
    return s;
}
