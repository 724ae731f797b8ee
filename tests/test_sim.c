/* Suite "sim": trace parsing, the openb replay, the FGD-paper policies and
 * the fragmentation-aware selector, the job-trace replay. Small synthetic
 * clusters with hand-computed results; the full experiment is a benchmark.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/sched.h"
#include "sokovan/sim.h"
#include "sim_trace_modes.h"

static const char *NODES1 = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n";

/* ---- parsing ------------------------------------------------------------ */

START_TEST(test_openb_parse_ok)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = NULL;
    const char *nodes = "sn,cpu_milli,memory_mib,gpu,model\r\n"
                        "a,96000,393216,8,G2\r\n\r\nb,8000,32768,1,V100\r\n";
    const char *pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
                       "p0,12000,16384,1,1000,,LS\n"
                       "p1,6000,12288,1,460,G2|V100,LS\n"
                       "p2,1000,100,0,0,,BE\n"
                       "p3,1000,100,2,1500,XX,BE\n";
    SKV_CK_OK(skv_sim_openb_parse(&w, nodes, pods, &e), &e);
    ck_assert_uint_eq(skv_sim_openb_node_count(w), 2);
    ck_assert_uint_eq(skv_sim_openb_pod_count(w), 4);
    ck_assert_int_eq(skv_sim_openb_capacity(w), 9000);
    skv_sim_openb_free(w);
    /* only the five columns, in another order (multigpu20 has no gpu_spec) */
    pods = "gpu_milli,num_gpu,memory_mib,cpu_milli,name\n500,1,10,10,x\n";
    SKV_CK_OK(skv_sim_openb_parse(&w, nodes, pods, &e), &e);
    ck_assert_uint_eq(skv_sim_openb_pod_count(w), 1);
    skv_sim_openb_free(w);
    SKV_CK_OK(skv_sim_openb_parse(&w, nodes, NULL, &e), &e);
    ck_assert_uint_eq(skv_sim_openb_pod_count(w), 0);
    skv_sim_openb_free(w);
    skv_sim_openb_free(NULL);
}
END_TEST

static void expect_bad(const char *nodes, const char *pods, const char *needle)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = (skv_sim_openb *)0x1;
    ck_assert_int_eq(skv_sim_openb_parse(&w, nodes, pods, &e), SKV_EINVAL);
    ck_assert_ptr_eq(w, (skv_sim_openb *)0x1);   /* untouched on failure */
    ck_assert_msg(strstr(e.message, needle), "message '%s' lacks '%s'",
                  e.message, needle);
}

START_TEST(test_openb_parse_bad)
{
    const char *hdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
    char buf[256];
    snprintf(buf, sizeof(buf), "%sp0,1,1,1,100\np1,abc,1,1,100\n", hdr);
    expect_bad(NODES1, buf, "pod list:3: column 'cpu_milli': 'abc'");
    snprintf(buf, sizeof(buf), "%sp0,1,1,2,500\n", hdr);
    expect_bad(NODES1, buf, "needs num_gpu 1");
    snprintf(buf, sizeof(buf), "%sp0,1,1\n", hdr);
    expect_bad(NODES1, buf, "column 'num_gpu' is missing");
    snprintf(buf, sizeof(buf), "%sp0,-5,1,1,100\n", hdr);
    expect_bad(NODES1, buf, "'-5'");
    expect_bad(NODES1, "name,cpu_milli\n", "no column 'memory_mib'");
    expect_bad(NODES1, hdr, "no pods");
    expect_bad(NODES1, "", "empty");
    expect_bad("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,99,X\n", hdr,
               "node list:2: column 'gpu'");
    expect_bad("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,0,\n",
               "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\n",
               "no GPUs");
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = NULL;
    ck_assert_int_eq(skv_sim_openb_load(&w, "/nonexistent/n.csv", "/x", &e),
                     SKV_ESYS);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/n.csv"));
    ck_assert_int_eq(skv_sim_openb_parse(NULL, "", "", &e), SKV_EINVAL);
}
END_TEST

START_TEST(test_jobs_parse)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_jobs *j = NULL;
    SKV_CK_OK(skv_sim_jobs_parse(&j, "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                     "2017-10-09 07:01:55,66.0,1,66.0,a\n"
                                     "2017-10-09 07:00:41,64.5,2,129,b\n", &e), &e);
    ck_assert_uint_eq(skv_sim_jobs_count(j), 2);
    skv_sim_jobs_free(j);
    SKV_CK_OK(skv_sim_jobs_parse(&j, "submit,duration,gpus\n0,1,1\n", &e), &e);
    skv_sim_jobs_free(j);
    skv_sim_jobs_free(NULL);
    j = (skv_sim_jobs *)0x1;
    ck_assert_int_eq(skv_sim_jobs_parse(&j, "timestamp,duration,num_gpus\n"
                                            "2017-13-01 00:00:00,1,1\n", &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "job trace:2"));
    ck_assert_int_eq(skv_sim_jobs_parse(&j, "timestamp,duration,num_gpus\n"
                                            "5,x,1\n", &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "'duration'"));
    ck_assert_int_eq(skv_sim_jobs_parse(&j, "timestamp,num_gpus\n5,1\n", &e),
                     SKV_EINVAL);
    ck_assert_ptr_eq(j, (skv_sim_jobs *)0x1);
}
END_TEST

/* ---- openb replay -------------------------------------------------------- */

