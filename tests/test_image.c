/* Image store: names, import from a rootfs tarball, a docker-save archive
 * (whiteouts, opaque dirs) and an OCI layout (gzip layer), list, path,
 * remove; unsafe archives and corrupt manifests are refused and leave
 * nothing behind. Archives are built here with libarchive's writer.
 * SPDX-License-Identifier: Apache-2.0 */
#include <archive.h>
#include <archive_entry.h>
#include <sys/utsname.h>

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

/* First line of a shell command's output as a number. */
static uint64_t sh_u64(const char *cmd)
{
    char out[64];
    skv_test_sh_output(cmd, out, sizeof(out));
    return strtoull(out, NULL, 10);
}

/* Size and digest of imported images, checked against find/sha256sum;
 * hard links count once; an image without its info file (an older
 * import) gets its size computed again and no digest. */
START_TEST(test_image_info)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "bb", skv_rtfx_tarball, &e), &e);
    char *root = NULL, cmd[PATH_MAX * 3], sum[128], dig[SKV_IMAGE_DIGEST_MAX];
    SKV_CK_OK(skv_image_path(st, "bb", &root, &e), &e);
    snprintf(cmd, sizeof(cmd), "find %s -type f -printf '%%i %%s\\n' | "
             "sort -u | awk '{s+=$2} END {print s+0}'", root);
    uint64_t want = sh_u64(cmd), got = 0;
    ck_assert_uint_gt(want, 0);
    SKV_CK_OK(skv_image_size(st, "bb", &got, &e), &e);
    ck_assert_uint_eq(got, want);
    snprintf(cmd, sizeof(cmd), "sha256sum %s | cut -c1-64", skv_rtfx_tarball);
    skv_test_sh_output(cmd, sum, sizeof(sum));
    SKV_CK_OK(skv_image_digest(st, "bb", dig, sizeof(dig), &e), &e);
    ck_assert_int_eq(strncmp(dig, "sha256:", 7), 0);
    ck_assert_int_eq(strncmp(dig + 7, sum, 64), 0);
    /* An older import: no info file. */
    snprintf(cmd, sizeof(cmd), "rm %s/../info", root);
    ck_assert_int_eq(system(cmd), 0);
    SKV_CK_OK(skv_image_digest(st, "bb", dig, sizeof(dig), &e), &e);
    ck_assert_str_eq(dig, "");
    got = 0;
    SKV_CK_OK(skv_image_size(st, "bb", &got, &e), &e);
    ck_assert_uint_eq(got, want);
    snprintf(cmd, sizeof(cmd), "%s/../info", root);
    ck_assert_int_eq(access(cmd, F_OK), 0);   /* cached again */
    skv_free(root);
    /* Hard links: 3000 bytes under two names count once. */
    snprintf(cmd, sizeof(cmd), "set -e; d=%s/hl; mkdir -p $d/r; "
             "head -c 3000 /dev/zero > $d/r/a; ln $d/r/a $d/r/b; "
             "tar -C $d/r -cf $d/hl.tar .", skv_rtfx_root);
    ck_assert_int_eq(system(cmd), 0);
    char tar[PATH_MAX + 16];
    snprintf(tar, sizeof(tar), "%s/hl/hl.tar", skv_rtfx_root);
    SKV_CK_OK(skv_image_import_tar(st, "hl", tar, &e), &e);
    SKV_CK_OK(skv_image_size(st, "hl", &got, &e), &e);
    ck_assert_uint_eq(got, 3000);
    /* Bad input. */
    ck_assert_int_eq(skv_image_size(st, "nosuch", &got, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_image_digest(st, "nosuch", dig, sizeof(dig), &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv_image_digest(st, "bb", dig, 8, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_size(st, "bb", NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_size(st, "../x", &got, &e), SKV_EINVAL);
    SKV_CK_OK(skv_image_remove(st, "bb", &e), &e);
    SKV_CK_OK(skv_image_remove(st, "hl", &e), &e);
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
    /* A directory is only a docker-save or OCI layout. */
    ck_assert_int_eq(skv_image_import_tar(st, "x", skv_rtfx_root, &e),
                     SKV_EINVAL);
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
    ck_assert_int_eq(skv_image_import_tar(st, "evil", evil, &e), SKV_EPROTO);
    ck_assert_int_ne(access(outside, F_OK), 0);
    ck_assert_uint_eq(store_entries(), 0);
    skv_image_store_free(st);
}
END_TEST

/* One archive member: 'f' file with text, 'F' copy of a host file,
 * 'd' directory, 'l' symlink, 'h' hard link (to = target). */
typedef struct {
    char type;
    const char *name, *to;
    unsigned mode, uid;
} member;

static void put_data(struct archive *a, struct archive_entry *en,
                     const char *data, size_t len)
{
    archive_entry_set_size(en, (la_int64_t)len);
    ck_assert_int_eq(archive_write_header(a, en), ARCHIVE_OK);
    if (len)
        ck_assert_int_eq(archive_write_data(a, data, len), (la_ssize_t)len);
}

static void put_host_file(struct archive *a, struct archive_entry *en,
                          const char *host)
{
    FILE *f = fopen(host, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    put_data(a, en, buf, (size_t)n);
    free(buf);
}

static void write_archive(const char *path, bool gz, const member *m,
                          size_t n)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (gz)
        archive_write_add_filter_gzip(a);
    ck_assert_int_eq(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *en = archive_entry_new();
        archive_entry_set_pathname(en, m[i].name);
        archive_entry_set_perm(en, m[i].mode ? m[i].mode : 0644);
        archive_entry_set_uid(en, m[i].uid);
        archive_entry_set_gid(en, m[i].uid);
        archive_entry_set_filetype(en, m[i].type == 'd'   ? AE_IFDIR
                                       : m[i].type == 'l' ? AE_IFLNK
                                                          : AE_IFREG);
        if (m[i].type == 'l')
            archive_entry_set_symlink(en, m[i].to);
        if (m[i].type == 'h')
            archive_entry_set_hardlink(en, m[i].to);
        if (m[i].type == 'F')
            put_host_file(a, en, m[i].to);
        else
            put_data(a, en, m[i].type == 'f' ? m[i].to : "",
                     m[i].type == 'f' ? strlen(m[i].to) : 0);
        archive_entry_free(en);
    }
    ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

static char fx_path[6][PATH_MAX];

/* fx_path[i] = <scratch>/<name> */
static const char *scratch(int i, const char *name)
{
    snprintf(fx_path[i], sizeof(fx_path[i]), "%s/%s", skv_rtfx_root, name);
    return fx_path[i];
}

static bool in_image(skv_image_store *st, const char *name, const char *rel,
                     struct stat *out)
{
    char *root = NULL, p[PATH_MAX];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_image_path(st, name, &root, &e), &e);
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    skv_free(root);
    struct stat tmp;
    return lstat(p, out ? out : &tmp) == 0;
}

static void sha256_of(const char *path, char hex[65])
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(fscanf(p, "%64s", hex), 1);
    pclose(p);
}

/* A docker image config naming the layers' digests (rootfs.diff_ids), at
 * scratch slot 3; name receives its content-addressed name "<hex>.json". */
static void write_config(const char *const *layers, size_t n, char name[72])
{
    char doc[1024], hex[65];
    size_t len = (size_t)snprintf(doc, sizeof(doc), "{\"architecture\": "
                                  "\"amd64\", \"rootfs\": {\"type\": \"layers\", "
                                  "\"diff_ids\": [");
    for (size_t i = 0; i < n; i++) {
        sha256_of(layers[i], hex);
        len += (size_t)snprintf(doc + len, sizeof(doc) - len, "%s\"sha256:%s\"",
                                i ? ", " : "", hex);
    }
    /* Go's encoder escapes < and > in history entries */
    snprintf(doc + len, sizeof(doc) - len, "]}, \"history\": [{\"created_by\": "
             "\"\\u003cnone\\u003e\"}]}");
    write_file(scratch(3, "config.json"), doc);
    sha256_of(fx_path[3], hex);
    snprintf(name, 72, "%s.json", hex);
}

/* text with "@CFG@" replaced by cfg. */
static void subst(char *out, size_t cap, const char *text, const char *cfg)
{
    const char *at = strstr(text, "@CFG@");
    if (!at)
        snprintf(out, cap, "%s", text);
    else
        snprintf(out, cap, "%.*s%s%s", (int)(at - text), text, cfg, at + 5);
}

/* Layer 1: busybox, /etc/gone, /opq/old. Layer 2 (members deliberately
 * before the whiteouts): deletes /etc/gone, makes /opq opaque. */
enum { INTACT, BAD_LAYER, BAD_CONFIG };

static void build_docker_save(const char *out, const char *manifest, int corrupt)
{
    const member l1[] = {
        {'d', "bin", NULL, 0755, 0}, {'F', "bin/busybox", "/bin/busybox", 0755, 0},
        {'l', "bin/sh", "busybox", 0777, 0}, {'l', "bin/true", "busybox", 0777, 0},
        {'d', "etc", NULL, 0755, 0},
        {'f', "etc/gone", "bye\n", 0644, 0}, {'d', "opq", NULL, 0755, 0},
        {'f', "opq/old", "old\n", 0644, 0}, {'f', "etc/kept", "k\n", 0640, 1234}};
    const member l2[] = {
        {'d', "opq", NULL, 0750, 0}, {'f', "opq/new", "new\n", 0644, 0},
        {'f', "opq/.wh..wh..opq", "", 0644, 0},
        {'f', "etc/.wh.gone", "", 0644, 0}, {'f', "etc/added", "a\n", 0600, 0},
        {'f', "bin/true", "#!/bin/sh\n", 0755, 0}};
    write_archive(scratch(1, "l1.tar"), false, l1, 9);
    write_archive(scratch(2, "l2.tar"), false, l2, 6);
    const char *const ls[] = {fx_path[1], fx_path[2]};
    char cfg[72], man[2048];
    write_config(ls, 2, cfg);
    if (corrupt == BAD_LAYER) /* different bytes, same digest claimed */
        write_archive(fx_path[2], false, l2, 5);
    if (corrupt == BAD_CONFIG)
        write_file(fx_path[3], "{\"rootfs\": {\"diff_ids\": []}}");
    subst(man, sizeof(man), manifest, cfg);
    const member outer[] = {
        {'f', "manifest.json", man, 0644, 0}, {'F', cfg, fx_path[3], 0644, 0},
        {'d', "aaa", NULL, 0755, 0}, {'F', "aaa/layer.tar", fx_path[1], 0644, 0},
        {'d', "bbb", NULL, 0755, 0}, {'F', "bbb/layer.tar", fx_path[2], 0644, 0}};
    write_archive(out, false, outer, 6);
}

START_TEST(test_image_docker_save)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    build_docker_save(scratch(0, "save.tar"),
                      "[{\"Config\": \"@CFG@\", \"RepoTags\": [\"reg:5000/x/bb:1\"],\n"
                      " \"Layers\": [\"aaa/layer.tar\", \"bbb/layer.tar\"]},"
                      " {\"RepoTags\": null, \"Layers\": [\"x\"]}]\n", INTACT);
    /* two images: the name must choose one, else they are listed */
    ck_assert_int_eq(skv_image_import_tar(st, "saved", fx_path[0], &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "reg:5000/x/bb:1"));
    ck_assert_ptr_nonnull(strstr(e.message, "<untagged>"));
    ck_assert_ptr_nonnull(strstr(e.message, "'saved'"));
    ck_assert_uint_eq(store_entries(), 0);
    SKV_CK_OK(skv_image_import_tar(st, "bb:1", fx_path[0], &e), &e);
    SKV_CK_OK(skv_image_remove(st, "bb:1", &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "bb", fx_path[0], &e), &e);
    struct stat sb;
    ck_assert(in_image(st, "bb", "bin/busybox", &sb));
    ck_assert(S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0755);
    ck_assert(in_image(st, "bb", "bin/sh", &sb) && S_ISLNK(sb.st_mode));
    /* A later layer replaces a symlink with a file. */
    ck_assert(in_image(st, "bb", "bin/true", &sb) && S_ISREG(sb.st_mode));
    ck_assert(!in_image(st, "bb", "etc/gone", NULL));
    ck_assert(in_image(st, "bb", "etc/added", &sb));
    ck_assert_uint_eq(sb.st_mode & 0777, 0600);
    ck_assert(in_image(st, "bb", "etc/kept", &sb));
    ck_assert_uint_eq(sb.st_uid, 1234);
    ck_assert_uint_eq(sb.st_mode & 0777, 0640);
    ck_assert(!in_image(st, "bb", "opq/old", NULL));
    ck_assert(in_image(st, "bb", "opq/new", NULL));
    ck_assert(!in_image(st, "bb", "opq/.wh..wh..opq", NULL));
    ck_assert(!in_image(st, "bb", "etc/.wh.gone", NULL));
    ck_assert(!in_image(st, "bb", "manifest.json", NULL));
    ck_assert_int_eq(skv_image_import(st, "x", fx_path[0],
                                      (skv_image_format)9, &e), SKV_EINVAL);
    SKV_CK_OK(skv_image_remove(st, "bb", &e), &e);
    ck_assert_uint_eq(store_entries(), 0);
    skv_image_store_free(st);
}
END_TEST

/* Move `path` to <layout>/blobs/sha256/<hex>; hex returned. */
static void to_blob(const char *layout, const char *path, char hex[65])
{
    char dst[PATH_MAX * 2];
    sha256_of(path, hex);
    snprintf(dst, sizeof(dst), "%s/blobs/sha256/%s", layout, hex);
    ck_assert_int_eq(rename(path, dst), 0);
}

START_TEST(test_image_oci_layout)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    const char *lay = scratch(0, "oci");
    char cmd[PATH_MAX * 3], hex[65], doc[1024], lhex[65];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/blobs/sha256", lay);
    ck_assert_int_eq(system(cmd), 0);
    const member l1[] = {
        {'d', "./bin", NULL, 0755, 0}, {'F', "./bin/busybox", "/bin/busybox", 0755, 0},
        {'h', "./bin/ls", "./bin/busybox", 0755, 0},
        {'l', "./bin/abs", "/bin/busybox", 0777, 0}};
    write_archive(scratch(1, "layer.tar.gz"), true, l1, 4);
    to_blob(lay, fx_path[1], lhex);
    snprintf(doc, sizeof(doc), "{\"schemaVersion\": 2, \"config\": {\"digest\": "
             "\"sha256:%s\"}, \"layers\": [{\"mediaType\": \"application/vnd."
             "oci.image.layer.v1.tar+gzip\", \"digest\": \"sha256:%s\", "
             "\"size\": 1}]}", lhex, lhex);
    write_file(scratch(2, "manifest"), doc);
    to_blob(lay, fx_path[2], hex);
    snprintf(doc, sizeof(doc), "{\"schemaVersion\":2,\"manifests\":[{"
             "\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
             "\"digest\":\"sha256:%s\",\"size\":-1.5e2,\"annotations\":{\"a\":"
             "[true,null,\"\\u0041\\n\"]}}]}", hex);
    write_file(scratch(3, "oci/index.json"), doc);
    write_file(scratch(3, "oci/oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
    snprintf(cmd, sizeof(cmd), "tar -C %s -cf %s/oci.tar .", lay, skv_rtfx_root);
    ck_assert_int_eq(system(cmd), 0);
    SKV_CK_OK(skv_image_import(st, "oci", scratch(4, "oci.tar"),
                               SKV_IMAGE_FORMAT_OCI_LAYOUT, &e), &e);
    SKV_CK_OK(skv_image_import_tar(st, "oci-auto", fx_path[4], &e), &e);
    SKV_CK_OK(skv_image_import(st, "oci-dir", lay, SKV_IMAGE_FORMAT_AUTO, &e),
              &e);
    struct stat a, b;
    ck_assert(in_image(st, "oci-dir", "bin/busybox", &a));
    ck_assert(in_image(st, "oci-dir", "bin/ls", &b));
    ck_assert(a.st_ino == b.st_ino && (a.st_mode & 0111));
    ck_assert(in_image(st, "oci", "bin/abs", &a) && S_ISLNK(a.st_mode));
    ck_assert(in_image(st, "oci-auto", "bin/busybox", NULL));
    /* A rootfs import of a directory, and a layout without oci-layout. */
    ck_assert_int_eq(skv_image_import(st, "x", lay, SKV_IMAGE_FORMAT_ROOTFS,
                                      &e), SKV_EINVAL);
    ck_assert_int_eq(skv_image_import(st, "x", skv_rtfx_tarball,
                                      SKV_IMAGE_FORMAT_OCI_LAYOUT, &e),
                     SKV_EPROTO);
    ck_assert_uint_eq(store_entries(), 3);
    SKV_CK_OK(skv_image_remove(st, "oci", &e), &e);
    SKV_CK_OK(skv_image_remove(st, "oci-auto", &e), &e);
    SKV_CK_OK(skv_image_remove(st, "oci-dir", &e), &e);
    skv_image_store_free(st);
}
END_TEST

/* Each archive must be refused with `code`, leaving nothing anywhere. */
static void refuse(skv_image_store *st, const member *m, size_t n, int code,
                   const char *why)
{
    skv_error e = SKV_ERROR_INIT;
    write_archive(scratch(0, "bad.tar"), false, m, n);
    int rc = skv_image_import_tar(st, "bad", fx_path[0], &e);
    ck_assert_msg(rc == code && strstr(e.message, why), "%s: %d %s",
                  m[n - 1].name, rc, e.message);
    ck_assert_uint_eq(store_entries(), 0);
    ck_assert_int_ne(access(scratch(5, "outside/pwned"), F_OK), 0);
}

START_TEST(test_image_unsafe_archives)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    char out_dir[PATH_MAX], out_file[PATH_MAX];
    snprintf(out_dir, sizeof(out_dir), "%s", scratch(5, "outside"));
    snprintf(out_file, sizeof(out_file), "%s/pwned", out_dir);
    ck_assert_int_eq(mkdir(out_dir, 0755), 0);
    const member abs_[] = {{'f', "ok", "x", 0644, 0},
                           {'f', out_file, "x", 0644, 0}};
    refuse(st, abs_, 2, SKV_EPROTO, "unsafe member");
    const member dotdot[] = {{'f', "ok", "x", 0644, 0},
                             {'f', "a/../../outside/pwned", "x", 0644, 0}};
    refuse(st, dotdot, 2, SKV_EPROTO, "unsafe member");
    /* Absolute target, then a member through it: not followed. */
    const member through[] = {{'l', "esc", out_dir, 0777, 0},
                              {'f', "esc/pwned", "x", 0644, 0}};
    refuse(st, through, 2, SKV_EPROTO, "through symlink");
    const member up[] = {{'d', "d", NULL, 0755, 0},
                         {'l', "d/up", "../../outside", 0777, 0}};
    refuse(st, up, 2, SKV_EPROTO, "escapes the root");
    const member hard[] = {{'h', "h", "../outside/x", 0644, 0}};
    refuse(st, hard, 1, SKV_EPROTO, "hard link");
    /* A whiteout below a lower layer's symlink must not delete outside. */
    char keep[PATH_MAX + 8];
    snprintf(keep, sizeof(keep), "%s/keep", out_dir);
    write_file(keep, "k");
    const member l1[] = {{'l', "lnk", out_dir, 0777, 0}};
    const member l2[] = {{'f', "lnk/.wh.keep", "", 0644, 0}};
    write_archive(scratch(1, "l1.tar"), false, l1, 1);
    write_archive(scratch(2, "l2.tar"), false, l2, 1);
    const char *const ls[] = {fx_path[1], fx_path[2]};
    char cfg[72], man[256];
    write_config(ls, 2, cfg);
    subst(man, sizeof(man), "[{\"Config\":\"@CFG@\",\"Layers\":[\"l1.tar\",\"l2.tar\"]}]", cfg);
    const member outer[] = {
        {'f', "manifest.json", man, 0644, 0}, {'F', cfg, fx_path[3], 0644, 0},
        {'F', "l1.tar", fx_path[1], 0644, 0}, {'F', "l2.tar", fx_path[2], 0644, 0}};
    refuse(st, outer, 4, SKV_EPROTO, "out of the image root");
    ck_assert_int_eq(access(keep, F_OK), 0);
    skv_image_store_free(st);
}
END_TEST

START_TEST(test_image_corrupt_manifests)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    const char *bad[] = {
        "[{\"Layers\": [\"aaa/layer.tar\"",               /* truncated */
        "[{\"Layers\": \"aaa/layer.tar\"}]",              /* not an array */
        "[{\"Layers\": [\"aaa/layer.tar\", 7]}]",         /* not a string */
        "[{\"Layers\": [\"aaa/layer.tar\"]}] trailing",   /* junk after */
        "[{\"Layers\": [\"aaa/layer.tar\",]}]",           /* trailing comma */
        "[{\"Layers\": [\"../l1.tar\"]}]",                /* escapes */
        "[{\"Layers\": [\"/etc/passwd\"]}]",              /* absolute */
        "[{\"Layers\": [\"ccc/layer.tar\"]}]",            /* missing */
        "[{\"Layers\": []}]",                             /* no layers */
        "[]", "{}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "[{\"Config\": \"@CFG@\", \"Layers\": [\"bbb/layer.tar\", "
        "\"aaa/layer.tar\"]}]",                          /* layers swapped */
        "[{\"Config\": \"@CFG@\", \"Layers\": [\"aaa/layer.tar\"]}]", /* count */
        "[{\"Config\": \"aaa/layer.tar\", \"Layers\": [\"aaa/layer.tar\"]}]",
        "[{\"Config\": \"@CFG@\", \"Layers\": [\"aaa/layer.tar\", "
        "\"bbb/layer.tar\"], \"RepoTags\": 7}]",
        "[{\"Layers\": [\"a\\u00e9\"]}]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        build_docker_save(scratch(0, "save.tar"), bad[i], INTACT);
        int rc = skv_image_import_tar(st, "bad", fx_path[0], &e);
        ck_assert_msg(rc == SKV_EPROTO, "manifest %zu: %d %s", i, rc,
                      e.message);
        ck_assert_uint_eq(store_entries(), 0);
    }
    ck_assert_ptr_nonnull(strstr(e.message, "manifest.json"));
    skv_image_store_free(st);
}
END_TEST

/* An image in the OCI layout `lay`: one gzip layer holding /etc/which =
 * `which`, a config and a manifest, all as blobs; mhex / lhex receive the
 * manifest's and the layer's digests. */
static void oci_blobs(const char *lay, const char *which, char mhex[65],
                      char lhex[65])
{
    char doc[512], chex[65];
    const member l[] = {{'d', "./etc", NULL, 0755, 0},
                        {'f', "./etc/which", which, 0644, 0}};
    write_archive(scratch(1, "layer.tar.gz"), true, l, 2);
    to_blob(lay, fx_path[1], lhex);
    write_file(scratch(2, "config"), "{\"rootfs\": {\"type\": \"layers\"}}");
    to_blob(lay, fx_path[2], chex);
    snprintf(doc, sizeof(doc), "{\"schemaVersion\": 2, \"config\": {\"digest\": "
             "\"sha256:%s\"}, \"layers\": [{\"digest\": \"sha256:%s\"}]}", chex,
             lhex);
    write_file(scratch(2, "manifest"), doc);
    to_blob(lay, fx_path[2], mhex);
}

static void which_is(skv_image_store *st, const char *name, const char *want)
{
    char *root = NULL, p[PATH_MAX], got[32] = "";
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_image_path(st, name, &root, &e), &e);
    snprintf(p, sizeof(p), "%s/etc/which", root);
    skv_free(root);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(got, sizeof(got), f));
    fclose(f);
    ck_assert_str_eq(got, want);
}

