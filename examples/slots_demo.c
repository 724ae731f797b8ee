/* slots_demo: resource-slot accounting through the public API only.
 *
 * Parses a node's capacity and a session's request, checks that the request
 * fits, books it (capacity - request), and prints the remaining capacity and
 * the request's dominant share (DRF). Exits non-zero if anything fails, so
 * `make check-example` proves the installed library and its pkg-config file
 * work.
 *
 *   usage: slots_demo [CAPACITY [REQUEST]]
 *
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include <sokovan.h>

static int fail(const char *what, int rc, const skv_error *err)
{
    fprintf(stderr, "slots_demo: %s: %s (%s)\n", what, err->message,
            skv_err_name(rc));
    return 1;
}

static int print_vector(const char *label, const skv_slots *v)
{
    skv_error err = SKV_ERROR_INIT;
    char *text = NULL;
    int rc = skv_slots_format(&text, v, &err);
    if (rc)
        return fail("format", rc, &err);
    printf("%-10s %s\n", label, text);
    skv_free(text);
    return 0;
}

/* Book the request against the capacity; prints what it does. */
static int book(skv_slots *capacity, const skv_slots *request)
{
    skv_error err = SKV_ERROR_INIT;
    const char *short_slot = NULL;
    skv_qty shortfall = 0;
    if (!skv_slots_fits(request, capacity)) {
        skv_slots_first_short(request, capacity, &short_slot, &shortfall);
        char q[SKV_QTY_FORMAT_MAX] = "?";
        skv_slot_kind kind = SKV_SLOT_COUNT;
        skv_slots_lookup(request, short_slot, &kind, NULL);
        skv_qty_format(q, sizeof(q), shortfall, kind);
        fprintf(stderr, "slots_demo: request does not fit: '%s' short by %s\n",
                short_slot, q);
        return 1;
    }
    double share = 0;
    const char *dominant = NULL;
    int rc = skv_slots_dominant_share(&share, &dominant, request, capacity, &err);
    if (rc)
        return fail("dominant share", rc, &err);
    if ((rc = skv_slots_sub(capacity, request, 0, &err)) != 0)
        return fail("book", rc, &err);
    printf("fits       yes\n");
    printf("dominant   %s (%.1f%% of the node)\n", dominant ? dominant : "-",
           share * 100.0);
    return print_vector("remaining", capacity);
}

int main(int argc, char **argv)
{
    const char *cap_text = argc > 1 ? argv[1] : "cpu=32,mem=256g,cuda.shares=4";
    const char *req_text = argc > 2 ? argv[2] : "cpu=4,mem=64GiB,cuda.shares=0.5";
    skv_error err = SKV_ERROR_INIT;
    skv_slot_registry *reg = NULL;
    skv_slots *capacity = NULL, *request = NULL;
    int status = 1, rc;
    printf("libsokovan %s\n", skv_version_string());
    if ((rc = skv_slot_registry_new_default(&reg, &err)) != 0)
        return fail("registry", rc, &err);
    if ((rc = skv_slots_parse(&capacity, cap_text, reg, &err)) != 0)
        fail("capacity", rc, &err);
    else if ((rc = skv_slots_parse(&request, req_text, reg, &err)) != 0)
        fail("request", rc, &err);
    else if (print_vector("capacity", capacity) == 0 &&
             print_vector("request", request) == 0)
        status = book(capacity, request);
    /* A bad request must be refused with a message naming the culprit. */
    skv_slots *bad = NULL;
    if (status == 0 &&
        skv_slots_parse(&bad, "cpu=0.0001", reg, &err) != SKV_EINVAL) {
        fprintf(stderr, "slots_demo: 'cpu=0.0001' was not refused\n");
        status = 1;
    } else if (status == 0) {
        printf("refused    cpu=0.0001: %s\n", err.message);
    }
    skv_slots_free(bad);
    skv_slots_free(request);
    skv_slots_free(capacity);
    skv_slot_registry_free(reg);
    return status;
}
