/* Compute plugins: built-in cpu/mem/mock/cuda on real topologies, device
 * lists, container configuration, statistics, out-of-tree loading and ABI
 * checks, bad inputs.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/alloc.h"
#include "sokovan/plugin.h"
#include "sokovan/topo.h"

static skv_topo *load_dgx2(void)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_xml(&t, skv_test_data_path(path, sizeof(path),
                                "topologies/nvidia-dgx2.xml"), &e), &e);
    return t;
}

static skv_plugin *open_builtin(const char *name, const skv_topo *t,
                                const char *config)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    skv_plugin *p = NULL;
    ctx.topo = t;
    ctx.config = config;
    SKV_CK_OK(skv_plugin_open_builtin(&p, name, &ctx, &e), &e);
    return p;
}

static const char *so_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/tests/so/%s.so", skv_test_build_dir(), name);
    return buf;
}

/* A fresh fake system root with the given files (NULL-terminated pairs of
 * path, content). */
static char *fake_root(const char *const *files)
{
    static char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/skv-plugin-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (size_t i = 0; files && files[i]; i += 2) {
        char path[512], cmd[600];
        snprintf(path, sizeof(path), "%s%s", dir, files[i]);
        snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
        ck_assert_int_eq(system(cmd), 0);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(files[i + 1], f);
        fclose(f);
    }
    return dir;
}

static void rm_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_builtin_names)
{
    const char *const *names = skv_plugin_builtin_names();
    ck_assert_str_eq(names[0], "cpu");
    ck_assert_str_eq(names[3], "mock");
    ck_assert_ptr_null(names[4]);
    skv_error e = SKV_ERROR_INIT;
    skv_plugin *p = NULL;
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "tpu", NULL, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "tpu"));
    ck_assert_ptr_null(p);
    skv_plugin_free(NULL);
}
END_TEST