static skv_sim_openb_result *replay(const char *nodes, const char *pods,
                                    const char *policy, uint64_t seed)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = NULL;
    SKV_CK_OK(skv_sim_openb_parse(&w, nodes, pods, &e), &e);
    skv_sim_openb_options o = SKV_SIM_OPENB_OPTIONS_INIT;
    o.policy = policy;
    o.seed = seed;
    skv_sim_openb_result *r = NULL;
    SKV_CK_OK(skv_sim_openb_run(&r, w, &o, &e), &e);
    skv_sim_openb_free(w);
    return r;
}

START_TEST(test_openb_whole_gpus)
{
    /* 2 GPUs, 1-GPU tasks: demand 1000, 2000, 3000 (> 130%): the third
     * is dropped. Columns: 50 -> 50, 100 -> 100, 150 -> 100. */
    const char *pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,1,1000\n";
    for (size_t i = 0; i < skv_sim_policy_count(); i++) {
        skv_sim_openb_result *r = replay(NODES1, pods, skv_sim_policy_name(i), 7);
        ck_assert_uint_eq(r->n_events, 3);
        ck_assert_uint_eq(r->n_placed, 2);
        ck_assert_uint_eq(r->n_dropped, 1);
        ck_assert_int_eq(r->arrived[2], 3000);
        ck_assert_int_eq(r->allocated[2], 2000);
        double v;
        SKV_CK_OK(skv_sim_openb_column(&v, r, 50), NULL);
        ck_assert_double_eq_tol(v, 50.0, 1e-9);
        SKV_CK_OK(skv_sim_openb_column(&v, r, 100), NULL);
        ck_assert_double_eq_tol(v, 100.0, 1e-9);
        SKV_CK_OK(skv_sim_openb_column(&v, r, 150), NULL);
        ck_assert_double_eq_tol(v, 100.0, 1e-9);
        ck_assert_int_eq(skv_sim_openb_column(&v, r, 120), SKV_ENOENT);
        skv_sim_openb_result_free(r);
    }
}
END_TEST

START_TEST(test_openb_sharing_and_cpu)
{
    /* one GPU, 0.6-GPU tasks: 600 fits, 1200 and 1800 do not. */
    const char *nodes = "sn,cpu_milli,memory_mib,gpu,model\nn,8000,8192,1,A\n";
    skv_sim_openb_result *r = replay(nodes, "name,cpu_milli,memory_mib,num_gpu,"
                                     "gpu_milli\np,100,10,1,600\n", "frag", 1);
    ck_assert_uint_eq(r->n_events, 3);
    ck_assert_uint_eq(r->n_placed, 1);
    double v;
    SKV_CK_OK(skv_sim_openb_column(&v, r, 120), NULL);
    ck_assert_double_eq_tol(v, 60.0, 1e-9);
    skv_sim_openb_result_free(r);
    /* CPU binds: 8 cores, 0.1-GPU tasks of 3 cores: two fit, not three */
    r = replay(nodes, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                      "p,3000,10,1,100\n", "bestfit", 1);
    ck_assert_uint_eq(r->n_placed, 2);
    ck_assert_int_eq(r->allocated[r->n_events - 1], 200);
    skv_sim_openb_result_free(r);
    /* a model constraint nobody meets: everything dropped */
    r = replay(nodes, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                      "p,1,1,1,500,B\n", "fgd", 1);
    ck_assert_uint_eq(r->n_placed, 0);
    skv_sim_openb_result_free(r);
}
END_TEST

static int same_curve(const skv_sim_openb_result *a, const skv_sim_openb_result *b)
{
    return a->n_events == b->n_events &&
           memcmp(a->arrived, b->arrived, a->n_events * sizeof(skv_qty)) == 0 &&
           memcmp(a->allocated, b->allocated, a->n_events * sizeof(skv_qty)) == 0;
}

START_TEST(test_openb_deterministic)
{
    const char *nodes = "sn,cpu_milli,memory_mib,gpu,model\n"
                        "a,32000,65536,4,X\nb,16000,65536,2,Y\nc,64000,65536,8,X\n";
    const char *pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                       "p0,4000,1024,1,1000,\np1,2000,1024,1,300,\np2,2000,1024,1,700,X\n"
                       "p3,8000,1024,2,1000,\np4,1000,1024,0,0,\np5,2000,512,1,450,Y\n";
    const char *pols[] = {"random", "fgd", "frag", "gpupacking"};
    int differs = 0;
    for (size_t p = 0; p < 4; p++) {
        skv_sim_openb_result *a = replay(nodes, pods, pols[p], 42);
        skv_sim_openb_result *b = replay(nodes, pods, pols[p], 42);
        skv_sim_openb_result *c = replay(nodes, pods, pols[p], 43);
        ck_assert_msg(same_curve(a, b), "%s: same seed, different curve", pols[p]);
        differs += !same_curve(a, c);
        skv_sim_openb_result_free(a);
        skv_sim_openb_result_free(b);
        skv_sim_openb_result_free(c);
    }
    ck_assert_int_gt(differs, 0);   /* the seed does change the shuffle */
}
END_TEST

