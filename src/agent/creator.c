/* Background creation of containers. Creating one is mostly waiting: for
 * the shim's fork, for the container's first process to mount its root
 * and report, for the record's fsync. Done one at a time on the agent's
 * thread, that wait bounded an agent to one create in flight while the
 * machine's cores sat idle; here a few workers create containers side by
 * side, each with its own runtime handle (a skv_runtime is one thread's),
 * and the agent's thread answers the manager when a job is finished.
 * Workers touch nothing of the agent but the job they hold: the resources
 * are taken, the spec built and the record rendered before the job is
 * queued, and the result is read back on the agent's thread.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent_internal.h"

#define CREATOR_THREADS_MAX 64

struct skv__agent_creator {
    pthread_mutex_t mu;
    pthread_cond_t work;            /* a job was queued, or stop */
    pthread_cond_t done_cv;         /* a job was finished */
    skv__agent_job *todo, *todo_tail, *done, *done_tail;
    size_t outstanding;             /* queued or running */
    bool stop;
    pthread_t *threads;
    skv_runtime **rts;
    unsigned n;                     /* threads started */
    void (*wake)(void *payload);
    void *wake_payload;
};

typedef struct worker_arg {
    skv__agent_creator *c;
    skv_runtime *rt;
} worker_arg;

static void push(skv__agent_job **head, skv__agent_job **tail,
                 skv__agent_job *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

static skv__agent_job *pop(skv__agent_job **head, skv__agent_job **tail)
{
    skv__agent_job *j = *head;
    if (j && !(*head = j->next))
        *tail = NULL;
    return j;
}

/* Record first (a crash after this finds the kernel on restart), then the
 * container, started. Any failure undoes what this job did. */
static void run_job(skv_runtime *rt, skv__agent_job *j)
{
    const char *id = j->k->req.kernel_id;
    j->err = (skv_error)SKV_ERROR_INIT;
    j->rc = skv__agent_record_store(&j->rec, &j->err);
    if (j->rc == 0)
        j->rc = skv_runtime_create(rt, j->spec, &j->err);
    if (j->rc == 0 && (j->rc = skv_runtime_start(rt, id, &j->err)) != 0)
        skv_runtime_destroy(rt, id, 0, NULL);
    if (j->rc && unlink(j->rec.path) < 0 && errno != ENOENT)
        skv__log(SKV_LOG_WARN, "agent", "cannot remove %s: %s", j->rec.path,
                 strerror(errno));
}

/* The next job, or NULL once stopped with nothing left to do. */
static skv__agent_job *next_job(skv__agent_creator *c)
{
    pthread_mutex_lock(&c->mu);
    while (!c->todo && !c->stop)
        pthread_cond_wait(&c->work, &c->mu);
    skv__agent_job *j = pop(&c->todo, &c->todo_tail);
    pthread_mutex_unlock(&c->mu);
    return j;
}

static void *worker_main(void *arg)
{
    skv__agent_creator *c = ((worker_arg *)arg)->c;
    skv_runtime *rt = ((worker_arg *)arg)->rt;
    skv__free(arg);
    skv__agent_job *j;
    while ((j = next_job(c)) != NULL) {
        run_job(rt, j);
        pthread_mutex_lock(&c->mu);
        push(&c->done, &c->done_tail, j);
        c->outstanding--;
        pthread_cond_broadcast(&c->done_cv);
        pthread_mutex_unlock(&c->mu);
        /* Outside the lock: the host's wake-up may take locks of its own. */
        if (c->wake)
            c->wake(c->wake_payload);
    }
    return NULL;
}

static int start_worker(skv__agent_creator *c, const skv_runtime_options *ro,
                        skv_error *err)
{
    worker_arg *w = skv__calloc(1, sizeof(*w));
    if (!w)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    w->c = c;
    int rc = skv_runtime_open(&w->rt, ro, err);
    if (rc) {
        skv__free(w);
        return rc;
    }
    c->rts[c->n] = w->rt;
    int e = pthread_create(&c->threads[c->n], NULL, worker_main, w);
    if (e) {
        skv_runtime_free(w->rt);
        skv__free(w);
        return skv__err_sys(err, e, "agent: cannot start a creator thread");
    }
    c->n++;
    return 0;
}

int skv__agent_creator_open(skv_agent *a, const skv_runtime_options *ro,
                            unsigned nthreads, skv_error *err)
{
    if (nthreads == 0 || nthreads > CREATOR_THREADS_MAX)
        return skv__err(err, SKV_EINVAL, "agent create_threads: %u is not "
                        "in 1..%d", nthreads, CREATOR_THREADS_MAX);
    skv__agent_creator *c = skv__calloc(1, sizeof(*c));
    if (!c)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    a->cr = c;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->done_cv, NULL);
    c->wake = a->wake;
    c->wake_payload = a->wake_payload;
    c->threads = skv__calloc(nthreads, sizeof(*c->threads));
    c->rts = skv__calloc(nthreads, sizeof(*c->rts));
    if (!c->threads || !c->rts)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    int rc = 0;
    for (unsigned i = 0; rc == 0 && i < nthreads; i++)
        rc = start_worker(c, ro, err);
    return rc; /* on failure the caller frees the agent, which closes c */
}