static void append_byte(const char *lay, const char *hex)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/blobs/sha256/%s", lay, hex);
    FILE *f = fopen(p, "a");
    ck_assert_ptr_nonnull(f);
    fputc('x', f);
    fclose(f);
}

static const char *host_goarch(void)
{
    struct utsname u;
    ck_assert_int_eq(uname(&u), 0);
    return !strcmp(u.machine, "x86_64")    ? "amd64"
           : !strcmp(u.machine, "aarch64") ? "arm64"
                                           : NULL;
}

START_TEST(test_image_digests)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    const char *man = "[{\"Config\": \"@CFG@\", \"Layers\": [\"aaa/layer.tar\", "
                      "\"bbb/layer.tar\"]}]";
    build_docker_save(scratch(0, "save.tar"), man, BAD_LAYER);
    ck_assert_int_eq(skv_image_import_tar(st, "bad", fx_path[0], &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "'bbb/layer.tar' is corrupt"));
    ck_assert_uint_eq(store_entries(), 0);
    build_docker_save(scratch(0, "save.tar"), man, BAD_CONFIG);
    ck_assert_int_eq(skv_image_import_tar(st, "bad", fx_path[0], &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, ".json' is corrupt"));
    ck_assert_uint_eq(store_entries(), 0);

    /* OCI layout directory: the layer, then the manifest blob tampered */
    char lay[PATH_MAX], cmd[PATH_MAX + 32], doc[1024], a[65], la[65], b[65], lb[65];
    snprintf(lay, sizeof(lay), "%s/lay", skv_rtfx_root);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/blobs/sha256", lay);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/oci-layout", lay);
    write_file(cmd, "{\"imageLayoutVersion\":\"1.0.0\"}");
    oci_blobs(lay, "a", a, la);
    oci_blobs(lay, "b", b, lb);
    snprintf(cmd, sizeof(cmd), "%s/index.json", lay);
    snprintf(doc, sizeof(doc), "{\"manifests\": [{\"digest\": \"sha256:%s\"}]}", a);
    write_file(cmd, doc);
    SKV_CK_OK(skv_image_import(st, "good", lay, SKV_IMAGE_FORMAT_AUTO, &e), &e);
    which_is(st, "good", "a");
    append_byte(lay, la);
    ck_assert_int_eq(skv_image_import(st, "bad", lay, SKV_IMAGE_FORMAT_AUTO, &e),
                     SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, la));
    ck_assert_ptr_nonnull(strstr(e.message, "corrupt"));
    snprintf(doc, sizeof(doc), "{\"manifests\": [{\"digest\": \"sha256:%s\"}]}", b);
    write_file(cmd, doc);
    append_byte(lay, b);
    ck_assert_int_eq(skv_image_import(st, "bad", lay, SKV_IMAGE_FORMAT_AUTO, &e),
                     SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, b));
    ck_assert_uint_eq(store_entries(), 1);
    SKV_CK_OK(skv_image_remove(st, "good", &e), &e);
    skv_image_store_free(st);
}
END_TEST

