/* ensemble.c — a pre-trained model: the ensemble members' searches (pretrain.c), side by side, then
 * the calibration of its intervals (calib.c). Here, above both: the calibration runs searches of its own
 * (its folds), so the search must not call the calibration.
 */
#include "model/model_internal.h"

#include "common/error.h"

/* Progress of one of several searches, reported as part of the whole: the searches run side by side and
 * their reports are serialised, so one sum over all of them counts each epoch once and never goes back. */
typedef struct member_progress {
    const bl_pretrain_opts *o;
    long  total;
    int   search;                 /* the member whose search reports */
    long  seen;                   /* its own count at its last report */
    long *sum;                    /* every member's epochs so far */
} member_progress;

static int on_member_progress(void *ctx, const bl_progress *p) {
    member_progress *mp = ctx;
    *mp->sum += p->epochs_done_all - mp->seen;
    mp->seen = p->epochs_done_all;
    bl_progress q = *p;
    q.epochs_done_all = *mp->sum;
    q.epochs_planned_all = mp->total;
    q.search = mp->search;
    q.searches_total = mp->o->members;
    return mp->o->progress(mp->o->progress_ctx, &q);
}

bl_status bl_pretrain(const bl_dataset *ds, const char *schema_text, const bl_pretrain_opts *o,
                      bl_model **out, bl_error *err) {
    if (!out) return bl_seterr(err, BL_EINVAL, "bl_pretrain: NULL argument");
    *out = NULL;
    bl_pretrain_opts def;
    if (!o) {
        bl_pretrain_opts_default(&def);
        o = &def;
    }
    bl_status cst = bl_pretrain_opts_check(o, err);
    if (cst != BL_OK) return cst;
    if (ds && ds->settings.numbers == BL_ENC_NUMBERS_BOTH && o->members < 2)
        return bl_seterr(err, BL_EINVAL, "numbers in both encodings need an ensemble of at least 2 members "
                         "(members alternate bits and log magnitude), not %d", o->members);
    if (o->members == 1 || !ds) {
        bl_status s1 = bl_pretrain_top(ds, schema_text, o, 1, out, err);
        if (!s1) bl_model_set_precision(*out, bl_pretrain_precision(o)); /* its search's (pretrain.c) */
        if (!s1 && o->calibrate && (s1 = bl_calib_fit(*out, ds, o, err))) {
            bl_model_free(*out);
            *out = NULL;
            bl_prefixerr(err, "calibrating intervals");
        }
        return s1;
    }
    /* An ensemble: the same search with seeds seed, seed + 1, ...; each winner becomes a member.
     * Numbers in both encodings: members 2i (bits) and 2i + 1 (log magnitude) are the same search,
     * seed + i, on the data encoded their way. */
    const int both = ds->settings.numbers == BL_ENC_NUMBERS_BOTH;
    bl_dataset *enc_ds[2] = {NULL, NULL};
    if (both) {
        bl_status s0 = bl_dataset_with_numbers(ds, BL_ENC_NUMBERS_BINARY, &enc_ds[0], err);
        if (!s0) s0 = bl_dataset_with_numbers(ds, BL_ENC_NUMBERS_LOG, &enc_ds[1], err);
        if (s0) {
            bl_dataset_free(enc_ds[0]);
            return s0;
        }
    }
    /* every member's search at once, rung by rung (each its own seed, its own progress report) */
    bl_pretrain_opts oj[BL_TRAIN_MEMBERS_MAX];
    member_progress mp[BL_TRAIN_MEMBERS_MAX];
    const bl_dataset *dj[BL_TRAIN_MEMBERS_MAX];
    const long total = o->progress ? bl_pretrain_planned_epochs(o) * o->members : 0;
    long sum = 0;
    for (int j = 0; j < o->members; j++) {
        oj[j] = *o;
        oj[j].seed = o->seed + (uint64_t)(both ? j / 2 : j);
        oj[j].item_base = o->item_base + j * o->trials; /* the members' trials spread over the ranks together */
        mp[j] = (member_progress){o, total, j, 0, &sum};
        if (o->progress) {
            oj[j].progress = on_member_progress;
            oj[j].progress_ctx = &mp[j];
        }
        dj[j] = both ? enc_ds[j & 1] : ds;
    }
    bl_model *mj[BL_TRAIN_MEMBERS_MAX] = {NULL}, *m = NULL;
    bl_status st = bl_pretrain_searches(dj, schema_text, oj, o->members, 1, mj, err);
    for (int j = 0; j < o->members && !st; j++) {
        if (!m) {
            m = mj[j];
            mj[j] = NULL;
            if (both) m->enc.numbers = BL_ENC_NUMBERS_BOTH; /* member 0 reads bits, as it was trained */
            continue;
        }
        const bl_model *mc = mj[j];
        st = bl_model_add_members(m, &mc, 1, err);
    }
    for (int j = 0; j < o->members; j++) bl_model_free(mj[j]);
    bl_dataset_free(enc_ds[0]);
    bl_dataset_free(enc_ds[1]);
    if (st) {
        bl_model_free(m);
        return o->members > 1 ? bl_prefixerr(err, "ensemble member search") : st;
    }
    bl_model_set_precision(m, bl_pretrain_precision(o)); /* its members' searches' (pretrain.c); calibrated so */
    if (o->calibrate && (st = bl_calib_fit(m, ds, o, err))) {
        bl_model_free(m);
        return bl_prefixerr(err, "calibrating intervals");
    }
    *out = m;
    return BL_OK;
}