START_TEST(test_openb_bad_args)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = NULL;
    SKV_CK_OK(skv_sim_openb_parse(&w, NODES1, "name,cpu_milli,memory_mib,num_gpu,"
                                  "gpu_milli\np,1,1,1,1000\n", &e), &e);
    skv_sim_openb_options o = SKV_SIM_OPENB_OPTIONS_INIT;
    skv_sim_openb_result *r = NULL;
    o.policy = "no-such-policy";
    ck_assert_int_eq(skv_sim_openb_run(&r, w, &o, &e), SKV_ENOENT);
    o.policy = "frag";
    o.policy_config = "mu=-1";
    ck_assert_int_eq(skv_sim_openb_run(&r, w, &o, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "mu"));
    o.policy_config = "nonsense";
    ck_assert_int_eq(skv_sim_openb_run(&r, w, &o, &e), SKV_EINVAL);
    o.policy_config = NULL;
    o.version = 99;
    ck_assert_int_eq(skv_sim_openb_run(&r, w, &o, &e), SKV_EVERSION);
    ck_assert_ptr_null(r);
    skv_sim_openb_free(w);
    double v;
    ck_assert_int_eq(skv_sim_openb_column(&v, NULL, 100), SKV_EINVAL);
}
END_TEST

/* ---- workload variants (the paper's recipe) ------------------------------ */

/* 2 nodes; 10 CPU-only pods, 20 halves, 10 whole GPUs, 2 four-GPU pods,
 * 2 whole GPUs constrained to T4 (GPU demand 10 + 10 + 8 + 2 = 30 GPUs). */
static const char *VARY_NODES = "sn,cpu_milli,memory_mib,gpu,model\n"
                                "a,96000,393216,8,G2\nb,64000,262144,2,T4\n";

static skv_sim_openb *vary_base(void)
{
    char pods[4096];
    size_t off = (size_t)snprintf(pods, sizeof(pods),
                                  "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    int n = 0;
    for (int i = 0; i < 10; i++)
        off += (size_t)snprintf(pods + off, sizeof(pods) - off, "c%d,%d,1024,0,0,\n", n++, 1000 + i);
    for (int i = 0; i < 20; i++)
        off += (size_t)snprintf(pods + off, sizeof(pods) - off, "s%d,2000,1024,1,500,\n", n++);
    for (int i = 0; i < 10; i++)
        off += (size_t)snprintf(pods + off, sizeof(pods) - off, "w%d,4000,1024,1,1000,\n", n++);
    for (int i = 0; i < 2; i++)
        off += (size_t)snprintf(pods + off, sizeof(pods) - off, "m%d,8000,1024,4,1000,\n", n++);
    for (int i = 0; i < 2; i++)
        off += (size_t)snprintf(pods + off, sizeof(pods) - off, "t%d,4000,1024,1,1000,T4\n", n++);
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *w = NULL;
    SKV_CK_OK(skv_sim_openb_parse(&w, VARY_NODES, pods, &e), &e);
    return w;
}

typedef struct mix {
    size_t pods, cpu_only, gpu_pods, constrained;
    double demand, share_demand, multi_demand;
} mix;

/* Write w, read the file back (load and by hand): the mix it holds. */
static mix vary_mix(const skv_sim_openb *w)
{
    char path[] = "/tmp/skv-vary-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sim_openb_write_pods(w, path, &e), &e);
    /* it loads back to as many pods, the same GPU demand */
    char npath[] = "/tmp/skv-vary-nodes-XXXXXX";
    fd = mkstemp(npath);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, VARY_NODES, strlen(VARY_NODES)), (ssize_t)strlen(VARY_NODES));
    close(fd);
    skv_sim_openb *back = NULL;
    SKV_CK_OK(skv_sim_openb_load(&back, npath, path, &e), &e);
    unlink(npath);
    ck_assert_uint_eq(skv_sim_openb_pod_count(back), skv_sim_openb_pod_count(w));
    skv_sim_openb_free(back);
    mix m = {0};
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));   /* header */
    while (fgets(line, sizeof(line), f)) {
        long cpu, mib, ngpu, milli;
        char spec[256] = "";
        int got = sscanf(line, "%*[^,],%ld,%ld,%ld,%ld,%255[^\n]", &cpu, &mib,
                         &ngpu, &milli, spec);
        ck_assert_int_ge(got, 4);
        m.pods++;
        m.cpu_only += ngpu == 0;
        m.gpu_pods += ngpu > 0;
        m.constrained += ngpu > 0 && spec[0];
        m.demand += (double)(ngpu * milli);
        m.share_demand += ngpu == 1 && milli < 1000 ? (double)milli : 0;
        m.multi_demand += ngpu > 1 ? (double)(ngpu * milli) : 0;
    }
    fclose(f);
    unlink(path);
    return m;
}

static skv_sim_openb *varied(const skv_sim_openb *w, double cpu, double share,
                             double multi, double spec, uint64_t seed)
{
    skv_sim_openb_vary_options o = SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    o.cpu_share = cpu;
    o.share_demand = share;
    o.multi_demand = multi;
    o.spec_share = spec;
    o.seed = seed;
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *v = NULL;
    SKV_CK_OK(skv_sim_openb_vary(&v, w, &o, &e), &e);
    return v;
}

