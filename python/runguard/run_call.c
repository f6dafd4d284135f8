/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One run from Python. The library's own signal handling is off (it would
 * block SIGINT in the calling thread, and Python handles signals in its
 * main thread only); every run gets a cancel pipe instead, registered here
 * so that Pool.cancel() and cancel_all() can end it. The GIL is released
 * while the run waits. In the main thread the run itself goes to a helper
 * thread while the main thread waits interruptibly: a KeyboardInterrupt
 * (any exception a signal handler raises) cancels the run, waits for the
 * library to kill it and clean up, and propagates.
 */
#include "binding.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* how often the main thread looks for signals another thread received */
#define SIGNAL_POLL_MS 100

struct run {
	struct rg_pool *pool; /* NULL: rg_run() */
	const void *owner;    /* the Pool object, for Pool.cancel() */
	struct rg_config *cfg;
	struct rg_result result;
	struct rg_error err;
	enum rg_outcome outcome;
	int cancel_pipe[2]; /* [0] is the run's cancel fd */
	bool cancelled;	    /* under registry_lock */
	int done_fd;	    /* main thread only: the helper is done */
	struct run *next;
	struct run **pprev;
};

/* Runs under way; taken with or without the GIL, never waits for it. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct run *registry;

static void register_run(struct run *r)
{
	pthread_mutex_lock(&registry_lock);
	r->next = registry;
	if (registry)
		registry->pprev = &r->next;
	r->pprev = &registry;
	registry = r;
	pthread_mutex_unlock(&registry_lock);
}

static void unregister_run(struct run *r)
{
	pthread_mutex_lock(&registry_lock);
	*r->pprev = r->next;
	if (r->next)
		r->next->pprev = r->pprev;
	pthread_mutex_unlock(&registry_lock);
}

/* Under registry_lock. The pipe is never full: one byte per run. */
static void cancel_locked(struct run *r)
{
	ssize_t n;

	if (r->cancelled)
		return;
	r->cancelled = true;
	do
		n = write(r->cancel_pipe[1], "c", 1);
	while (n < 0 && errno == EINTR);
}

void rgpy_cancel(const void *owner, bool all)
{
	pthread_mutex_lock(&registry_lock);
	for (struct run *r = registry; r; r = r->next)
		if (all || r->owner == owner)
			cancel_locked(r);
	pthread_mutex_unlock(&registry_lock);
}

static void cancel_one(struct run *r)
{
	pthread_mutex_lock(&registry_lock);
	cancel_locked(r);
	pthread_mutex_unlock(&registry_lock);
}

static void execute(struct run *r)
{
	if (r->pool)
		r->outcome = rg_pool_run(r->pool, r->cfg, &r->result, &r->err);
	else
		r->outcome = rg_run(r->cfg, &r->result, &r->err);
}

