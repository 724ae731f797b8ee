/* What the interactive image needs of the image store. Its own metadata
 * (/etc/sokovan/image.json, skv_image_meta_get): absent -> none; a valid
 * document -> its services and command, unknown members ignored;
 * malformed, oversized, or reached through a symlink (a link to a host
 * file, or a linked directory on the way) -> SKV_EPROTO naming the
 * document, nothing returned. And UTF-8 member names in pax headers (a
 * Debian root file system has them) import as the same bytes although the
 * test process runs in the "C" locale.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_test.h"
#include "rt_fixture.h"
#include "oci_layout.h"

static void setup_plain(void)
{
    skv_rtfx_setup(false);
}

static char g_root[PATH_MAX];   /* the test image's rootfs */

static void put_doc(const char *text)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/etc/sokovan/image.json", g_root);
    unlink(p);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int meta_rc(skv_image_store *st, const char *text, skv_error *e)
{
    skv_image_meta m;
    put_doc(text);
    int rc = skv_image_meta_get(st, "m", &m, e);
    if (rc)   /* a failure returns nothing */
        ck_assert_msg(!m.services && !m.command && !m.n_services &&
                      !m.n_command, "partial metadata on failure");
    skv_image_meta_clear(&m);
    return rc;
}

static void refused(skv_image_store *st, const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = meta_rc(st, text, &e);
    ck_assert_msg(rc == SKV_EPROTO && strstr(e.message, "image.json"),
                  "%.60s: %s %s", text, skv_err_name(rc), e.message);
}

START_TEST(test_image_meta)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    skv_image_meta m;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "m", skv_rtfx_tarball, &e), &e);
    char *path = NULL;
    SKV_CK_OK(skv_image_path(st, "m", &path, &e), &e);
    snprintf(g_root, sizeof g_root, "%s", path);
    skv_free(path);
    /* bad arguments, no such image, no document */
    ck_assert_int_eq(skv_image_meta_get(st, "m", NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_meta_get(st, "nope", &m, &e), SKV_ENOENT);
    SKV_CK_OK(skv_image_meta_get(st, "m", &m, &e), &e);
    ck_assert_uint_eq(m.n_services + m.n_command, 0);
    skv_image_meta_clear(&m);
    skv_image_meta_clear(NULL);
    char cmd[PATH_MAX * 2 + 64];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/etc/sokovan", g_root);
    ck_assert_int_eq(system(cmd), 0);
    /* a document: lists in order, other members skipped */
    put_doc("{\"version\": {\"x\": [1, 2]}, \"services\": [\"jupyter=8888/"
            "prefix\", \"ssh=2200/tcp\"],\n \"command\": [\"/bin/sh\", "
            "\"-c\", \"echo \\\"hi\\\"\"]}\n");
    SKV_CK_OK(skv_image_meta_get(st, "m", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 2);
    ck_assert_str_eq(m.services[0], "jupyter=8888/prefix");
    ck_assert_str_eq(m.services[1], "ssh=2200/tcp");
    ck_assert_uint_eq(m.n_command, 3);
    ck_assert_str_eq(m.command[2], "echo \"hi\"");
    skv_image_meta_clear(&m);
    ck_assert_ptr_null(m.services);
    /* malformed */
    refused(st, "");
    refused(st, "[]");
    refused(st, "{\"services\": \"ssh=22\"}");
    refused(st, "{\"command\": [1]}");
    refused(st, "{\"services\": [\"a=1\"]} trailing");
    refused(st, "{\"services\": [\"a=1\",]}");
    char many[2048] = "{\"services\": [";
    for (int i = 0; i <= SKV_IMAGE_META_MAX_SERVICES; i++)
        strcat(many, i ? ",\"s=1\"" : "\"s=1\"");
    strcat(many, "]}");
    refused(st, many);
    char *big = malloc(70 * 1024);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', 70 * 1024 - 3);
    memcpy(big + 70 * 1024 - 3, "{}", 3);
    refused(st, big);
    free(big);
    /* a symlink to a host file, then a linked directory on the way */
    snprintf(cmd, sizeof cmd, "ln -sf /etc/hostname %s/etc/sokovan/image.json",
             g_root);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(skv_image_meta_get(st, "m", &m, &e), SKV_EPROTO);
    ck_assert_msg(strstr(e.message, "symlink"), "%s", e.message);
    snprintf(cmd, sizeof cmd, "rm -rf %s/etc/sokovan && mkdir -p %s/tmp/x && "
             "echo '{\"command\": [\"x\"]}' > %s/tmp/x/image.json && "
             "ln -s ../tmp/x %s/etc/sokovan", g_root, g_root, g_root, g_root);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(skv_image_meta_get(st, "m", &m, &e), SKV_EPROTO);
    skv_image_store_free(st);
}
END_TEST

/* An OCI layout of a one-file rootfs whose config carries label=value. */
static const char *labelled(const char *key, const char *value)
{
    static char lay[PATH_MAX + 16];
    char rfs[PATH_MAX + 16], cfg[8192], cmd[PATH_MAX * 2 + 64];
    snprintf(lay, sizeof lay, "%s/lay", skv_rtfx_root);
    snprintf(rfs, sizeof rfs, "%s/lrfs", skv_rtfx_root);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/etc && echo hi > %s/etc/hi", rfs,
             rfs);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(oci_config_doc(cfg, sizeof cfg, key, value), 0);
    ck_assert_int_eq(oci_layout_build(lay, rfs, cfg), 0);
    return lay;
}

