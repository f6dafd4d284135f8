/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runguard.Pool: rg_pool_open() once, rg_pool_run() from many threads.
 * The handle is closed only when no run uses it: runs are counted under a
 * mutex that is never held while waiting for the GIL.
 */
#include "binding.h"

#include <pthread.h>

typedef struct {
	PyObject_HEAD
	struct rg_pool *pool;
	PyObject *dir; /* str or None (the default directory) */
	unsigned int size;
	pthread_mutex_t lock;
	pthread_cond_t idle; /* active became 0 */
	unsigned int active; /* runs under way, under lock */
	bool closed;	     /* under lock */
} PoolObject;

static int pool_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	PoolObject *self = (PoolObject *)obj;
	struct rgpy_pool_args pa;
	struct rg_pool *pool;
	struct rg_error err;

	if (self->pool) {
		PyErr_SetString(PyExc_RuntimeError, "the pool is already open");
		return -1;
	}
	if (rgpy_pool_args_parse(args, kwargs, "I|O$Opp:Pool", &pa) < 0)
		return -1;
	Py_BEGIN_ALLOW_THREADS
	pool = rg_pool_open(&pa.opt, &err);
	Py_END_ALLOW_THREADS
	rgpy_pool_args_release(&pa);
	if (!pool) {
		rgpy_raise(rgpy.error, &err, NULL);
		return -1;
	}
	pthread_mutex_lock(&self->lock);
	self->pool = pool;
	self->closed = false;
	pthread_mutex_unlock(&self->lock);
	self->size = pa.opt.size;
	Py_INCREF(pa.dir);
	Py_XSETREF(self->dir, pa.dir);
	return 0;
}

static PyObject *pool_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	PoolObject *self = (PoolObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kwargs;
	if (!self)
		return NULL;
	pthread_mutex_init(&self->lock, NULL);
	pthread_cond_init(&self->idle, NULL);
	self->closed = true; /* until __init__ opened it */
	self->dir = Py_NewRef(Py_None);
	return (PyObject *)self;
}

/* Count a run in; false (and an exception) when the pool is closed. */
static bool enter_run(PoolObject *self)
{
	bool ok;

	pthread_mutex_lock(&self->lock);
	ok = self->pool && !self->closed;
	if (ok)
		self->active++;
	pthread_mutex_unlock(&self->lock);
	if (!ok)
		PyErr_SetString(PyExc_ValueError, "the pool is closed");
	return ok;
}

static void leave_run(PoolObject *self)
{
	pthread_mutex_lock(&self->lock);
	if (--self->active == 0)
		pthread_cond_broadcast(&self->idle);
	pthread_mutex_unlock(&self->lock);
}

static PyObject *pool_run(PyObject *obj, PyObject *config)
{
	PoolObject *self = (PoolObject *)obj;
	PyObject *ret;

	if (!enter_run(self))
		return NULL;
	ret = rgpy_run(self->pool, self, config);
	leave_run(self);
	return ret;
}

static PyObject *pool_cancel(PyObject *self, PyObject *unused)
{
	(void)unused;
	rgpy_cancel(self, false);
	Py_RETURN_NONE;
}

/* No new runs; wait (GIL released) until the runs under way are over. */
static void close_pool(PoolObject *self)
{
	struct rg_pool *pool;

	pthread_mutex_lock(&self->lock);
	self->closed = true;
	Py_BEGIN_ALLOW_THREADS
	while (self->active > 0)
		pthread_cond_wait(&self->idle, &self->lock);
	pool = self->pool;
	self->pool = NULL;
	pthread_mutex_unlock(&self->lock);
	Py_END_ALLOW_THREADS
	if (pool)
		rg_pool_close(pool);
}

static PyObject *pool_close(PyObject *self, PyObject *unused)
{
	(void)unused;
	close_pool((PoolObject *)self);
	Py_RETURN_NONE;
}

static PyObject *pool_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