START_TEST(test_cpu_plugin_dgx2)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = load_dgx2();
    skv_plugin *p = open_builtin("cpu", t, NULL);
    ck_assert_str_eq(skv_plugin_name(p), "cpu");
    ck_assert_uint_eq(skv_plugin_slot_count(p), 1);
    ck_assert_str_eq(skv_plugin_slot_at(p, 0)->name, "cpu");
    ck_assert_int_eq(skv_plugin_slot_at(p, 0)->mode, SKV_ALLOC_DISCRETE);
    const skv_device_list *d = skv_plugin_devices(p);
    ck_assert_uint_eq(skv_device_list_count(d), 4);
    ck_assert_str_eq(skv_device_list_at(d, 2)->id, "2");
    ck_assert_int_eq(skv_device_list_at(d, 0)->numa_node, 0);
    ck_assert_int_eq(skv_device_list_at(d, 3)->numa_node, 1);
    ck_assert_int_eq(skv_device_capacity(skv_device_list_at(d, 1), "cpu"), 1000);
    /* Units agree with the default registry. */
    skv_slot_registry *reg;
    SKV_CK_OK(skv_slot_registry_new_default(&reg, &e), &e);
    SKV_CK_OK(skv_plugin_declare_slots(p, reg, &e), &e);
    skv_slot_registry_free(reg);

    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount a[] = {{"2", "cpu", 1000}, {"3", "cpu", 1000}};
    SKV_CK_OK(skv_plugin_container_config(p, cfg, a, 2, &e), &e);
    ck_assert_str_eq(skv_container_config_cpus(cfg), "24-25");
    ck_assert_str_eq(skv_container_config_get_env(cfg, "OMP_NUM_THREADS"), "2");
    /* Unknown device / slot: error, cfg unchanged. */
    skv_device_amount bad[] = {{"0", "cpu", 1000}, {"9", "cpu", 1000}};
    ck_assert_int_eq(skv_plugin_container_config(p, cfg, bad, 2, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "'9'"));
    skv_device_amount bad2[] = {{"0", "mem", 1000}};
    ck_assert_int_eq(skv_plugin_container_config(p, cfg, bad2, 1, &e), SKV_EINVAL);
    ck_assert_str_eq(skv_container_config_cpus(cfg), "24-25");
    skv_container_config_free(cfg);
    skv_plugin_free(p);

    /* cpu and mem need a topology and take no configuration. */
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cpu", &ctx, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "topology"));
    ctx.topo = t;
    ctx.config = "x=1";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "mem", &ctx, &e), SKV_EINVAL);
    ctx.version = 99;
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cpu", &ctx, &e), SKV_EVERSION);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_mem_plugin_and_map)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_synthetic(&t, "pack:2 numa:1 core:4 pu:2", &e), &e);
    skv_plugin *cpu = open_builtin("cpu", t, "");
    skv_plugin *mem = open_builtin("mem", t, NULL);
    ck_assert_uint_eq(skv_device_list_count(skv_plugin_devices(cpu)), 8);
    const skv_device_list *d = skv_plugin_devices(mem);
    ck_assert_uint_eq(skv_device_list_count(d), 2);
    ck_assert_str_eq(skv_device_list_at(d, 1)->id, "1");
    ck_assert_int_eq(skv_device_capacity(skv_device_list_at(d, 1), "mem"),
                     (skv_qty)skv_topo_numa_at(t, 1)->memory_bytes);
    ck_assert_int_eq(skv_plugin_slot_at(mem, 0)->kind, SKV_SLOT_BYTES);

    /* The standard map: 8 cores over 2 nodes; take 3 cores on node 1. */
    skv_alloc_map *m = NULL;
    SKV_CK_OK(skv_plugin_create_map(cpu, &m, NULL, NULL, &e), &e);
    ck_assert_uint_eq(skv_alloc_map_device_count(m), 8);
    ck_assert_int_eq(skv_alloc_map_device_numa(m, 7), 1);
    skv_slots *req;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=3", NULL, &e), &e);
    int node1 = 1;
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    uint64_t mask = 1u << 1;
    c.numa_mask = &mask;
    c.numa_mask_words = 1;
    c.numa_prefer = &node1;
    c.numa_prefer_count = 1;
    skv_alloc_result *r = NULL;
    SKV_CK_OK(skv_alloc_map_alloc(&r, m, req, &c, &e), &e);
    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    SKV_CK_OK(skv_plugin_container_config_result(cpu, cfg, m, r, &e), &e);
    int *cpus;
    size_t n;
    SKV_CK_OK(skv_topo_cpulist_parse(&cpus, &n, skv_container_config_cpus(cfg),
                                     &e), &e);
    ck_assert_uint_eq(n, 6); /* 3 cores x 2 PUs, all on node 1 (8-15) */
    for (size_t i = 0; i < n; i++)
        ck_assert(cpus[i] >= 8 && cpus[i] <= 15);
    skv_free(cpus);
    SKV_CK_OK(skv_alloc_map_release(m, r, &e), &e);
    ck_assert_int_eq(skv_plugin_container_config_result(cpu, cfg, m, r, &e),
                     SKV_ESTATE);
    skv_alloc_result_free(r);
    skv_alloc_map_free(m);
    skv_slots_free(req);

    /* mem: the node set of the amounts becomes cpuset.mems. */
    skv_device_amount a[] = {{"1", "mem", 1 << 20}, {"0", "mem", 0}};
    SKV_CK_OK(skv_plugin_container_config(mem, cfg, a, 2, &e), &e);
    ck_assert_str_eq(skv_container_config_mems(cfg), "1");
    SKV_CK_OK(skv_plugin_create_map(mem, &m, NULL, NULL, &e), &e);
    ck_assert_int_eq(skv_alloc_map_capacity(m, 0, SKV_ALLOC_ALL),
                     (skv_qty)skv_topo_memory_bytes(t));
    skv_alloc_map_free(m);
    skv_container_config_free(cfg);
    skv_plugin_free(cpu);
    skv_plugin_free(mem);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_disallowed_topology)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_xml(&t, skv_test_data_path(path, sizeof(path),
              "topologies/16amd64-8n2c-cpusets.xml"), &e), &e);
    skv_plugin *cpu = open_builtin("cpu", t, NULL);
    skv_plugin *mem = open_builtin("mem", t, NULL);
    /* Only allowed cores and nodes become devices. */
    ck_assert_uint_eq(skv_device_list_count(skv_plugin_devices(cpu)), 10);
    ck_assert_int_eq(skv_device_list_at(skv_plugin_devices(cpu), 0)->numa_node,
                     -1);
    ck_assert_int_eq(skv_device_list_at(skv_plugin_devices(cpu), 2)->numa_node,
                     1);
    const skv_device_list *d = skv_plugin_devices(mem);
    ck_assert_uint_eq(skv_device_list_count(d), 5);
    ck_assert_str_eq(skv_device_list_at(d, 0)->id, "1");
    ck_assert_str_eq(skv_device_list_at(d, 4)->id, "5");
    ck_assert_ptr_null(skv_device_list_find(d, "0"));
    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount a[] = {{"9", "cpu", 1000}, {"4", "cpu", 1000}};
    SKV_CK_OK(skv_plugin_container_config(cpu, cfg, a, 2, &e), &e);
    ck_assert_str_eq(skv_container_config_cpus(cfg), "5,15");
    skv_container_config_free(cfg);
    skv_plugin_free(cpu);
    skv_plugin_free(mem);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_mock_from_topology)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = load_dgx2();
    skv_plugin *p = open_builtin("mock", t, "topology=1,prefix=mock,"
                                 "memory=32g");
    const skv_device_list *d = skv_plugin_devices(p);
    ck_assert_uint_eq(skv_device_list_count(d), 16);
    for (size_t i = 0; i < 16; i++) {
        const skv_device *dev = skv_device_list_at(d, i);
        ck_assert_int_eq(dev->numa_node, i < 8 ? 0 : 1);
        ck_assert_str_eq(dev->pci_bus_id, skv_topo_accel_at(t, i)->pci_bus_id);
        ck_assert_str_eq(dev->model, "Tesla V100-SXM3-32GB-H");
        ck_assert_uint_eq(dev->memory_bytes, 32ull << 30);
        ck_assert_int_eq(skv_device_capacity(dev, "mock.device"), 1000);
        ck_assert_int_eq(skv_device_capacity(dev, "mock.shares"), 1000);
    }
    ck_assert_uint_eq(skv_plugin_slot_count(p), 2);
    const skv_plugin_slot *sh = skv_plugin_slot_at(p, 1);
    ck_assert_str_eq(sh->name, "mock.shares");
    ck_assert_int_eq(sh->mode, SKV_ALLOC_FRACTIONAL);
    ck_assert_uint_eq(sh->exclusive_group, skv_plugin_slot_at(p, 0)->exclusive_group);
    ck_assert_uint_eq(sh->flags, SKV_ALLOC_SLOT_ANTIFRAG);

    /* Map: 2 whole GPUs, then the same GPUs cannot be shared. */
    skv_alloc_map *m;
    SKV_CK_OK(skv_plugin_create_map(p, &m, NULL, NULL, &e), &e);
    skv_slots *req;
    SKV_CK_OK(skv_slots_parse(&req, "mock.device=2", NULL, &e), &e);
    skv_alloc_result *r;
    SKV_CK_OK(skv_alloc_map_alloc(&r, m, req, NULL, &e), &e);
    ck_assert_int_eq(skv_alloc_map_available(m, 1, SKV_ALLOC_ALL), 14 * 1000);
    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    SKV_CK_OK(skv_plugin_container_config_result(p, cfg, m, r, &e), &e);
    const char *vis = skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES");
    ck_assert_ptr_nonnull(vis);
    ck_assert_int_eq(strncmp(vis, "GPU-", 4), 0);
    ck_assert_ptr_nonnull(strchr(vis, ','));
    ck_assert_str_eq(skv_container_config_get_env(cfg, "NVIDIA_VISIBLE_DEVICES"),
                     vis);
    ck_assert_uint_eq(skv_container_config_flags(cfg), 0);
    skv_alloc_map_release(m, r, &e);
    skv_alloc_result_free(r);
    skv_slots_free(req);
    skv_alloc_map_free(m);
    skv_container_config_free(cfg);

    skv_stats *st;
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    SKV_CK_OK(skv_plugin_stats(p, st, &e), &e);
    int64_t v = 0;
    SKV_CK_OK(skv_stats_get(st, "15", "memory_total_bytes", &v), NULL);
    ck_assert_int_eq(v, 32ll << 30);
    skv_stats_free(st);
    skv_plugin_free(p);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_mock_config)
{
    skv_plugin *p = open_builtin("mock", NULL, "count=4, memory=16g:16g:8g,"
                                 "numa=0:1,shares=1:1:0.5,pus=80,prefix=fake,"
                                 "model=Fake X,antifrag=0");
    const skv_device_list *d = skv_plugin_devices(p);
    ck_assert_uint_eq(skv_device_list_count(d), 4);
    const skv_device *d3 = skv_device_list_at(d, 3);
    ck_assert_str_eq(d3->id, "3");
    ck_assert_uint_eq(d3->memory_bytes, 8ull << 30);
    ck_assert_int_eq(d3->numa_node, 1);
    ck_assert_int_eq(skv_device_list_at(d, 0)->numa_node, 0);
    ck_assert_int_eq(skv_device_capacity(d3, "fake.shares"), 500);
    ck_assert_int_eq(skv_device_capacity(skv_device_list_at(d, 1),
                                         "fake.shares"), 1000);
    ck_assert_uint_eq(d3->processing_units, 80);
    ck_assert_str_eq(d3->model, "Fake X");
    ck_assert_str_eq(d3->pci_bus_id, "");
    ck_assert_str_eq(skv_plugin_slot_at(p, 0)->name, "fake.device");
    ck_assert_uint_eq(skv_plugin_slot_at(p, 1)->flags, 0);
    skv_plugin_free(p);
    p = open_builtin("mock", NULL, NULL); /* one default device */
    ck_assert_uint_eq(skv_device_list_count(skv_plugin_devices(p)), 1);
    ck_assert_int_eq(skv_device_list_at(skv_plugin_devices(p), 0)->numa_node, -1);
    skv_plugin_free(p);

    static const char *const bad[] = {
        "colour=red", "count=abc", "count=-1", "count=5000", "prefix=Bad",
        "prefix=a.b", "topology=1", "topology=maybe", "numa=x", "shares=0",
        "memory=lots", "memory=unlimited", "count=1,count=2", "count",
        "count=2,,pus=1", NULL};
    for (size_t i = 0; bad[i]; i++) {
        skv_error e = SKV_ERROR_INIT;
        skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
        ctx.config = bad[i];
        p = NULL;
        int rc = skv_plugin_open_builtin(&p, "mock", &ctx, &e);
        ck_assert_msg(rc == SKV_EINVAL, "'%s' -> %d", bad[i], rc);
        ck_assert_ptr_null(p);
        ck_assert_ptr_nonnull(strstr(e.message, "mock"));
    }
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = load_dgx2();
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.topo = t;
    ctx.config = "topology=1,count=2";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "mock", &ctx, &e), SKV_EINVAL);
    skv_topo_free(t);
}
END_TEST