START_TEST(test_openb_vary)
{
    skv_sim_openb *w = vary_base();
    mix b = vary_mix(w);
    ck_assert_uint_eq(b.pods, 44);
    ck_assert_uint_eq(b.constrained, 2);
    /* nothing asked: the same list */
    skv_sim_openb *v = varied(w, -1, -1, -1, -1, 1);
    mix m = vary_mix(v);
    ck_assert(m.pods == b.pods && m.demand == b.demand && m.constrained == 2);
    skv_sim_openb_free(v);
    /* share: as many GPU pods, the same CPU-only pods, sharing pods 80 %
     * of the GPU demand give or take one pod */
    v = varied(w, -1, 0.8, -1, -1, 7);
    m = vary_mix(v);
    ck_assert_uint_eq(m.gpu_pods, b.gpu_pods);
    ck_assert_uint_eq(m.cpu_only, b.cpu_only);
    ck_assert_msg(m.share_demand / m.demand > 0.8 - 4000 / m.demand &&
                  m.share_demand / m.demand < 0.8 + 4000 / m.demand,
                  "share %g", m.share_demand / m.demand);
    skv_sim_openb_free(v);
    v = varied(w, -1, 1, -1, -1, 7);              /* every GPU pod shares */
    m = vary_mix(v);
    ck_assert(m.share_demand == m.demand && m.gpu_pods == b.gpu_pods);
    skv_sim_openb_free(v);
    /* multi: four-GPU pods added until they are half the GPU demand; none
     * with 0 */
    v = varied(w, -1, -1, 0.5, -1, 7);
    m = vary_mix(v);
    ck_assert(m.multi_demand / m.demand >= 0.5);
    ck_assert(m.multi_demand / m.demand < 0.5 + 4000 / m.demand);
    ck_assert_uint_eq(m.pods - b.pods, (size_t)(m.multi_demand - b.multi_demand) / 4000);
    skv_sim_openb_free(v);
    v = varied(w, -1, -1, 0, -1, 7);
    m = vary_mix(v);
    ck_assert(m.multi_demand == 0 && m.pods == b.pods - 2);
    skv_sim_openb_free(v);
    /* spec: half the GPU pods constrained (the two of the list count);
     * the drawn constraints name models of the cluster */
    v = varied(w, -1, -1, -1, 0.5, 7);
    m = vary_mix(v);
    ck_assert_uint_eq(m.constrained, 17);
    skv_sim_openb_free(v);
    v = varied(w, -1, -1, -1, 0, 7);
    ck_assert_uint_eq(vary_mix(v).constrained, 0);
    skv_sim_openb_free(v);
    /* cpu: CPU-only pods a quarter of all pods (34 others: 11), or 1 */
    v = varied(w, 0.25, -1, -1, -1, 7);
    m = vary_mix(v);
    ck_assert_uint_eq(m.cpu_only, 11);
    ck_assert_uint_eq(m.pods - m.cpu_only, b.pods - b.cpu_only);
    skv_sim_openb_free(v);
    v = varied(w, 0.03, -1, -1, -1, 7);
    ck_assert_uint_eq(vary_mix(v).cpu_only, 1);
    skv_sim_openb_free(v);
    /* the same seed draws the same list; the variant replays */
    skv_sim_openb *v1 = varied(w, 0.2, -1, 0.3, 0.2, 11);
    skv_sim_openb *v2 = varied(w, 0.2, -1, 0.3, 0.2, 11);
    mix m1 = vary_mix(v1), m2 = vary_mix(v2);
    ck_assert(memcmp(&m1, &m2, sizeof(m1)) == 0);
    ck_assert_uint_eq(skv_sim_openb_node_count(v1), 2);
    ck_assert_int_eq(skv_sim_openb_capacity(v1), 10000);
    skv_sim_openb_options o = SKV_SIM_OPENB_OPTIONS_INIT;
    o.policy = "fgd";
    o.seed = 3;
    skv_sim_openb_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sim_openb_run(&r, v1, &o, &e), &e);
    ck_assert_uint_gt(r->n_placed, 0);
    skv_sim_openb_result_free(r);
    skv_sim_openb_free(v1);
    skv_sim_openb_free(v2);
    skv_sim_openb_free(w);
}
END_TEST