static void label_refused(skv_image_store *st, const char *value,
                          const char *why)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_image_import(st, "bad", labelled(SKV_IMAGE_LABEL_SERVICES,
                                                  value),
                              SKV_IMAGE_FORMAT_AUTO, &e);
    ck_assert_msg(rc == SKV_EPROTO && strstr(e.message,
                                             SKV_IMAGE_LABEL_SERVICES) &&
                  strstr(e.message, why), "'%.80s': %s %s", value,
                  skv_err_name(rc), e.message);
    char p[PATH_MAX + 8];
    snprintf(p, sizeof p, "%s/bad", skv_rtfx_images);
    ck_assert_msg(access(p, F_OK) != 0, "a refused import left %s", p);
}

/* Service ports from an OCI image config's ai.sokovan.service-ports label:
 * read at import, listed by skv_image_meta_get; image.json's services win
 * whole; a bad label fails the import naming it and leaves nothing. */
START_TEST(test_image_meta_label)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    skv_image_meta m;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    SKV_CK_OK(skv_image_import(st, "l", labelled(SKV_IMAGE_LABEL_SERVICES,
                                                 "jupyter:prefix:8888, "
                                                 "ssh:tcp:2200,web:http:80"),
                               SKV_IMAGE_FORMAT_AUTO, &e), &e);
    SKV_CK_OK(skv_image_meta_get(st, "l", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 3);
    ck_assert_str_eq(m.services[0], "jupyter=8888/prefix");
    ck_assert_str_eq(m.services[1], "ssh=2200/tcp");
    ck_assert_str_eq(m.services[2], "web=80/http");
    ck_assert_uint_eq(m.n_command, 0);
    skv_image_meta_clear(&m);
    /* image.json with services wins whole; with a command only, the
     * label's services stay */
    char *path = NULL;
    SKV_CK_OK(skv_image_path(st, "l", &path, &e), &e);
    snprintf(g_root, sizeof g_root, "%s", path);
    skv_free(path);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/etc/sokovan", g_root);
    ck_assert_int_eq(system(cmd), 0);
    put_doc("{\"services\": [\"nb=9999/http\"]}");
    SKV_CK_OK(skv_image_meta_get(st, "l", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 1);
    ck_assert_str_eq(m.services[0], "nb=9999/http");
    skv_image_meta_clear(&m);
    put_doc("{\"command\": [\"/bin/x\"]}");
    SKV_CK_OK(skv_image_meta_get(st, "l", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 3);
    ck_assert_uint_eq(m.n_command, 1);
    skv_image_meta_clear(&m);
    /* no label, a null Labels: no services */
    SKV_CK_OK(skv_image_import(st, "o", labelled("org.example.x", "y"),
                               SKV_IMAGE_FORMAT_AUTO, &e), &e);
    SKV_CK_OK(skv_image_meta_get(st, "o", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 0);
    SKV_CK_OK(skv_image_import(st, "n", labelled(NULL, NULL),
                               SKV_IMAGE_FORMAT_AUTO, &e), &e);
    SKV_CK_OK(skv_image_meta_get(st, "n", &m, &e), &e);
    ck_assert_uint_eq(m.n_services, 0);
    /* bad labels */
    label_refused(st, ",", "no entries");   /* "" is no label */
    label_refused(st, "jupyter:8888", "malformed entry 'jupyter:8888'");
    label_refused(st, "jupyter:http:88x", "malformed entry");
    label_refused(st, "ssh:tcp:2200,web:ftp:21", "'web:ftp:21'");
    label_refused(st, "Web:http:80", "'Web:http:80'");
    label_refused(st, "web:http:70000", "'web:http:70000'");
    label_refused(st, "web:http:0", "'web:http:0'");
    char many[1024] = "";
    for (int i = 0; i <= SKV_IMAGE_META_MAX_SERVICES; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%ss%d:tcp:%d",
                 i ? "," : "", i, 1000 + i);
    label_refused(st, many, "too many entries");
    char *huge = malloc(5000);
    ck_assert_ptr_nonnull(huge);
    memset(huge, 'a', 4999);
    huge[4999] = '\0';
    label_refused(st, huge, "not a string of at most 4 KiB");
    free(huge);
    label_refused(st, "web:http:80\\u0000", "not a string");
    skv_image_store_free(st);
}
END_TEST

/* A pax archive (python3's tarfile) with a UTF-8 file name. */
START_TEST(test_image_utf8_names)
{
    SKV_RTFX_REQUIRE();
    char tarf[PATH_MAX + 16], cmd[PATH_MAX * 2 + 512], *path = NULL;
    snprintf(tarf, sizeof tarf, "%s/utf8.tar", skv_rtfx_root);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import io, sys, tarfile\n"
             "t = tarfile.open(sys.argv[1], \"w\", format=tarfile."
             "PAX_FORMAT)\nfor n, d in ((\"etc/F\\u0151tan\\u00fas."
             "pem\", b\"cert\"), (\"etc/plain\", b\"x\")):\n  i = "
             "tarfile.TarInfo(n); i.size = len(d); t.addfile(i, io.BytesIO(d"
             "))\nt.close()' %s", tarf);
    ck_assert_msg(system(cmd) == 0, "python3 tarfile failed");
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "u", tarf, &e), &e);
    SKV_CK_OK(skv_image_path(st, "u", &path, &e), &e);
    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s/etc/F\xc5\x91tan\xc3\xbas.pem", path);
    ck_assert_msg(access(f, R_OK) == 0, "%s is missing", f);
    skv_free(path);
    skv_image_store_free(st);
}
END_TEST

Suite *skv_test_suite_image_meta(void);
Suite *skv_test_suite_image_meta(void)
{
    Suite *s = suite_create("image_meta");
    TCase *tc = tcase_create("meta");
    tcase_add_unchecked_fixture(tc, setup_plain, skv_rtfx_teardown);
    tcase_add_test(tc, test_image_meta);
    tcase_add_test(tc, test_image_meta_label);
    tcase_add_test(tc, test_image_utf8_names);
    suite_add_tcase(s, tc);
    return s;
}