/* NVIDIA-style container configuration through the mock plugin. */
START_TEST(test_gpu_container_config)
{
    static const char *const files[] = {"/dev/nvidiactl", "", "/dev/nvidia-uvm",
                                        "", NULL};
    char *root = fake_root(files);
    char mps[128], cfgtext[256];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sysroot_set(root, &e), &e);
    snprintf(mps, sizeof(mps), "%s/mps", root);
    ck_assert_int_eq(mkdir(mps, 0700), 0);
    snprintf(cfgtext, sizeof(cfgtext), "count=4,memory=32g,devnodes=1,"
             "shares=1:1:1:0.5,mps_pipe_dir=%s", mps);
    skv_plugin *p = open_builtin("mock", NULL, cfgtext);
    skv_container_config *cfg;

    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount whole[] = {{"1", "mock.device", 1000},
                                 {"2", "mock.device", 1000}};
    SKV_CK_OK(skv_plugin_container_config(p, cfg, whole, 2, &e), &e);
    ck_assert_uint_eq(skv_container_config_device_count(cfg), 4);
    ck_assert_str_eq(skv_container_config_device_at(cfg, 0), "/dev/nvidia1");
    ck_assert_str_eq(skv_container_config_device_at(cfg, 1), "/dev/nvidia2");
    ck_assert_str_eq(skv_container_config_device_at(cfg, 2), "/dev/nvidiactl");
    ck_assert_str_eq(skv_container_config_device_at(cfg, 3), "/dev/nvidia-uvm");
    ck_assert_str_eq(skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES"),
                     "1,2");
    ck_assert_ptr_null(skv_container_config_get_env(cfg,
                       "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
    skv_container_config_free(cfg);

    /* A fraction without an MPS daemon: accounted, flagged not enforced. */
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount frac[] = {{"3", "mock.shares", 250}};
    SKV_CK_OK(skv_plugin_container_config(p, cfg, frac, 1, &e), &e);
    ck_assert_uint_eq(skv_container_config_flags(cfg),
                      SKV_CCFG_SHARES_NOT_ENFORCED);
    ck_assert_str_eq(skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES"),
                     "3");
    skv_container_config_free(cfg);

    /* With the daemon's control pipe present: MPS limits. 0.25 of a
     * device whose shares capacity is 0.5 = 50% and 16 GiB. */
    char ctl[160];
    snprintf(ctl, sizeof(ctl), "%s/control", mps);
    FILE *f = fopen(ctl, "w");
    fclose(f);
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    SKV_CK_OK(skv_plugin_container_config(p, cfg, frac, 1, &e), &e);
    ck_assert_uint_eq(skv_container_config_flags(cfg), 0);
    ck_assert_str_eq(skv_container_config_get_env(cfg,
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "50");
    ck_assert_str_eq(skv_container_config_get_env(cfg,
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=16384M");
    ck_assert_str_eq(skv_container_config_get_env(cfg,
                     "CUDA_MPS_PIPE_DIRECTORY"), mps);
    ck_assert_uint_eq(skv_container_config_mount_count(cfg), 1);
    ck_assert_str_eq(skv_container_config_mount_at(cfg, 0)->target, mps);
    skv_container_config_free(cfg);
    skv_plugin_free(p);
    SKV_CK_OK(skv_sysroot_set(NULL, &e), &e);
    rm_tree(root);
}
END_TEST

START_TEST(test_cuda_without_nvml)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin *p = NULL;
    char path[4096];
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    /* Default library absent on this machine (or no driver): no devices.
     * A machine with a real NVIDIA driver would list its GPUs instead. */
    if (access("/dev/nvidiactl", F_OK) != 0) {
        p = open_builtin("cuda", NULL, NULL);
        ck_assert_uint_eq(skv_device_list_count(skv_plugin_devices(p)), 0);
        ck_assert_uint_eq(skv_plugin_slot_count(p), 2);
        ck_assert_str_eq(skv_plugin_slot_at(p, 0)->name, "cuda.device");
        skv_plugin_free(p);
    }
    ctx.config = "library=/nonexistent/libnvidia-ml.so.1";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cuda", &ctx, &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent"));
    /* A library that is not NVML. */
    char cfg[4200];
    snprintf(cfg, sizeof(cfg), "library=%s",
             so_path(path, sizeof(path), "plugin_good"));
    ctx.config = cfg;
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cuda", &ctx, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "nvmlInit_v2"));
    ctx.config = "library=";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cuda", &ctx, &e), SKV_EINVAL);
    ctx.config = "librar=x";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cuda", &ctx, &e), SKV_EINVAL);
}
END_TEST

START_TEST(test_cuda_fake_nvml)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = load_dgx2();
    char path[4096], cfgtext[4300];
    snprintf(cfgtext, sizeof(cfgtext), "library=%s,shares=2",
             so_path(path, sizeof(path), "fake_nvml"));
    skv_plugin *p = open_builtin("cuda", t, cfgtext);
    const skv_device_list *d = skv_plugin_devices(p);
    ck_assert_uint_eq(skv_device_list_count(d), 2);
    const skv_device *g1 = skv_device_list_at(d, 1);
    ck_assert_str_eq(g1->id, "1");
    ck_assert_str_eq(g1->pci_bus_id, "0000:b7:00.0");
    ck_assert_int_eq(g1->numa_node, 1); /* from the DGX-2 topology */
    ck_assert_int_eq(skv_device_list_at(d, 0)->numa_node, 0);
    ck_assert_uint_eq(g1->memory_bytes, 32ull << 30);
    ck_assert_str_eq(g1->model, "Fake Tesla V100-SXM3-32GB");
    ck_assert_int_eq(skv_device_capacity(g1, "cuda.shares"), 2000);

    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount a[] = {{"1", "cuda.device", 1000}};
    SKV_CK_OK(skv_plugin_container_config(p, cfg, a, 1, &e), &e);
    ck_assert_str_eq(skv_container_config_device_at(cfg, 0), "/dev/nvidia2");
    ck_assert_str_eq(skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES"),
                     "GPU-fake-1");
    skv_container_config_free(cfg);

    skv_stats *st;
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    SKV_CK_OK(skv_plugin_stats(p, st, &e), &e);
    int64_t used = 0;
    SKV_CK_OK(skv_stats_get(st, "1", "memory_used_bytes", &used), NULL);
    ck_assert_int_eq(used, 2ll << 30);
    ck_assert_uint_eq(skv_stats_count(st), 4);
    skv_stats_free(st);
    skv_plugin_free(p);

    /* Driver not loaded: with an explicit library that is an error. */
    setenv("FAKE_NVML_FAIL_INIT", "1", 1);
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.config = cfgtext;
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "cuda", &ctx, &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "nvmlInit"));
    unsetenv("FAKE_NVML_FAIL_INIT");
    skv_topo_free(t);
}
END_TEST