START_TEST(test_openb_vary_bad)
{
    skv_sim_openb *w = vary_base(), *v = (skv_sim_openb *)0x1;
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb_vary_options o = SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    ck_assert_int_eq(skv_sim_openb_vary(NULL, w, &o, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sim_openb_vary(&v, NULL, &o, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sim_openb_vary(&v, w, NULL, &e), SKV_EINVAL);
    o.version = 99;
    ck_assert_int_eq(skv_sim_openb_vary(&v, w, &o, &e), SKV_EVERSION);
    const double bad[][4] = {{1, -1, -1, -1}, {-1, 1.5, -1, -1}, {-1, -1, 1, -1},
                             {-1, -1, -1, 2}, {NAN, -1, -1, -1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = (skv_sim_openb_vary_options)SKV_SIM_OPENB_VARY_OPTIONS_INIT;
        o.cpu_share = bad[i][0];
        o.share_demand = bad[i][1];
        o.multi_demand = bad[i][2];
        o.spec_share = bad[i][3];
        ck_assert_int_eq(skv_sim_openb_vary(&v, w, &o, &e), SKV_EINVAL);
        ck_assert_ptr_eq(v, (skv_sim_openb *)0x1);
    }
    skv_sim_openb_free(w);
    /* a list without sharing pods cannot be made 50 % sharing */
    SKV_CK_OK(skv_sim_openb_parse(&w, NODES1, "name,cpu_milli,memory_mib,num_gpu,"
                                  "gpu_milli\np,1000,10,1,1000\n", &e), &e);
    o = (skv_sim_openb_vary_options)SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    o.share_demand = 0.5;
    ck_assert_int_eq(skv_sim_openb_vary(&v, w, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "GPU-sharing"), "%s", e.message);
    o = (skv_sim_openb_vary_options)SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    o.cpu_share = 0.5;
    ck_assert_int_eq(skv_sim_openb_vary(&v, w, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "CPU-only"), "%s", e.message);
    ck_assert_ptr_eq(v, (skv_sim_openb *)0x1);
    /* writing where no file can be: SKV_EIO, nothing left behind */
    ck_assert_int_eq(skv_sim_openb_write_pods(w, "/nonexistent-dir/x.csv", &e), SKV_EIO);
    ck_assert_int_eq(skv_sim_openb_write_pods(NULL, "/tmp/x", &e), SKV_EINVAL);
    skv_sim_openb_free(w);
}
END_TEST

/* The program: openb-gen writes a variant, openb --vary replays one, bad
 * specs are refused with exit status 2. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_openb_gen_cli)
{
    char bin[512], cmd[2048], out[4096];
    snprintf(bin, sizeof(bin), "%s/bin/sokovan-sim", skv_test_build_dir());
    if (access(bin, X_OK) != 0) {
        printf("SKIP test_openb_gen_cli: %s not built\n", bin);
        return;
    }
    char dir[] = "/tmp/skv-gen-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char nodes[600], pods[600], gen[600];
    snprintf(nodes, sizeof(nodes), "%s/nodes.csv", dir);
    snprintf(pods, sizeof(pods), "%s/pods.csv", dir);
    snprintf(gen, sizeof(gen), "%s/gen.csv", dir);
    write_text(nodes, VARY_NODES);
    write_text(pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                     "c,1000,10,0,0\ns,1000,10,1,500\nw,1000,10,1,1000\n"
                     "m,1000,10,4,1000\n");
    snprintf(cmd, sizeof(cmd), "%s openb-gen --nodes %s --pods %s --vary share=1,cpu=0.5 "
             "--seed 3 --out %s 2>&1; echo rc=$?; cat %s", bin, nodes, pods, gen, gen);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "rc=0"), "%s", out);
    /* 3 GPU pods, all sharing; CPU-only pods half of all: 3 */
    ck_assert_msg(strstr(out, "6 pods ->"), "%s", out);
    ck_assert_msg(!strstr(out, ",1,1000,") && !strstr(out, ",4,1000,"), "%s", out);
    const char *bad[] = {"share=2", "cpu=x", "bogus=0.1", "share", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "%s openb-gen --nodes %s --pods %s --vary '%s' "
                 "--out %s 2>&1; echo rc=$?", bin, nodes, pods, bad[i], gen);
        skv_test_sh_output(cmd, out, sizeof(out));
        ck_assert_msg(strstr(out, "rc=2"), "'%s': %s", bad[i], out);
    }
    /* a list that cannot supply the share: the library's error, status 1 */
    write_text(pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nw,1000,10,1,1000\n");
    snprintf(cmd, sizeof(cmd), "%s openb-gen --nodes %s --pods %s --vary share=0.5 "
             "--out %s 2>&1; echo rc=$?", bin, nodes, pods, gen);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "GPU-sharing") && strstr(out, "rc=1"), "%s", out);
    /* the replay names the variant and runs it */
    snprintf(cmd, sizeof(cmd), "%s openb --nodes %s --pods %s --vary gen-x:cpu=0.5 "
             "--policy fgd,frag --seeds 1 2>&1; echo rc=$?", bin, nodes, gen);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "workload gen-x") && strstr(out, "rc=0"), "%s", out);
    snprintf(cmd, sizeof(cmd), "%s openb --nodes %s --pods %s --vary gen-x:multi=1 "
             "--policy fgd --seeds 1 2>&1; echo rc=$?", bin, nodes, gen);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "multi=1 is not in") && strstr(out, "rc=1"), "%s", out);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- policies on hand-checked cases --------------------------------------- */

static skv_sched *two_agents(const char *policy, const char *config, int gpus)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    for (size_t i = 0; i < skv_sim_policy_count(); i++) {
        int rc = skv_sched_register_selector(s, skv_sim_policy(skv_sim_policy_name(i)), &e);
        ck_assert(rc == 0 || rc == SKV_EEXIST);
    }
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = policy;
    go.selector_config = config;
    SKV_CK_OK(skv_sched_group_add(s, "g", &go, &e), &e);
    skv_slots *cap = NULL;
    SKV_CK_OK(skv_slots_parse(&cap, "cpu=64,mem=256g", NULL, &e), &e);
    skv_sched_device_spec dev[8];
    for (int i = 0; i < 8; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 1000};
    const char *ids[2] = {"A", "B"};
    for (int i = 0; i < 2; i++) {
        skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
        a.id = ids[i];
        a.resource_group = "g";
        a.gpu_model = "X";
        a.capacity = cap;
        a.n_devices = (size_t)gpus;
        a.devices = dev;
        SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    }
    skv_slots_free(cap);
    return s;
}

/* Submit and pass; the agent the kernel went to ("" when not placed). */
static const char *place(skv_sched *s, const char *id, const char *req,
                         const char *on)
{
    static char agent[64];
    skv_error e = SKV_ERROR_INIT;
    skv_slots *r = NULL;
    SKV_CK_OK(skv_slots_parse(&r, req, NULL, &e), &e);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec ss = SKV_SCHED_SESSION_SPEC_INIT;
    ss.id = id;
    ss.resource_group = "g";
    ss.n_kernels = 1;
    ss.kernels = &k;
    ss.n_designated = on ? 1 : 0;
    ss.designated_agents = &on;
    SKV_CK_OK(skv_sched_submit(s, &ss, 1, &e), &e);
    skv_slots_free(r);
    skv_sched_result *res = NULL;
    SKV_CK_OK(skv_sched_pass(&res, s, 1, NULL, &e), &e);
    agent[0] = '\0';
    if (res->n_placements == 1)
        snprintf(agent, sizeof(agent), "%s", res->placements[0].kernels[0].agent_id);
    skv_sched_result_free(res);
    SKV_CK_OK(skv_sched_check(s, &e), &e);
    return agent;
}

