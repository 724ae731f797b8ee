/* Suite sched, tcase "auto": the default selector (selector_auto.c). A
 * group made without a selector name must place exactly as concentrated
 * while its agents have no device and exactly as frag (fresh state, the
 * group's config) from the moment an agent with GPUs joins. Each case runs
 * the same seeded submissions on schedulers in lockstep: the default one,
 * a reference switched by hand with skv_sched_group_set_selector at the
 * same moment, and, so that the comparison can fail, one that stays
 * concentrated (it must differ from the default somewhere after the
 * switch).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_AUTO_H
#define SKV_TEST_SCHED_AUTO_H

#include "sched_util.h"

#define AU_CFG "ties=index"
enum { AU_DEF, AU_REF, AU_CONC, AU_N };

static skv_sched *au_sched(const char *sel)
{
    skv_sched *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = sel;
    go.selector_config = AU_CFG;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    return s;
}

/* Where each session of one pass went, as text ("id@agent:dev.amt;..."),
 * in result order. */
static void au_digest(const skv_sched_result *r, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_placements && len < n; i++) {
        const skv_sched_placement *p = &r->placements[i];
        for (size_t k = 0; k < p->n_kernels && len < n; k++) {
            const skv_sched_kernel_placement *kp = &p->kernels[k];
            len += (size_t)snprintf(buf + len, n - len, "%s@%s", p->session_id,
                                    kp->agent_id);
            for (size_t d = 0; d < kp->n_devices && len < n; d++)
                len += (size_t)snprintf(buf + len, n - len, ":%u.%lld",
                                        kp->devices[d].device,
                                        (long long)kp->devices[d].amount);
            if (len < n)
                len += (size_t)snprintf(buf + len, n - len, ";");
        }
    }
}

static uint32_t au_rnd(uint64_t *x, uint32_t n)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x % n);
}

/* n rounds of: submit one session of a random shape to every scheduler,
 * pass, compare; every 5th round a random placed session finishes. Returns
 * how many passes the default and the concentrated scheduler placed
 * differently. */
static int au_rounds(skv_sched **s, int from, int n, const char *const *shapes,
                     int nshapes, uint64_t *rng)
{
    static char d[AU_N][4096];
    int differ = 0;
    for (int i = from; i < from + n; i++) {
        char id[16];
        snprintf(id, sizeof(id), "s%d", i);
        const char *shape = shapes[au_rnd(rng, (uint32_t)nshapes)];
        uint32_t fin = au_rnd(rng, (uint32_t)(i + 1));
        for (int k = 0; k < AU_N; k++) {
            submit(s[k], id, shape, NULL, i);
            skv_sched_result *r = pass(s[k], i);
            au_digest(r, d[k], sizeof(d[k]));
            skv_sched_result_free(r);
        }
        ck_assert_msg(strcmp(d[AU_DEF], d[AU_REF]) == 0,
                      "round %d (%s): default placed '%s', reference '%s'", i,
                      shape, d[AU_DEF], d[AU_REF]);
        differ += strcmp(d[AU_DEF], d[AU_CONC]) != 0;
        char fid[16];
        snprintf(fid, sizeof(fid), "s%u", fin);
        for (int k = 0; i % 5 == 4 && k < AU_N; k++) {
            skv_error e = SKV_ERROR_INIT;
            if (state_of(s[k], fid) == SKV_SCHED_SCHEDULED)
                SKV_CK_OK(skv_sched_mark_finished(s[k], fid, false, i, &e),
                          &e);
        }
    }
    return differ;
}

static int64_t au_score(void *st, const skv_sched_agent_view *a,
                        const skv_sched_kernel_view *k)
{
    (void)st, (void)a, (void)k;
    return 0;
}

static const char *const au_cpu_shapes[] = {"cpu=1", "cpu=2,mem=4g",
                                            "cpu=7", "cpu=3,mem=1g"};
static const char *const au_gpu_shapes[] = {
    "cuda.device=1,cpu=1", "cuda.shares=0.5", "cuda.shares=0.25",
    "cuda.device=2,cpu=2", "cuda.device=4", "cpu=2", "cuda.shares=0.75"};