/* Collects "id=reason;" of skv_plugin_health. */
static int collect_health(void *arg, const char *id, const char *reason)
{
    char *buf = arg;
    size_t len = strlen(buf);
    snprintf(buf + len, 256 - len, "%s=%s;", id, reason);
    return 0;
}

static void health_of(skv_plugin *p, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    buf[0] = '\0';
    SKV_CK_OK(skv_plugin_health(p, collect_health, buf, &e), &e);
}

/* cuda health through (fake) NVML: a critical XID sticks to its GPU, an
 * application's XID does not count, pages pending retirement and volatile
 * uncorrected ECC errors make a GPU unhealthy while they last; without
 * event support the other probes still run. */
START_TEST(test_cuda_health)
{
    char path[4096], cfgtext[4300], got[256];
    snprintf(cfgtext, sizeof(cfgtext), "library=%s",
             so_path(path, sizeof(path), "fake_nvml"));
    skv_plugin *p = open_builtin("cuda", NULL, cfgtext);
    health_of(p, got);
    ck_assert_str_eq(got, "");
    setenv("FAKE_NVML_XID", "0:13,1:79", 1);
    health_of(p, got);
    ck_assert_str_eq(got, "1=xid 79;");
    unsetenv("FAKE_NVML_XID");
    health_of(p, got);
    ck_assert_str_eq(got, "1=xid 79;");          /* sticky */
    setenv("FAKE_NVML_RETIRED", "0", 1);
    health_of(p, got);
    ck_assert_str_eq(got, "0=retired pages pending;1=xid 79;");
    unsetenv("FAKE_NVML_RETIRED");
    setenv("FAKE_NVML_ECC", "0:3", 1);
    health_of(p, got);
    ck_assert_str_eq(got, "0=3 uncorrected ECC errors;1=xid 79;");
    unsetenv("FAKE_NVML_ECC");
    health_of(p, got);
    ck_assert_str_eq(got, "1=xid 79;");
    skv_plugin_free(p);
    setenv("FAKE_NVML_NO_EVENTS", "1", 1);
    setenv("FAKE_NVML_XID", "1:79", 1);
    setenv("FAKE_NVML_ECC", "1:1", 1);
    p = open_builtin("cuda", NULL, cfgtext);
    health_of(p, got);
    ck_assert_str_eq(got, "1=1 uncorrected ECC errors;");
    unsetenv("FAKE_NVML_NO_EVENTS");
    unsetenv("FAKE_NVML_XID");
    unsetenv("FAKE_NVML_ECC");
    skv_plugin_free(p);
}
END_TEST