/* A holds a 0.5 share on one GPU; where does a 0.25 share go? */
static const char *quarter_after_half(const char *policy, const char *config)
{
    skv_sched *s = two_agents(policy, config, 8);
    ck_assert_str_eq(place(s, "pre", "cpu=1,mem=1g,cuda.shares=0.5", "A"), "A");
    static char got[64];
    snprintf(got, sizeof(got), "%s", place(s, "q", "cpu=1,mem=1g,cuda.shares=0.25", NULL));
    skv_sched_free(s);
    return got;
}

START_TEST(test_policy_packing_family)
{
    /* packers put the quarter next to the half on A's partly used GPU */
    ck_assert_str_eq(quarter_after_half("gpupacking", "seed=3"), "A");
    ck_assert_str_eq(quarter_after_half("bestfit", "seed=3"), "A");
    ck_assert_str_eq(quarter_after_half("dotprod", "seed=3"), "A");
    /* clustering: A hosts a 0.5, B a 0.25: each new task joins its kind */
    skv_sched *s = two_agents("gpuclustering", NULL, 8);
    ck_assert_str_eq(place(s, "pre", "cpu=1,cuda.shares=0.5", "A"), "A");
    ck_assert_str_eq(place(s, "pre2", "cpu=1,cuda.shares=0.25", "B"), "B");
    ck_assert_str_eq(place(s, "q", "cpu=1,cuda.shares=0.25", NULL), "B");
    ck_assert_str_eq(place(s, "h", "cpu=1,cuda.shares=0.5", NULL), "A");
    /* a share never straddles GPUs: with 0.3 left on each of A's GPUs
     * (0.7 used) a 0.5 share does not fit A at all */
    skv_sched_free(s);
    s = two_agents("bestfit", NULL, 2);
    ck_assert_str_eq(place(s, "a0", "cpu=1,cuda.shares=0.7", "A"), "A");
    ck_assert_str_eq(place(s, "a1", "cpu=1,cuda.shares=0.7", "A"), "A");
    ck_assert_str_eq(place(s, "b0", "cpu=1,cuda.device=2", "B"), "B");
    ck_assert_str_eq(place(s, "x", "cpu=1,cuda.shares=0.5", NULL), "");
    skv_sched_free(s);
}
END_TEST

START_TEST(test_policy_fgd_and_frag)
{
    /* Workload: only 0.5-GPU tasks. On A the quarter leaves 0.25 free on
     * that GPU, a fragment to every 0.5 task (+250); on B the GPU keeps
     * 0.75 >= 0.5 (+0). Both fragmentation policies choose B. */
    const char *wl = "seed=1;type=1:0:0:1:500:*";
    ck_assert_str_eq(quarter_after_half("fgd", wl), "B");
    ck_assert_str_eq(quarter_after_half("frag", wl), "B");
}
END_TEST

/* A holds 0.3 of a GPU, B 0.5; a quarter follows. Workload: 0.5 tasks
 * (1 in 25) and 0.2 tasks. On A the GPU keeps 0.45 (a fragment to the 0.5
 * tasks: +18 milli-GPU), on B 0.25 (+10): the exact gradient picks B. The
 * published FGD's integer score floor(100 sigmoid(-delta/1000)) is 49 for
 * both, and its Kubernetes fork gives ties to the first node: A. */
static const char *quarter_fgd(const char *config)
{
    skv_sched *s = two_agents("fgd", config, 8);
    ck_assert_str_eq(place(s, "a", "cpu=1,mem=1g,cuda.shares=0.3", "A"), "A");
    ck_assert_str_eq(place(s, "b", "cpu=1,mem=1g,cuda.shares=0.5", "B"), "B");
    static char got[64];
    snprintf(got, sizeof(got), "%s", place(s, "q", "cpu=1,mem=1g,cuda.shares=0.25", NULL));
    skv_sched_free(s);
    return got;
}