START_TEST(test_image_choice)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_image_store *st = NULL;
    SKV_CK_OK(skv_image_store_open(&st, skv_rtfx_images, &e), &e);
    char lay[PATH_MAX], idx[PATH_MAX + 16], doc[1024], a[65], b[65], h[65], o[65], l[65];
    snprintf(lay, sizeof(lay), "%s/multi", skv_rtfx_root);
    snprintf(idx, sizeof(idx), "mkdir -p %s/blobs/sha256", lay);
    ck_assert_int_eq(system(idx), 0);
    snprintf(idx, sizeof(idx), "%s/oci-layout", lay);
    write_file(idx, "{\"imageLayoutVersion\":\"1.0.0\"}");
    snprintf(idx, sizeof(idx), "%s/index.json", lay);
    oci_blobs(lay, "a", a, l);
    oci_blobs(lay, "b", b, l);
    snprintf(doc, sizeof(doc), "{\"manifests\": [{\"digest\": \"sha256:%s\", "
             "\"annotations\": {\"io.containerd.image.name\": \"docker.io/"
             "library/alpha:1\", \"org.opencontainers.image.ref.name\": \"1\"}}, "
             "{\"digest\": \"sha256:%s\", \"annotations\": {\"org.opencontainers."
             "image.ref.name\": \"beta:2\"}}]}", a, b);
    write_file(idx, doc);
    SKV_CK_OK(skv_image_import(st, "beta", lay, SKV_IMAGE_FORMAT_AUTO, &e), &e);
    which_is(st, "beta", "b");
    SKV_CK_OK(skv_image_import(st, "alpha:1", lay, SKV_IMAGE_FORMAT_AUTO, &e), &e);
    which_is(st, "alpha:1", "a");
    ck_assert_int_eq(skv_image_import(st, "gamma", lay, SKV_IMAGE_FORMAT_AUTO, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "docker.io/library/alpha:1, beta:2"));
    ck_assert_uint_eq(store_entries(), 2);
    /* a multi-platform index: this host's platform is taken */
    const char *ga = host_goarch();
    if (ga) {
        oci_blobs(lay, "host", h, l);
        oci_blobs(lay, "other", o, l);
        snprintf(doc, sizeof(doc), "{\"manifests\": [{\"digest\": \"sha256:%s\", "
                 "\"platform\": {\"architecture\": \"fakearch\", \"os\": "
                 "\"linux\"}}, {\"digest\": \"sha256:%s\", \"platform\": "
                 "{\"architecture\": \"%s\", \"os\": \"linux\"}}]}", o, h, ga);
        write_file(idx, doc);
        SKV_CK_OK(skv_image_import(st, "plat", lay, SKV_IMAGE_FORMAT_AUTO, &e), &e);
        which_is(st, "plat", "host");
        SKV_CK_OK(skv_image_remove(st, "plat", &e), &e);
        /* two images for no platform in particular: refused, listed */
        snprintf(doc, sizeof(doc), "{\"manifests\": [{\"digest\": \"sha256:%s\"},"
                 " {\"digest\": \"sha256:%s\"}]}", o, h);
        write_file(idx, doc);
        ck_assert_int_eq(skv_image_import(st, "plat", lay, SKV_IMAGE_FORMAT_AUTO,
                                          &e), SKV_EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "<untagged>, <untagged>"));
    }
    SKV_CK_OK(skv_image_remove(st, "beta", &e), &e);
    SKV_CK_OK(skv_image_remove(st, "alpha:1", &e), &e);
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
    tcase_add_test(tc, test_image_info);
    tcase_add_test(tc, test_image_bad_tarballs);
    tcase_add_test(tc, test_image_docker_save);
    tcase_add_test(tc, test_image_oci_layout);
    tcase_add_test(tc, test_image_unsafe_archives);
    tcase_add_test(tc, test_image_corrupt_manifests);
    tcase_add_test(tc, test_image_digests);
    tcase_add_test(tc, test_image_choice);
    suite_add_tcase(s, tc);
    return s;
}