void skv__agent_job_free(skv__agent_job *j)
{
    if (!j)
        return;
    skv_container_spec_free(j->spec);
    skv__agent_record_clear(&j->rec);
    skv__free(j);
}

void skv__agent_creator_close(skv_agent *a)
{
    skv__agent_creator *c = a->cr;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true; /* workers still empty the queue before they end */
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->n; i++)
        pthread_join(c->threads[i], NULL);
    for (unsigned i = 0; i < c->n; i++)
        skv_runtime_free(c->rts[i]);
    for (size_t i = 0; i < a->njobs; i++) {
        skv__agent_kernel_free(a->jobs[i]->k);
        skv__agent_job_free(a->jobs[i]);
    }
    skv__free(a->jobs);
    a->jobs = NULL;
    a->njobs = 0;
    pthread_cond_destroy(&c->done_cv);
    pthread_cond_destroy(&c->work);
    pthread_mutex_destroy(&c->mu);
    skv__free(c->threads);
    skv__free(c->rts);
    skv__free(c);
    a->cr = NULL;
}

int skv__agent_creator_submit(skv_agent *a, skv__agent_job *j,
                              skv_error *err)
{
    skv__agent_creator *c = a->cr;
    skv__agent_job **g = skv__reallocarray(a->jobs, a->njobs + 1,
                                           sizeof(*a->jobs));
    if (!g)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    a->jobs = g;
    a->jobs[a->njobs++] = j;
    pthread_mutex_lock(&c->mu);
    push(&c->todo, &c->todo_tail, j);
    c->outstanding++;
    pthread_cond_signal(&c->work);
    pthread_mutex_unlock(&c->mu);
    return 0;
}

static void unlist(skv_agent *a, const skv__agent_job *j)
{
    for (size_t i = 0; i < a->njobs; i++)
        if (a->jobs[i] == j) {
            a->jobs[i] = a->jobs[--a->njobs];
            return;
        }
}

skv__agent_job *skv__agent_creator_take(skv_agent *a, bool wait)
{
    skv__agent_creator *c = a->cr;
    if (!c || a->njobs == 0)
        return NULL;
    pthread_mutex_lock(&c->mu);
    while (wait && !c->done && c->outstanding > 0)
        pthread_cond_wait(&c->done_cv, &c->mu);
    skv__agent_job *j = pop(&c->done, &c->done_tail);
    pthread_mutex_unlock(&c->mu);
    if (j)
        unlist(a, j);
    return j;
}

skv__agent_job *skv__agent_job_find(const skv_agent *a, const char *kid)
{
    for (size_t i = 0; kid && i < a->njobs; i++)
        if (strcmp(a->jobs[i]->k->req.kernel_id, kid) == 0)
            return a->jobs[i];
    return NULL;
}