START_TEST(test_fgd_published_score)
{
    const char *wl = "type=1:0:0:1:500:*;type=24:0:0:1:200:*;typical=0";
    char cfg[160];
    ck_assert_str_eq(quarter_fgd(wl), "A");            /* 49 = 49: first */
    snprintf(cfg, sizeof(cfg), "%s;levels=0", wl);
    ck_assert_str_eq(quarter_fgd(cfg), "B");           /* 10 < 18 */
    /* equal scores go to the first node whatever the seed, unless asked */
    bool seen_b = false;
    for (int seed = 1; seed <= 16; seed++) {
        snprintf(cfg, sizeof(cfg), "seed=%d;type=1:0:0:1:500:*", seed);
        skv_sched *s = two_agents("fgd", cfg, 8);
        ck_assert_str_eq(place(s, "q", "cpu=1,cuda.shares=0.25", NULL), "A");
        skv_sched_free(s);
        snprintf(cfg, sizeof(cfg), "seed=%d;ties=random;type=1:0:0:1:500:*", seed);
        s = two_agents("fgd", cfg, 8);
        seen_b |= strcmp(place(s, "q", "cpu=1,cuda.shares=0.25", NULL), "B") == 0;
        skv_sched_free(s);
    }
    ck_assert(seen_b);
    /* typical=PCT keeps the popular types: with 95 % the 0.5 tasks (4 %)
     * are not in the mix, nothing is a fragment, the tie goes to A even
     * with the exact gradient */
    ck_assert_str_eq(quarter_fgd("type=1:0:0:1:500:*;type=24:0:0:1:200:*;"
                                 "levels=0;typical=95"), "A");
    /* bad values are refused */
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    SKV_CK_OK(skv_sched_register_selector(s, skv_sim_policy("fgd"), &e), &e);
    const char *bad[] = {"levels=-1", "levels=x", "typical=101", "typical=-2",
                         "typical=nan", "rarity=-1", "rarity=9", "host=1:2",
                         "host=x:1:1:1:", "host=1:1:1:65:G"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
        go.selector = "fgd";
        go.selector_config = bad[i];
        ck_assert_int_eq(skv_sched_group_add(s, "g", &go, &e), SKV_EINVAL);
    }
    skv_sched_free(s);
}
END_TEST

/* rarity: the workload says one node like A (64 cores) exists and nine
 * with 32 cores, and 1 task in 50 needs 8 GPUs and 60 cores, which only
 * A-like nodes hold. B keeps 4 cores and a GPU with 0.4 free. A quarter on
 * A breaks the 8-GPU fit (+7750 x 0.02 = +155 milli-GPU); on B it leaves
 * 0.15, a fragment to the quarters (+147 - 5 = +142): both score 46, the
 * tie goes to A. With rarity=1 the 8-GPU type weighs 10x (8 of 80 GPUs can
 * hold it): +1313 on A, +82 on B, and A stays whole. */
START_TEST(test_frag_rarity)
{
    const char *wl = "type=49:0:0:1:250:*;type=1:60000:0:8:1000:*;"
                     "host=1:64000:0:8:X;host=9:32000:0:8:X;mu=0";
    char cfg[256];
    for (int r = 0; r <= 1; r++) {
        snprintf(cfg, sizeof(cfg), "%s;rarity=%d", wl, r);
        skv_sched *s = two_agents("frag", cfg, 8);
        ck_assert_str_eq(place(s, "pb", "cpu=60,cuda.shares=0.6", "B"), "B");
        ck_assert_str_eq(place(s, "q", "cpu=2,cuda.shares=0.25", NULL), r ? "B" : "A");
        skv_sched_free(s);
    }
}
END_TEST

START_TEST(test_frag_keeps_whole_gpu)
{
    /* 2-GPU agents, A has 0.5 used. Workload: whole GPUs and halves. A new
     * half on A's used GPU leaves A one whole free GPU and B two: the
     * half-free GPU that was a fragment for whole-GPU tasks is gone. */
    skv_sched *s = two_agents("frag", "type=1:0:0:1:1000:*;type=1:0:0:1:500:*", 2);
    ck_assert_str_eq(place(s, "pre", "cpu=1,cuda.shares=0.5", "A"), "A");
    ck_assert_str_eq(place(s, "h", "cpu=1,cuda.shares=0.5", NULL), "A");
    /* then whole GPUs: three fit (A 1, B 2), a fourth does not */
    ck_assert_str_ne(place(s, "w1", "cpu=1,cuda.device=1", NULL), "");
    ck_assert_str_ne(place(s, "w2", "cpu=1,cuda.device=1", NULL), "");
    ck_assert_str_ne(place(s, "w3", "cpu=1,cuda.device=1", NULL), "");
    ck_assert_str_eq(place(s, "w4", "cpu=1,cuda.device=1", NULL), "");
    skv_sched_free(s);
}
END_TEST

START_TEST(test_frag_cpu_stranding)
{
    /* A has 4 cores left for 8 GPUs, B 64 cores. A 1-GPU task with 4 cores
     * would strand A's other 7 GPUs without CPU: frag prefers B. */
    skv_sched *s = two_agents("frag", "type=1:4000:0:1:1000:*", 8);
    ck_assert_str_eq(place(s, "cpu", "cpu=60", "A"), "A");
    ck_assert_str_eq(place(s, "t", "cpu=4,cuda.device=1", NULL), "B");
    skv_sched_free(s);
}
END_TEST

