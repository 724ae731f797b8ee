/* Images' own metadata (services and a default command, image.json in the
 * image; skv_image_meta_get) as agents register it, and its one use: a
 * session.submit that names no command or no services gets the image's,
 * written into the body before it is stored (decide -> persist -> send:
 * the stored submit, restarts and `show` all see what the session runs).
 * The services' ports are published like --service's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_app.h"

void skv__mgr_image_meta_free(skv_image_meta *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        skv_image_meta_clear(&v[i]);
    skv__free(v);
}

static int strv_dup(char ***to, size_t *nto, char *const *from, size_t n)
{
    for (size_t i = 0; *to && i < *nto; i++)
        skv__free((*to)[i]);
    skv__free(*to);
    *to = NULL;
    *nto = 0;
    if (n == 0)
        return 0;
    if (!(*to = skv__calloc(n, sizeof **to)))
        return SKV_ENOMEM;
    for (size_t i = 0; i < n; i++, (*nto)++)
        if (!((*to)[i] = skv__strdup(from[i] ? from[i] : "")))
            return SKV_ENOMEM;
    return 0;
}

int skv__mgr_image_meta_copy(skv_image_meta *to,
                             const skv_proto_image_detail *d)
{
    if (strv_dup(&to->services, &to->n_services, d->services,
                 d->n_services) ||
        strv_dup(&to->command, &to->n_command, d->command, d->n_command))
        return SKV_ENOMEM;
    return 0;
}

/* The image's metadata from the first live agent of the session's group
 * that has it (agents built from one image archive agree), else NULL. */
static const skv_image_meta *image_meta(const skv_manager *m,
                                        const skv_proto_session_submit *s)
{
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if (a->state != SKV__AGENT_ALIVE || !a->image_meta ||
            strcmp(a->group, s->resource_group))
            continue;
        for (size_t j = 0; j < a->n_images; j++)
            if (!strcmp(a->images[j], s->image))
                return &a->image_meta[j];
    }
    return NULL;
}

static int add_port(skv_proto_session_submit *s, uint32_t port)
{
    for (size_t i = 0; i < s->n_ports; i++)
        if (s->ports[i] == port)
            return 0;
    uint32_t *v = skv__reallocarray(s->ports, s->n_ports + 1, sizeof *v);
    if (!v)
        return SKV_ENOMEM;
    v[s->n_ports++] = port;
    s->ports = v;
    return 0;
}

/* The image's services and their ports; a declaration that does not
 * parse is refused naming the image (its builder's mistake, said here
 * rather than as if the client had sent it). */
static int apply_services(skv_proto_session_submit *s,
                          const skv_image_meta *im, skv_error *err)
{
    char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8];
    uint32_t port;
    skv_error e = SKV_ERROR_INIT;
    for (size_t i = 0; i < im->n_services; i++) {
        if (skv_proto_service_parse(im->services[i], name, &port, proto, &e))
            return skv__err(err, SKV_EINVAL, "image %s declares a bad "
                            "service: %s", s->image, e.message);
        if (add_port(s, port))
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    if (strv_dup(&s->services, &s->n_services, im->services, im->n_services))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    return 0;
}

int skv__mgr_image_defaults(skv_manager *m, skv_proto_session_submit *s,
                            skv_error *err)
{
    if (!s->image || !s->resource_group ||
        (s->n_command && s->n_services))
        return 0;
    const skv_image_meta *im = image_meta(m, s);
    if (!im)
        return 0;
    int rc = 0;
    if (s->n_services == 0 && im->n_services)
        rc = apply_services(s, im, err);
    if (!rc && s->n_command == 0 &&
        strv_dup(&s->command, &s->n_command, im->command, im->n_command))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    return rc;
}