/* CPU-only agents, then one with GPUs joins: concentrated until then,
 * frag (fresh, with the group's config) from then on. */
START_TEST(test_auto_switch)
{
    skv_sched *s[AU_N] = {au_sched(NULL), au_sched("concentrated"),
                          au_sched("concentrated")};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < AU_N; k++)
        for (int a = 0; a < 4; a++) {
            char id[16];
            snprintf(id, sizeof(id), "c%d", a);
            add_agent(s[k], id, "cpu=16,mem=64g", 0);
        }
    au_rounds(s, 0, 40, au_cpu_shapes, 4, &rng);
    skv_error e = SKV_ERROR_INIT;
    for (int k = 0; k < AU_N; k++)
        for (int a = 0; a < 6; a++) {
            char id[16];
            snprintf(id, sizeof(id), "g%d", a);
            add_agent(s[k], id, "cpu=64,mem=512g", a < 3 ? 8 : 4);
            if (k == AU_REF && a == 0) /* the switch, by hand */
                SKV_CK_OK(skv_sched_group_set_selector(s[k], "default", "frag",
                                                       AU_CFG, &e), &e);
        }
    int differ = au_rounds(s, 40, 300, au_gpu_shapes, 7, &rng);
    ck_assert_msg(differ > 0, "frag and concentrated never differed: the "
                  "comparison proves nothing");
    for (int k = 0; k < AU_N; k++)
        skv_sched_free(s[k]);
}
END_TEST

/* set_selector("auto") on a group with GPU agents: frag at once; naming
 * another selector ends it; "auto" is a name no plugin may take; a config
 * frag refuses is refused when the group is made. */
START_TEST(test_auto_names)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s[AU_N] = {au_sched("concentrated"), au_sched("frag"),
                          au_sched("concentrated")};
    uint64_t rng = 7;
    for (int k = 0; k < AU_N; k++) {
        for (int a = 0; a < 5; a++) {
            char id[16];
            snprintf(id, sizeof(id), "g%d", a);
            add_agent(s[k], id, "cpu=64,mem=512g", 4 + a);
        }
    }
    SKV_CK_OK(skv_sched_group_set_selector(s[AU_DEF], "default",
                                           SKV_SCHED_SELECTOR_AUTO, AU_CFG, &e),
              &e);
    ck_assert_int_gt(au_rounds(s, 0, 200, au_gpu_shapes, 7, &rng), 0);
    /* named again: the default one is concentrated like its reference */
    SKV_CK_OK(skv_sched_group_set_selector(s[AU_DEF], "default",
                                           "concentrated", NULL, &e), &e);
    SKV_CK_OK(skv_sched_group_set_selector(s[AU_REF], "default",
                                           "concentrated", NULL, &e), &e);
    au_rounds(s, 200, 100, au_gpu_shapes, 7, &rng);

    skv_sched_selector fake = {SKV_SCHED_SELECTOR_ABI, "auto", NULL, NULL,
                               au_score, NULL, NULL, 0};
    ck_assert_int_eq(skv_sched_register_selector(s[0], &fake, &e), SKV_EEXIST);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector_config = "ties=sideways";
    ck_assert_int_eq(skv_sched_group_add(s[0], "bad", &go, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "auto"));
    go.selector_config = NULL;
    SKV_CK_OK(skv_sched_group_add(s[0], "bad", &go, &e), &e); /* not made */
    ck_assert_int_eq(skv_sched_group_set_selector(s[0], "bad", "auto",
                                                  "ties=sideways", &e),
                     SKV_EINVAL);
    for (int k = 0; k < AU_N; k++)
        skv_sched_free(s[k]);
}
END_TEST

static void sched_auto_tcase(Suite *su)
{
    TCase *tc = tcase_create("auto");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_auto_switch);
    tcase_add_test(tc, test_auto_names);
    suite_add_tcase(su, tc);
}

#endif
