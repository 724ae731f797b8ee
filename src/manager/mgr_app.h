/* Service apps on the manager (mgr_app*.c): the services a session
 * declared, the tokens its owner gets for them, and what the app proxy
 * resolves a token to.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_APP_H
#define SKV_MGR_APP_H

#include "mgr_int.h"

/* session.submit: every service parses, names are unique and each port
 * is among the published ports. */
int skv__mgr_app_check_submit(const skv_proto_session_submit *s,
                              skv_error *err);
/* session.show: copy the session's declared services into i. */
int skv__mgr_app_show(skv_manager *m, skv_proto_session_info *i,
                      skv_error *err);
/* A token for user, valid until exp (Unix ms); NULL with err. */
char *skv__mgr_app_token_make(skv_manager *m, const char *sid,
                              const char *svc, const char *user, int64_t exp,
                              skv_error *err);
/* SKV_EPERM unless token is a valid, unexpired token of this session and
 * service; then its user (ucap bytes) and expiry. */
int skv__mgr_app_token_check(skv_manager *m, const char *sid, const char *svc,
                             const char *token, int64_t now_ms,
                             char *user, size_t ucap, int64_t *exp,
                             skv_error *err);
/* Images' own metadata as agents registered it (mgr_image_meta.c). */
int skv__mgr_image_meta_copy(skv_image_meta *to,
                             const skv_proto_image_detail *d);
void skv__mgr_image_meta_free(skv_image_meta *v, size_t n);
/* session.submit naming no command / no services: the image's own (from
 * the first live agent that has the image and reports them), resolved
 * into the body so the stored submit says what runs; the services' ports
 * are added to the published ports. Nothing to apply is not an error. */
int skv__mgr_image_defaults(skv_manager *m, skv_proto_session_submit *s,
                            skv_error *err);
/* The session's SSH private and public key into r (mgr_app_ssh.c). */
int skv__mgr_app_ssh_key(skv_manager *m, const char *sid,
                         skv_proto_app_token_reply *r, skv_error *err);
int skv__mgr_on_app_token(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err);
int skv__mgr_on_app_resolve(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err);
/* mgr_app_activity.c: the proxy's report of sessions it served. */
int skv__mgr_on_app_activity(skv_manager *m, const skv__mgr_call *c,
                             skv_error *err);

#endif