/* Leaving with an exception (KeyboardInterrupt...) cancels the runs. */
static PyObject *pool_exit(PyObject *self, PyObject *args)
{
	if (PyTuple_GET_SIZE(args) > 0 && PyTuple_GET_ITEM(args, 0) != Py_None)
		rgpy_cancel(self, false);
	close_pool((PoolObject *)self);
	Py_RETURN_FALSE;
}

static void pool_dealloc(PyObject *obj)
{
	PoolObject *self = (PoolObject *)obj;

	/* no run holds a reference: active is 0 */
	if (self->pool)
		rg_pool_close(self->pool);
	pthread_cond_destroy(&self->idle);
	pthread_mutex_destroy(&self->lock);
	Py_XDECREF(self->dir);
	Py_TYPE(obj)->tp_free(obj);
}

static PyObject *pool_get_closed(PyObject *obj, void *closure)
{
	PoolObject *self = (PoolObject *)obj;
	bool closed;

	(void)closure;
	pthread_mutex_lock(&self->lock);
	closed = self->closed;
	pthread_mutex_unlock(&self->lock);
	return PyBool_FromLong(closed);
}

static PyObject *pool_get_dir(PyObject *obj, void *closure)
{
	(void)closure;
	return Py_NewRef(((PoolObject *)obj)->dir);
}

static PyObject *pool_get_size(PyObject *obj, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((PoolObject *)obj)->size);
}

static PyObject *pool_repr(PyObject *obj)
{
	PoolObject *self = (PoolObject *)obj;

	return PyUnicode_FromFormat("<runguard.Pool dir=%R size=%u%s>",
				    self->dir, self->size,
				    self->pool ? "" : " closed");
}

static PyGetSetDef pool_getset[] = {
	{ "dir", pool_get_dir, NULL,
	  "The pool's directory (None: the default, /run/runguard).", NULL },
	{ "size", pool_get_size, NULL, "Slots, as given to Pool().", NULL },
	{ "closed", pool_get_closed, NULL, "close() was called.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef pool_methods[] = {
	{ "run", pool_run, METH_O,
	  "run($self, config, /)\n--\n\n"
	  "Run config in a free slot (waiting while all are busy), the GIL "
	  "released: call it from many threads at once. Raises as "
	  "runguard.run() does." },
	{ "cancel", pool_cancel, METH_NOARGS,
	  "cancel($self, /)\n--\n\n"
	  "Cancel the runs under way in this pool: each is killed and "
	  "cleaned up, and its run() raises Cancelled." },
	{ "close", pool_close, METH_NOARGS,
	  "close($self, /)\n--\n\n"
	  "Refuse new runs, wait for the runs under way, release the handle. "
	  "The pool itself stays (pool_destroy() removes it)." },
	{ "__enter__", pool_enter, METH_NOARGS,
	  "__enter__($self, /)\n--\n\nThe pool itself." },
	{ "__exit__", pool_exit, METH_VARARGS,
	  "__exit__($self, exc_type, exc, tb, /)\n--\n\n"
	  "close(); after an exception, cancel() first." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject rgpy_pool_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "runguard.Pool",
	.tp_basicsize = sizeof(PoolObject),
	.tp_dealloc = pool_dealloc,
	.tp_repr = pool_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Pool(size, dir=None, *, cgroup_parent=None, "
		  "favordynmods=False, keepers=False)\n--\n\n"
		  "A pool of size sandbox slots in dir (None: /run/runguard), "
		  "opened once (rg_pool_open): made, or completed, if needed. "
		  "keepers starts a resident keeper in every free slot (see "
		  "docs/pool.md). A context manager: close() at the end, "
		  "cancel() first after an exception.",
	.tp_methods = pool_methods,
	.tp_getset = pool_getset,
	.tp_init = pool_init,
	.tp_new = pool_new,
};

int rgpy_pool_init_type(PyObject *module)
{
	if (PyType_Ready(&rgpy_pool_type) < 0)
		return -1;
	Py_INCREF(&rgpy_pool_type);
	if (PyModule_AddObject(module, "Pool", (PyObject *)&rgpy_pool_type) <
	    0) {
		Py_DECREF(&rgpy_pool_type);
		return -1;
	}
	return 0;
}