START_TEST(test_policy_random)
{
    int a = 0, b = 0;
    for (int seed = 0; seed < 24; seed++) {
        char cfg[32];
        snprintf(cfg, sizeof(cfg), "seed=%d", seed);
        const char *got = quarter_after_half("random", cfg);
        a += strcmp(got, "A") == 0;
        b += strcmp(got, "B") == 0;
        ck_assert_str_eq(quarter_after_half("random", cfg), got); /* per seed */
    }
    ck_assert_int_eq(a + b, 24);
    ck_assert_int_gt(a, 0);
    ck_assert_int_gt(b, 0);
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    SKV_CK_OK(skv_sched_register_selector(s, skv_sim_policy("random"), &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = "random";
    go.selector_config = "seed=x";
    ck_assert_int_eq(skv_sched_group_add(s, "g", &go, &e), SKV_EINVAL);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_policy_list)
{
    ck_assert_uint_eq(skv_sim_policy_count(), 7);
    const char *want[] = {"random", "dotprod", "gpuclustering", "gpupacking",
                          "bestfit", "fgd", "frag"};
    for (size_t i = 0; i < 7; i++) {
        ck_assert_str_eq(skv_sim_policy_name(i), want[i]);
        ck_assert_ptr_nonnull(skv_sim_policy(want[i]));
        ck_assert_uint_eq(skv_sim_policy(want[i])->abi_version, SKV_SCHED_SELECTOR_ABI);
    }
    ck_assert_ptr_null(skv_sim_policy_name(7));
    ck_assert_ptr_null(skv_sim_policy("concentrated"));
    ck_assert_ptr_null(skv_sim_policy(NULL));
}
END_TEST

/* ---- job traces ----------------------------------------------------------- */

START_TEST(test_jobs_replay)
{
    /* 2 GPUs. j0: t=0, 10 s, 2 GPUs; j1: t=0, 10 s, 1 GPU; j2: t=5, 5 s,
     * 1 GPU; j3: 4 GPUs never fits. j0 runs 0-10, j1 10-20, j2 10-15.
     * Queueing 0, 10, 5; JCT 10, 20, 10; busy 35 GPU-s over 2 x 20. */
    skv_error e = SKV_ERROR_INIT;
    skv_sim_jobs *j = NULL;
    SKV_CK_OK(skv_sim_jobs_parse(&j, "submit,duration,gpus,vc\n0,10,2,a\n"
                                     "0,10,1,b\n5,5,1,b\n6,1,4,a\n", &e), &e);
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    o.n_nodes = 1;
    o.shape = (skv_sim_node_shape){8000, (skv_qty)8 << 30, 2};
    o.cpu_per_gpu = 1000;
    skv_sim_jobs_result *r = NULL;
    SKV_CK_OK(skv_sim_jobs_run(&r, j, &o, &e), &e);
    ck_assert_uint_eq(r->n_completed, 3);
    ck_assert_uint_eq(r->n_rejected, 1);
    ck_assert_uint_eq(r->n_decisions, 3);
    ck_assert_double_eq_tol(r->queue_mean_s, 5.0, 1e-9);
    ck_assert_double_eq_tol(r->queue_p50_s, 5.0, 1e-9);
    ck_assert_double_eq_tol(r->queue_p99_s, 10.0, 1e-9);
    ck_assert_double_eq_tol(r->jct_mean_s, 40.0 / 3.0, 1e-9);
    ck_assert_double_eq_tol(r->makespan_s, 20.0, 1e-9);
    ck_assert_double_eq_tol(r->utilization, 0.875, 1e-9);
    ck_assert_uint_eq(r->n_owners, 2);
    ck_assert_str_eq(r->owners[0].name, "a");
    ck_assert_double_eq_tol(r->owners[0].mean_slowdown, 1.0, 1e-9);
    /* b: slowdowns 20/10 and 10/5 -> 2; Jain over 1 and 0.5 = 0.9 */
    ck_assert_double_eq_tol(r->owners[1].mean_slowdown, 2.0, 1e-9);
    ck_assert_double_eq_tol(r->jain_fairness, 0.9, 1e-9);
    skv_sim_jobs_result_free(r);
    o.n_nodes = 0;
    r = (skv_sim_jobs_result *)0x1;
    ck_assert_int_eq(skv_sim_jobs_run(&r, j, &o, &e), SKV_EINVAL);
    ck_assert_ptr_eq(r, (skv_sim_jobs_result *)0x1);
    skv_sim_jobs_free(j);
}
END_TEST

START_TEST(test_node_shape_xml)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    skv_sim_node_shape sh;
    SKV_CK_OK(skv_sim_node_shape_from_xml(&sh, skv_test_data_path(path, sizeof(path),
              "topologies/nvidia-dgx2.xml"), &e), &e);
    ck_assert_uint_eq(sh.gpus, 16);
    ck_assert_int_gt(sh.cpu, 0);
    ck_assert_int_gt(sh.mem, 0);
    ck_assert_int_ne(skv_sim_node_shape_from_xml(&sh, "/nonexistent.xml", &e), 0);
}
END_TEST

Suite *skv_test_suite_sim(void);
Suite *skv_test_suite_sim(void)
{
    Suite *s = suite_create("sim");
    add_trace_tcase(s);
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_openb_parse_ok);
    tcase_add_test(tc, test_openb_parse_bad);
    tcase_add_test(tc, test_jobs_parse);
    tcase_add_test(tc, test_openb_whole_gpus);
    tcase_add_test(tc, test_openb_sharing_and_cpu);
    tcase_add_test(tc, test_openb_deterministic);
    tcase_add_test(tc, test_openb_bad_args);
    tcase_add_test(tc, test_openb_vary);
    tcase_add_test(tc, test_openb_vary_bad);
    tcase_add_test(tc, test_openb_gen_cli);
    tcase_add_test(tc, test_policy_packing_family);
    tcase_add_test(tc, test_policy_fgd_and_frag);
    tcase_add_test(tc, test_fgd_published_score);
    tcase_add_test(tc, test_frag_rarity);
    tcase_add_test(tc, test_frag_keeps_whole_gpu);
    tcase_add_test(tc, test_frag_cpu_stranding);
    tcase_add_test(tc, test_policy_random);
    tcase_add_test(tc, test_policy_list);
    tcase_add_test(tc, test_jobs_replay);
    tcase_add_test(tc, test_node_shape_xml);
    suite_add_tcase(s, tc);
    return s;
}