/* mock: the faults file; a bad line is an error naming file and line. */
START_TEST(test_mock_health)
{
    skv_error e = SKV_ERROR_INIT;
    char dir[] = "/tmp/skv-mock-health-XXXXXX", file[64], cfgtext[128];
    char got[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/faults", dir);
    snprintf(cfgtext, sizeof cfgtext, "count=2,faults=%s", file);
    skv_plugin *p = open_builtin("mock", NULL, cfgtext);
    health_of(p, got);
    ck_assert_str_eq(got, "");                   /* no file: healthy */
    FILE *f = fopen(file, "w");
    fputs("# comment\n\n1 xid 79\n0\n", f);
    fclose(f);
    health_of(p, got);
    ck_assert_str_eq(got, "1=xid 79;0=injected fault;");
    f = fopen(file, "w");
    fputs("2 nope\n", f);
    fclose(f);
    got[0] = '\0';
    ck_assert_int_eq(skv_plugin_health(p, collect_health, got, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "line 1"));
    unlink(file);
    rmdir(dir);
    skv_plugin_free(p);
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.config = "faults=relative/path";
    ck_assert_int_eq(skv_plugin_open_builtin(&p, "mock", &ctx, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "absolute"));
}
END_TEST

START_TEST(test_out_of_tree)
{
    skv_error e = SKV_ERROR_INIT;
    char path[4096];
    skv_plugin *p = NULL;
    SKV_CK_OK(skv_plugin_open_so(&p, so_path(path, sizeof(path), "plugin_good"),
                                 NULL, &e), &e);
    ck_assert_str_eq(skv_plugin_name(p), "acme");
    ck_assert_str_eq(skv_plugin_version(p), "1.2.3");
    ck_assert_uint_eq(skv_device_list_count(skv_plugin_devices(p)), 2);
    ck_assert_int_eq(skv_device_list_find(skv_plugin_devices(p), "npu1")
                         ->numa_node, 1);
    skv_container_config *cfg;
    SKV_CK_OK(skv_container_config_new(&cfg, &e), &e);
    skv_device_amount a[] = {{"npu0", "acme.npu", 1000},
                             {"npu1", "acme.npu", 1000}};
    SKV_CK_OK(skv_plugin_container_config(p, cfg, a, 2, &e), &e);
    ck_assert_str_eq(skv_container_config_get_env(cfg, "ACME_VISIBLE_DEVICES"),
                     "npu0,npu1");
    ck_assert_str_eq(skv_container_config_device_at(cfg, 1), "/dev/acme-npu1");
    skv_container_config_free(cfg);
    skv_stats *st;
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    SKV_CK_OK(skv_plugin_stats(p, st, &e), &e);
    ck_assert_uint_eq(skv_stats_count(st), 1);
    ck_assert_str_eq(skv_stats_at(st, 0)->metric, "acme_temperature_c");
    skv_stats_free(st);
    skv_alloc_map *m;
    SKV_CK_OK(skv_plugin_create_map(p, &m, NULL, NULL, &e), &e);
    ck_assert_int_eq(skv_alloc_map_capacity(m, 0, SKV_ALLOC_ALL), 2000);
    skv_alloc_map_free(m);
    skv_plugin_free(p);

    p = NULL;
    ck_assert_int_eq(skv_plugin_open_so(&p, so_path(path, sizeof(path),
                     "plugin_badabi"), NULL, &e), SKV_EVERSION);
    ck_assert_ptr_nonnull(strstr(e.message, "ABI 3"));
    ck_assert_ptr_nonnull(strstr(e.message, "ABI 1 to 2"));
    ck_assert_ptr_null(p);
    ck_assert_int_eq(skv_plugin_open_so(&p, "/nonexistent/x.so", NULL, &e),
                     SKV_EIO);
    ck_assert_int_eq(skv_plugin_open_so(&p, so_path(path, sizeof(path),
                     "fake_nvml"), NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, SKV_PLUGIN_ENTRY_SYMBOL));
    ck_assert_int_eq(skv_plugin_open_so(&p, "", NULL, &e), SKV_EINVAL);
}
END_TEST

/* ---- hand-written tables for the ABI checks ---------------------------- */

static int fini_calls;

static int t_init(void **s, const skv_plugin_context *c,
                  const skv_plugin_host *h, skv_error *err)
{
    (void)h;
    *s = &fini_calls;
    if (c->config && strcmp(c->config, "fail") == 0) {
        if (err) {
            err->code = SKV_EIO;
            snprintf(err->message, sizeof(err->message), "device on fire");
        }
        return SKV_EIO;
    }
    return c->config && strcmp(c->config, "silent") == 0 ? 7 : 0;
}

static void t_fini(void *s) { (*(int *)s)++; }

static int t_slots(void *s, skv_plugin_slots *out, const skv_plugin_host *h,
                   skv_error *err)
{
    (void)s;
    skv_plugin_slot sl = {"t.unit", SKV_SLOT_COUNT, "U", SKV_ALLOC_DISCRETE, 0,
                          0, 0};
    return h->slot_declare(out, &sl, err);
}

static int t_devices_undeclared(void *s, skv_device_list *out,
                                const skv_plugin_host *h, skv_error *err)
{
    (void)s;
    skv_device_slot sl = {"t.other", 1000};
    skv_device d = {"d0", -1, NULL, 0, 0, NULL, &sl, 1};
    return h->device_add(out, &d, err);
}

START_TEST(test_ops_checks)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin *p = NULL;
    skv_compute_plugin_ops ops = {SKV_PLUGIN_ABI_VERSION, "t", "0", t_init,
                                  t_fini, t_slots, t_devices_undeclared,
                                  NULL, NULL, NULL};
    ck_assert_int_eq(skv_plugin_open_ops(&p, NULL, NULL, &e), SKV_EINVAL);
    /* A device with a slot the plugin did not declare; fini still runs. */
    fini_calls = 0;
    ck_assert_int_eq(skv_plugin_open_ops(&p, &ops, NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "t.other"));
    ck_assert_int_eq(fini_calls, 1);
    /* init failing: its message, prefixed with the plugin name. */
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.config = "fail";
    fini_calls = 0;
    ck_assert_int_eq(skv_plugin_open_ops(&p, &ops, &ctx, &e), SKV_EIO);
    ck_assert_str_eq(e.message, "plugin 't': device on fire");
    ck_assert_int_eq(fini_calls, 0);
    ctx.config = "silent"; /* a positive return code is still a failure */
    ck_assert_int_eq(skv_plugin_open_ops(&p, &ops, &ctx, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "init"));
    skv_compute_plugin_ops bad = ops;
    bad.abi_version = 0;
    ck_assert_int_eq(skv_plugin_open_ops(&p, &bad, NULL, &e), SKV_EVERSION);
    bad = ops;
    bad.name = "Bad Name";
    ck_assert_int_eq(skv_plugin_open_ops(&p, &bad, NULL, &e), SKV_EINVAL);
    bad = ops;
    bad.list_devices = NULL;
    ck_assert_int_eq(skv_plugin_open_ops(&p, &bad, NULL, &e), SKV_EINVAL);
    ck_assert_ptr_null(p);

    /* Registering slots that conflict with the registry: nothing added. */
    skv_topo *t = load_dgx2();
    skv_plugin *mock = open_builtin("mock", t, "prefix=cuda,topology=1");
    skv_slot_registry *reg;
    SKV_CK_OK(skv_slot_registry_new(&reg, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(reg, "cuda.shares", SKV_SLOT_COUNT, "x",
                                    &e), &e);
    ck_assert_int_eq(skv_plugin_declare_slots(mock, reg, &e), SKV_EEXIST);
    ck_assert_uint_eq(skv_slot_registry_count(reg), 1);
    skv_slot_registry_free(reg);
    SKV_CK_OK(skv_slot_registry_new_default(&reg, &e), &e);
    SKV_CK_OK(skv_plugin_declare_slots(mock, reg, &e), &e);
    skv_slot_registry_free(reg);
    skv_plugin_free(mock);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_device_list)
{
    skv_error e = SKV_ERROR_INIT;
    skv_device_list *l;
    SKV_CK_OK(skv_device_list_new(&l, &e), &e);
    skv_device_slot sl[2] = {{"x.a", 1000}, {"x.b", 5}};
    skv_device d = {"dev0", 3, "0000:01:00.0", 1, 2, "M", sl, 2};
    SKV_CK_OK(skv_device_list_add(l, &d, &e), &e);
    const skv_device *got = skv_device_list_at(l, 0);
    ck_assert_ptr_ne(got->id, d.id); /* copied */
    ck_assert_int_eq(skv_device_capacity(got, "x.b"), 5);
    ck_assert_int_eq(skv_device_capacity(got, "x.c"), 0);
    ck_assert_int_eq(skv_device_list_add(l, &d, &e), SKV_EINVAL); /* dup */
    skv_device bad = d;
    bad.id = "";
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    bad.id = "has space";
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    bad.id = "dev1";
    bad.numa_node = -2;
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    bad.numa_node = 0;
    skv_device_slot badsl[2] = {{"x.a", 1}, {"x.a", 2}};
    bad.slots = badsl;
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    badsl[1].slot = "X";
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    badsl[1].slot = "x.b";
    badsl[1].qty = -1;
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    badsl[1].qty = SKV_QTY_UNLIMITED;
    ck_assert_int_eq(skv_device_list_add(l, &bad, &e), SKV_EINVAL);
    bad.slots = NULL;
    bad.nslots = 0;
    bad.pci_bus_id = NULL;
    bad.model = NULL;
    SKV_CK_OK(skv_device_list_add(l, &bad, &e), &e);
    ck_assert_str_eq(skv_device_list_find(l, "dev1")->model, "");
    ck_assert_uint_eq(skv_device_list_count(l), 2);
    ck_assert_ptr_null(skv_device_list_at(l, 2));
    skv_device_list_free(l);
    skv_device_list_free(NULL);

    skv_stats *st;
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    SKV_CK_OK(skv_stats_add(st, NULL, "uptime", 5, &e), &e);
    ck_assert_int_eq(skv_stats_add(st, "a", "", 5, &e), SKV_EINVAL);
    int64_t v;
    SKV_CK_OK(skv_stats_get(st, "", "uptime", &v), NULL);
    ck_assert_int_eq(v, 5);
    ck_assert_int_eq(skv_stats_get(st, "a", "uptime", &v), SKV_ENOENT);
    skv_stats_free(st);
}
END_TEST

START_TEST(test_container_config_api)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_config *c, *o;
    SKV_CK_OK(skv_container_config_new(&c, &e), &e);
    SKV_CK_OK(skv_container_config_add_device(c, "/dev/a", &e), &e);
    SKV_CK_OK(skv_container_config_add_device(c, "/dev/a", &e), &e);
    ck_assert_uint_eq(skv_container_config_device_count(c), 1);
    ck_assert_int_eq(skv_container_config_add_device(c, "dev/a", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_config_add_device(c, "/dev/../etc", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_config_add_device(c, "/dev/x/..", &e),
                     SKV_EINVAL);
    SKV_CK_OK(skv_container_config_set_env(c, "ZED", "1", &e), &e);
    SKV_CK_OK(skv_container_config_set_env(c, "ALPHA", "2", &e), &e);
    SKV_CK_OK(skv_container_config_set_env(c, "ZED", "3", &e), &e);
    const char *name, *value;
    SKV_CK_OK(skv_container_config_env_at(c, 0, &name, &value), NULL);
    ck_assert_str_eq(name, "ALPHA");
    SKV_CK_OK(skv_container_config_env_at(c, 1, &name, &value), NULL);
    ck_assert_str_eq(value, "3");
    ck_assert_int_eq(skv_container_config_env_at(c, 2, &name, &value), SKV_ERANGE);
    ck_assert_int_eq(skv_container_config_set_env(c, "1X", "v", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_config_set_env(c, "A-B", "v", &e), SKV_EINVAL);
    SKV_CK_OK(skv_container_config_add_mount(c, "/a", "/b", 0, &e), &e);
    SKV_CK_OK(skv_container_config_add_mount(c, "/a", "/b", 0, &e), &e);
    ck_assert_int_eq(skv_container_config_add_mount(c, "/c", "/b", 0, &e),
                     SKV_EEXIST);
    ck_assert_int_eq(skv_container_config_add_mount(c, "/c", "/d", 0x80, &e),
                     SKV_EINVAL);
    SKV_CK_OK(skv_container_config_set_cpus(c, "3,0-2,8", &e), &e);
    ck_assert_str_eq(skv_container_config_cpus(c), "0-3,8");
    ck_assert_int_eq(skv_container_config_set_mems(c, "1-0", &e), SKV_EINVAL);
    ck_assert_ptr_null(skv_container_config_mems(c));

    /* Merging: a conflicting env value leaves dst unchanged. */
    SKV_CK_OK(skv_container_config_new(&o, &e), &e);
    SKV_CK_OK(skv_container_config_add_device(o, "/dev/b", &e), &e);
    SKV_CK_OK(skv_container_config_set_env(o, "ZED", "4", &e), &e);
    ck_assert_int_eq(skv_container_config_merge(c, o, &e), SKV_EEXIST);
    ck_assert_uint_eq(skv_container_config_device_count(c), 1);
    ck_assert_str_eq(skv_container_config_get_env(c, "ZED"), "3");
    SKV_CK_OK(skv_container_config_set_env(o, "ZED", "3", &e), &e);
    SKV_CK_OK(skv_container_config_set_mems(o, "1", &e), &e);
    skv_container_config_add_flags(o, SKV_CCFG_SHARES_NOT_ENFORCED);
    SKV_CK_OK(skv_container_config_merge(c, o, &e), &e);
    ck_assert_uint_eq(skv_container_config_device_count(c), 2);
    ck_assert_str_eq(skv_container_config_mems(c), "1");
    ck_assert_str_eq(skv_container_config_cpus(c), "0-3,8");
    ck_assert_uint_eq(skv_container_config_flags(c), SKV_CCFG_SHARES_NOT_ENFORCED);
    ck_assert_uint_eq(skv_container_config_mount_count(c), 1);
    skv_container_config_free(o);
    skv_container_config_free(c);
    skv_container_config_free(NULL);
}
END_TEST

START_TEST(test_cpu_mem_stats)
{
    static const char *const files[] = {
        "/proc/stat",
        "cpu  10 0 10 100 0 0 0 0 0 0\n"
        "cpu0 1 2 3 40 5 6 7 8 0 0\n"
        "cpu1 10 0 0 90 0 0 0 0 0 0\n"
        "cpu24 100 0 0 0 0 0 0 0 0 0\n"
        "intr 1 2 3\n",
        "/sys/devices/system/node/node1/meminfo",
        "Node 1 MemTotal:       1000 kB\nNode 1 MemFree:         250 kB\n",
        NULL};
    skv_error e = SKV_ERROR_INIT;
    char *root = fake_root(files);
    SKV_CK_OK(skv_sysroot_set(root, &e), &e);
    skv_topo *t = load_dgx2();
    skv_plugin *cpu = open_builtin("cpu", t, NULL);
    skv_plugin *mem = open_builtin("mem", t, NULL);
    skv_stats *st;
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    SKV_CK_OK(skv_plugin_stats(cpu, st, &e), &e);
    int64_t v = 0;
    SKV_CK_OK(skv_stats_get(st, "0", "cpu_busy_ticks", &v), NULL);
    ck_assert_int_eq(v, 1 + 2 + 3 + 6 + 7 + 8);
    SKV_CK_OK(skv_stats_get(st, "0", "cpu_total_ticks", &v), NULL);
    ck_assert_int_eq(v, 1 + 2 + 3 + 40 + 5 + 6 + 7 + 8);
    SKV_CK_OK(skv_stats_get(st, "2", "cpu_busy_ticks", &v), NULL);
    ck_assert_int_eq(v, 100);
    SKV_CK_OK(skv_stats_get(st, "3", "cpu_total_ticks", &v), NULL);
    ck_assert_int_eq(v, 0); /* cpu25 is not in the file */
    SKV_CK_OK(skv_plugin_stats(mem, st, &e), &e);
    SKV_CK_OK(skv_stats_get(st, "1", "memory_free_bytes", &v), NULL);
    ck_assert_int_eq(v, 250 * 1024);
    ck_assert_int_eq(skv_stats_get(st, "0", "memory_free_bytes", &v), SKV_ENOENT);
    skv_stats_free(st);
    /* /proc/stat missing: an error, and nothing appended. */
    char path[600];
    snprintf(path, sizeof(path), "%s/proc/stat", root);
    unlink(path);
    SKV_CK_OK(skv_stats_new(&st, &e), &e);
    ck_assert_int_ne(skv_plugin_stats(cpu, st, &e), 0);
    ck_assert_uint_eq(skv_stats_count(st), 0);
    skv_stats_free(st);
    skv_plugin_free(cpu);
    skv_plugin_free(mem);
    skv_topo_free(t);
    SKV_CK_OK(skv_sysroot_set(NULL, &e), &e);
    rm_tree(root);
}
END_TEST

static long allocs_left;
static void *fail_malloc(size_t n, void *p)
{
    (void)p;
    return allocs_left-- > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *q, size_t n, void *p)
{
    (void)p;
    return allocs_left-- > 0 ? realloc(q, n) : NULL;
}
static void fail_free(void *q, void *p)
{
    (void)p;
    free(q);
}

/* One step of the plugin life cycle with every allocation failing in turn:
 * clean SKV_ENOMEM, nothing leaked (checked by the sanitizer run). */
static int plugin_cycle(const skv_topo *t, skv_error *e)
{
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    skv_plugin *p = NULL;
    skv_container_config *cfg = NULL;
    ctx.topo = t;
    ctx.config = "topology=1,devnodes=1,memory=16g";
    int rc = skv_plugin_open_builtin(&p, "mock", &ctx, e);
    if (!rc)
        rc = skv_container_config_new(&cfg, e);
    skv_device_amount a[] = {{"3", "mock.device", 1000},
                             {"4", "mock.shares", 500}};
    if (!rc)
        rc = skv_plugin_container_config(p, cfg, a, 2, e);
    if (!rc)
        ck_assert_uint_eq(skv_container_config_device_count(cfg), 2);
    skv_container_config_free(cfg);
    skv_plugin_free(p);
    return rc;
}

START_TEST(test_out_of_memory)
{
    skv_allocator al = {SKV_ALLOCATOR_VERSION, fail_malloc, fail_realloc,
                        fail_free, NULL};
    skv_topo *t = load_dgx2();
    long k;
    for (k = 0; k < 100000; k++) {
        skv_error e = SKV_ERROR_INIT;
        allocs_left = k;
        SKV_CK_OK(skv_set_allocator(&al, NULL), NULL);
        int rc = plugin_cycle(t, &e);
        SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
        if (rc == 0)
            break;
        ck_assert_msg(rc == SKV_ENOMEM, "k=%ld: %s", k, e.message);
    }
    ck_assert(k > 10 && k < 100000);
    skv_topo_free(t);
}
END_TEST

Suite *skv_test_suite_plugin(void);
Suite *skv_test_suite_plugin(void)
{
    Suite *s = suite_create("plugin");
    TCase *tc = tcase_create("plugin");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_builtin_names);
    tcase_add_test(tc, test_cpu_plugin_dgx2);
    tcase_add_test(tc, test_mem_plugin_and_map);
    tcase_add_test(tc, test_disallowed_topology);
    tcase_add_test(tc, test_mock_from_topology);
    tcase_add_test(tc, test_mock_config);
    tcase_add_test(tc, test_gpu_container_config);
    tcase_add_test(tc, test_cuda_without_nvml);
    tcase_add_test(tc, test_cuda_fake_nvml);
    tcase_add_test(tc, test_cuda_health);
    tcase_add_test(tc, test_mock_health);
    tcase_add_test(tc, test_out_of_tree);
    tcase_add_test(tc, test_ops_checks);
    tcase_add_test(tc, test_device_list);
    tcase_add_test(tc, test_container_config_api);
    tcase_add_test(tc, test_cpu_mem_stats);
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}
