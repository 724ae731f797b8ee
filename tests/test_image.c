/* Image store: names, import from a rootfs tarball, list, path, remove;
 * bad tarballs leave nothing behind and cannot write outside the store.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_test.h"
#include "rt_fixture.h"

static void setup_plain(void)
{
    skv_rtfx_setup(false);
}

START_TEST(test_image_names)
{
    skv_error e = SKV_ERROR_INIT;
    const char *bad[] = {"", "../x", "a/b", ".hidden", "x..y", "-x", "a b",
                         "a\nb"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(skv_image_name_check(bad[i], &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_name_check(NULL, &e), SKV_EINVAL);
    char longname[140];
    memset(longname, 'a', 129);
    longname[129] = '\0';
    ck_assert_int_eq(skv_image_name_check(longname, &e), SKV_EINVAL);
    SKV_CK_OK(skv_image_name_check("busybox:1.35-r1_x.y", &e), &e);
    skv_image_store *st = NULL;
    ck_assert_int_eq(skv_image_store_open(&st, "relative", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_store_open(&st, "/tmp/a:b", &e), SKV_EINVAL);
    ck_assert_ptr_null(st);
    skv_image_store_free(NULL);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Nothing but the named images (no .tmp-* leftovers) in the store. */
static size_t store_entries(void)
{
    DIR *d = opendir(skv_rtfx_images);
    size_t n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

START_TEST(test_image_import_list_remove)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "bb", skv_rtfx_tarball, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "aa:1", skv_rtfx_tarball, &e), &e);
    ck_assert_int_eq(skv_image_import_tar(st, "bb", skv_rtfx_tarball, &e),
                     SKV_EEXIST);
    char **names = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_image_list(st, &names, &n, &e), &e);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(names[0], "aa:1");
    ck_assert_str_eq(names[1], "bb");
    skv_image_list_free(names, n);
    char *path = NULL, bin[PATH_MAX];
    SKV_CK_OK(skv_image_path(st, "bb", &path, &e), &e);
    snprintf(bin, sizeof(bin), "%s/bin/busybox", path);
    ck_assert_int_eq(access(bin, X_OK), 0);
    skv_free(path);
    SKV_CK_OK(skv_image_remove(st, "bb", &e), &e);
    ck_assert_int_eq(skv_image_remove(st, "bb", &e), SKV_ENOENT);
    ck_assert_int_eq(skv_image_path(st, "bb", &path, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_image_remove(st, "../images", &e), SKV_EINVAL);
    SKV_CK_OK(skv_image_remove(st, "aa:1", &e), &e);
    ck_assert_uint_eq(store_entries(), 0);
    skv_image_store_free(st);
}
END_TEST

START_TEST(test_image_bad_tarballs)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    char garbage[PATH_MAX], evil[PATH_MAX], cmd[PATH_MAX * 3], outside[PATH_MAX];
    ck_assert_int_eq(skv_image_import_tar(st, "x", "/no/such.tar", &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv_image_import_tar(st, "x", "rel.tar", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_import_tar(st, "x", skv_rtfx_root, &e),
                     SKV_ENOENT);
    snprintf(garbage, sizeof(garbage), "%s/garbage.tar", skv_rtfx_root);
    write_file(garbage, "this is not a tar archive at all\n");
    ck_assert_int_eq(skv_image_import_tar(st, "x", garbage, &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "garbage.tar"));
    /* A member named ../escape must not land beside the store. */
    snprintf(evil, sizeof(evil), "%s/evil.tar", skv_rtfx_root);
    snprintf(outside, sizeof(outside), "%s/escape", skv_rtfx_images);
    snprintf(cmd, sizeof(cmd), "cd %s && echo x > escape && tar -cf %s "
             "--transform 's,^,../../,' escape 2>/dev/null && rm escape",
             skv_rtfx_root, evil);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(skv_image_import_tar(st, "evil", evil, &e), SKV_EIO);
    ck_assert_int_ne(access(outside, F_OK), 0);
    ck_assert_uint_eq(store_entries(), 0);
    skv_image_store_free(st);
}
END_TEST

Suite *skv_test_suite_image(void);
Suite *skv_test_suite_image(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_image_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("store");
    tcase_add_unchecked_fixture(tc, setup_plain, skv_rtfx_teardown);
    tcase_add_test(tc, test_image_import_list_remove);
    tcase_add_test(tc, test_image_bad_tarballs);
    suite_add_tcase(s, tc);
    return s;
}