static void *helper(void *arg)
{
	struct run *r = arg;
	uint64_t one = 1;
	ssize_t n;

	execute(r);
	do
		n = write(r->done_fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	return NULL;
}

/*
 * The helper blocks the signals Python's main thread should get (and
 * which the library takes out of the command's mask anyway), so the
 * command starts with the caller's signal mask.
 */
static int start_helper(struct run *r, pthread_t *thread)
{
	sigset_t block, old;
	int rc;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(thread, NULL, helper, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void join(pthread_t thread)
{
	Py_BEGIN_ALLOW_THREADS
	pthread_join(thread, NULL);
	Py_END_ALLOW_THREADS
}

/* 0, or -1 with the exception a signal handler raised (run cancelled). */
static int run_interruptibly(struct run *r)
{
	pthread_t thread;
	int rc;

	r->done_fd = eventfd(0, EFD_CLOEXEC);
	if (r->done_fd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	rc = start_helper(r, &thread);
	if (rc != 0) {
		close(r->done_fd);
		errno = rc;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = r->done_fd, .events = POLLIN };
		int n;

		Py_BEGIN_ALLOW_THREADS
		n = poll(&p, 1, SIGNAL_POLL_MS);
		Py_END_ALLOW_THREADS
		if (n > 0)
			break;
		if (PyErr_CheckSignals() < 0) {
			cancel_one(r);
			join(thread);
			close(r->done_fd);
			return -1;
		}
	}
	join(thread);
	close(r->done_fd);
	return 0;
}

static int in_main_thread(void)
{
	PyObject *main = PyObject_CallNoArgs(rgpy.main_thread);
	PyObject *ident;
	int same;

	if (!main)
		return -1;
	ident = PyObject_GetAttrString(main, "ident");
	Py_DECREF(main);
	if (!ident)
		return -1;
	same = PyLong_AsUnsignedLong(ident) == PyThread_get_thread_ident();
	Py_DECREF(ident);
	return same;
}

static int wait_for_run(struct run *r)
{
	int main = in_main_thread();

	if (main < 0)
		return -1;
	if (main)
		return run_interruptibly(r);
	Py_BEGIN_ALLOW_THREADS
	execute(r);
	Py_END_ALLOW_THREADS
	return 0;
}

/* What the caller gets for the outcome: a Result or an exception. */
static PyObject *conclude(struct run *r)
{
	PyObject *result, *cls = NULL;

	if (r->cancelled && (r->outcome == RG_OUTCOME_ERROR ||
			     r->result.received_signal != 0)) {
		struct rg_error e = { .errnum = ECANCELED };

		snprintf(e.message, sizeof(e.message), "the run was cancelled");
		if (r->outcome == RG_OUTCOME_ERROR)
			return rgpy_raise(rgpy.cancelled, &e, NULL);
		result = rgpy_result_new(&r->result);
		if (!result)
			return NULL;
		rgpy_raise(rgpy.cancelled, &e, result);
		Py_DECREF(result);
		return NULL;
	}
	switch (r->outcome) {
	case RG_OUTCOME_COMPLETED:
	case RG_OUTCOME_EXEC_FAILED:
		return rgpy_result_new(&r->result);
	case RG_OUTCOME_SETUP_FAILED:
		cls = rgpy.setup_error;
		break;
	case RG_OUTCOME_CLEANUP_FAILED:
		cls = rgpy.cleanup_error;
		break;
	default:
		/* an outcome newer than this binding counts as an error */
		return rgpy_raise(rgpy.error, &r->err, NULL);
	}
	result = rgpy_result_new(&r->result);
	if (!result)
		return NULL;
	rgpy_raise(cls, &r->err, result);
	Py_DECREF(result);
	return NULL;
}

PyObject *rgpy_run(struct rg_pool *pool, const void *owner, PyObject *config)
{
	struct run r = {
		.pool = pool,
		.owner = owner,
		.result = RG_RESULT_INIT,
		.outcome = RG_OUTCOME_ERROR,
		.cancel_pipe = { -1, -1 },
	};
	PyObject *ret = NULL;

	r.cfg = rgpy_config_build(config);
	if (!r.cfg)
		return NULL;
	if (pipe2(r.cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	rg_config_set_handle_signals(r.cfg, false);
	rg_config_set_cancel_fd(r.cfg, r.cancel_pipe[0]);
	register_run(&r);
	if (wait_for_run(&r) == 0)
		ret = conclude(&r);
	unregister_run(&r);
out:
	if (r.cancel_pipe[0] >= 0) {
		close(r.cancel_pipe[0]);
		close(r.cancel_pipe[1]);
	}
	rg_config_free(r.cfg);
	return ret;
}

PyObject *rgpy_run_func(PyObject *module, PyObject *config)
{
	(void)module;
	return rgpy_run(NULL, NULL, config);
}

PyObject *rgpy_cancel_all(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	rgpy_cancel(NULL, true);
	Py_RETURN_NONE;
}
