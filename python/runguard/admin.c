/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pool administration: pool_create, pool_destroy, pool_show, pool_prewarm,
 * pool_slot_keeper (include/runguard/pool.h), the GIL released. */
#include "binding.h"

#include <stdlib.h>

static PyTypeObject *pool_info_type, *slot_info_type, *prewarm_type;

static PyStructSequence_Field pool_info_fields[] = {
	{ "size", "slots" },
	{ "cgroup_version", "1 or 2" },
	{ "cgroup_path", "parent of the slot cgroups" },
	{ "favordynmods", "cgroup v1 favordynmods hierarchy in use" },
	{ "created", "seconds since the epoch" },
	{ "slots", "tuple of SlotInfo" },
	{ NULL, NULL },
};

static PyStructSequence_Field slot_info_fields[] = {
	{ "number", "slot number (rg_pool_slot_info.index)" },
	{ "state", "SlotState" },
	{ "holder", "pid of the holder, 0 when free" },
	{ "runs", "runs served" },
	{ "last_reset", "seconds since the epoch, 0: never" },
	{ "settings_known", "memory_limit and cpuset are in force" },
	{ "memory_limit", "bytes, None for none" },
	{ "cpuset", "\"\" for none" },
	{ NULL, NULL },
};

static PyStructSequence_Field prewarm_fields[] = {
	{ "files", "files read" },
	{ "bytes", "bytes brought into the page cache" },
	{ NULL, NULL },
};

static PyStructSequence_Desc pool_info_desc = {
	"runguard.PoolInfo",
	"A pool's state (pool_show()).",
	pool_info_fields,
	6,
};

static PyStructSequence_Desc slot_info_desc = {
	"runguard.SlotInfo",
	"One slot of a pool (PoolInfo.slots).",
	slot_info_fields,
	8,
};

static PyStructSequence_Desc prewarm_desc = {
	"runguard.PrewarmStats",
	"What pool_prewarm() read.",
	prewarm_fields,
	2,
};

/* Set item i of a struct sequence; steals value, -1 if it is NULL. */
static int set_item(PyObject *seq, Py_ssize_t i, PyObject *value)
{
	if (!value)
		return -1;
	PyStructSequence_SetItem(seq, i, value);
	return 0;
}

static PyObject *slot_info(const struct rg_pool_slot_info *s)
{
	PyObject *o = PyStructSequence_New(slot_info_type);
	PyObject *limit;

	if (!o)
		return NULL;
	limit = s->memory_limit == RG_UNLIMITED ?
			Py_NewRef(Py_None) :
			PyLong_FromUnsignedLongLong(s->memory_limit);
	if (set_item(o, 0, PyLong_FromUnsignedLong(s->index)) < 0 ||
	    set_item(o, 1,
		     PyObject_CallFunction(rgpy.slot_state, "i",
					   (int)s->state)) < 0 ||
	    set_item(o, 2, PyLong_FromLong(s->holder)) < 0 ||
	    set_item(o, 3, PyLong_FromUnsignedLongLong(s->runs)) < 0 ||
	    set_item(o, 4, PyLong_FromLongLong(s->last_reset)) < 0 ||
	    set_item(o, 5, PyBool_FromLong(s->settings_known)) < 0 ||
	    set_item(o, 6, limit) < 0 ||
	    set_item(o, 7,
		     PyUnicode_FromStringAndSize(s->cpuset,
						 strnlen(s->cpuset,
							 sizeof(s->cpuset)))) <
		    0) {
		Py_DECREF(o);
		return NULL;
	}
	return o;
}

static PyObject *pool_info(const struct rg_pool_info *info,
			   const struct rg_pool_slot_info *slots)
{
	PyObject *o = PyStructSequence_New(pool_info_type);
	PyObject *list = PyTuple_New(info->size);

	if (!o || !list)
		goto fail;
	for (unsigned int i = 0; i < info->size; i++) {
		PyObject *s = slot_info(&slots[i]);

		if (!s)
			goto fail;
		PyTuple_SET_ITEM(list, i, s);
	}
	if (set_item(o, 0, PyLong_FromUnsignedLong(info->size)) < 0 ||
	    set_item(o, 1, PyLong_FromLong(info->cgroup_version)) < 0 ||
	    set_item(o, 2, PyUnicode_DecodeFSDefault(info->cgroup_path)) < 0 ||
	    set_item(o, 3, PyBool_FromLong(info->favordynmods)) < 0 ||
	    set_item(o, 4, PyLong_FromLongLong(info->created)) < 0)
		goto fail;
	PyStructSequence_SetItem(o, 5, list);
	return o;
fail:
	Py_XDECREF(list);
	Py_XDECREF(o);
	return NULL;
}

static PyObject *pool_show(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dir", NULL };
	struct rg_pool_info info = RG_POOL_INFO_INIT;
	struct rg_pool_slot_info *slots = NULL;
	PyObject *dir = Py_None, *bytes = NULL, *ret;
	struct rg_error err;
	int rc;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:pool_show", kwlist,
					 &dir) ||
	    !rgpy_optional_path(dir, &bytes))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rg_pool_show(bytes ? PyBytes_AS_STRING(bytes) : NULL, &info,
			  &slots, sizeof(*slots), &err);
	Py_END_ALLOW_THREADS
	Py_XDECREF(bytes);
	if (rc < 0)
		return rgpy_raise(rgpy.error, &err, NULL);
	ret = pool_info(&info, slots);
	free(slots);
	return ret;
}

int rgpy_pool_args_parse(PyObject *args, PyObject *kwargs, const char *fmt,
			 struct rgpy_pool_args *pa)
{
	static char *kwlist[] = { "size",	  "dir",     "cgroup_parent",
				  "favordynmods", "keepers", NULL };
	PyObject *parent = Py_None;
	int favordynmods = 0, keepers = 0;

	*pa = (struct rgpy_pool_args){ .opt = RG_POOL_OPTIONS_INIT,
				       .dir = Py_None };
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kwlist,
					 &pa->opt.size, &pa->dir, &parent,
					 &favordynmods, &keepers) ||
	    !rgpy_optional_path(pa->dir, &pa->dir_bytes) ||
	    !rgpy_optional_path(parent, &pa->parent_bytes)) {
		rgpy_pool_args_release(pa);
		return -1;
	}
	pa->opt.dir = pa->dir_bytes ? PyBytes_AS_STRING(pa->dir_bytes) : NULL;
	pa->opt.cgroup_parent = pa->parent_bytes ?
					PyBytes_AS_STRING(pa->parent_bytes) :
					NULL;
	pa->opt.favordynmods = favordynmods;
	pa->opt.keepers = keepers;
	return 0;
}

void rgpy_pool_args_release(struct rgpy_pool_args *pa)
{
	Py_CLEAR(pa->dir_bytes);
	Py_CLEAR(pa->parent_bytes);
}

static PyObject *pool_create(PyObject *module, PyObject *args, PyObject *kw)
{
	struct rgpy_pool_args pa;
	struct rg_error err;
	int rc;

	(void)module;
	if (rgpy_pool_args_parse(args, kw, "I|O$Opp:pool_create", &pa) < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rg_pool_create(&pa.opt, &err);
	Py_END_ALLOW_THREADS
	rgpy_pool_args_release(&pa);
	if (rc < 0)
		return rgpy_raise(rgpy.error, &err, NULL);
	Py_RETURN_NONE;
}

static PyObject *pool_destroy(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dir", "force", NULL };
	PyObject *dir = Py_None, *bytes = NULL;
	struct rg_error err;
	int force = 0, rc;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$p:pool_destroy", kwlist,
					 &dir, &force) ||
	    !rgpy_optional_path(dir, &bytes))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rg_pool_destroy(bytes ? PyBytes_AS_STRING(bytes) : NULL, force,
			     &err);
	Py_END_ALLOW_THREADS
	Py_XDECREF(bytes);
	if (rc < 0)
		return rgpy_raise(rgpy.error, &err, NULL);
	Py_RETURN_NONE;
}

static PyObject *prewarm_stats(const struct rg_prewarm_stats *stats)
{
	PyObject *o = PyStructSequence_New(prewarm_type);

	if (!o)
		return NULL;
	if (set_item(o, 0, PyLong_FromUnsignedLongLong(stats->files)) < 0 ||
	    set_item(o, 1, PyLong_FromUnsignedLongLong(stats->bytes)) < 0) {
		Py_DECREF(o);
		return NULL;
	}
	return o;
}

static PyObject *pool_prewarm(PyObject *module, PyObject *paths)
{
	struct rg_prewarm_stats stats = RG_PREWARM_STATS_INIT;
	PyObject *seq, **bytes = NULL, *ret = NULL;
	const char **argv = NULL;
	Py_ssize_t n, done = 0;
	struct rg_error err;
	int rc;

	(void)module;
	if (PyUnicode_Check(paths) || PyBytes_Check(paths)) {
		PyErr_SetString(PyExc_TypeError,
				"pool_prewarm() takes a list of paths");
		return NULL;
	}
	seq = PySequence_Fast(paths, "pool_prewarm() takes a list of paths");
	if (!seq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	bytes = PyMem_Calloc((size_t)n + 1, sizeof(*bytes));
	argv = PyMem_Calloc((size_t)n + 1, sizeof(*argv));
	if (!bytes || !argv) {
		PyErr_NoMemory();
		goto out;
	}
	for (; done < n; done++) {
		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, done),
					   &bytes[done]))
			goto out;
		argv[done] = PyBytes_AS_STRING(bytes[done]);
	}
	Py_BEGIN_ALLOW_THREADS
	rc = rg_pool_prewarm(argv, (size_t)n, &stats, &err);
	Py_END_ALLOW_THREADS
	ret = rc < 0 ? rgpy_raise(rgpy.error, &err, NULL) :
		       prewarm_stats(&stats);
out:
	for (Py_ssize_t i = 0; i < done; i++)
		Py_DECREF(bytes[i]);
	PyMem_Free(bytes);
	PyMem_Free(argv);
	Py_DECREF(seq);
	return ret;
}

static PyObject *pool_slot_keeper(PyObject *module, PyObject *args,
				  PyObject *kw)
{
	static char *kwlist[] = { "index", "dir", NULL };
	PyObject *dir = Py_None, *bytes = NULL;
	unsigned int index;
	struct rg_error err;
	pid_t pid = 0;
	int rc;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "I|O:pool_slot_keeper",
					 kwlist, &index, &dir) ||
	    !rgpy_optional_path(dir, &bytes))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rg_pool_slot_keeper(bytes ? PyBytes_AS_STRING(bytes) : NULL,
				 index, &pid, &err);
	Py_END_ALLOW_THREADS
	Py_XDECREF(bytes);
	if (rc < 0)
		return rgpy_raise(rgpy.error, &err, NULL);
	if (pid == 0)
		Py_RETURN_NONE;
	return PyLong_FromLong(pid);
}

#define KW(f) ((PyCFunction)(void (*)(void))(f))

PyMethodDef rgpy_admin_methods[] = {
	{ "pool_create", KW(pool_create), METH_VARARGS | METH_KEYWORDS,
	  "pool_create($module, /, size, dir=None, *, cgroup_parent=None, "
	  "favordynmods=False, keepers=False)\n--\n\n"
	  "Create the pool, or complete a half-made one (idempotent)." },
	{ "pool_destroy", KW(pool_destroy), METH_VARARGS | METH_KEYWORDS,
	  "pool_destroy($module, /, dir=None, *, force=False)\n--\n\n"
	  "Remove the pool's slots, namespaces, mounts, cgroups and files. "
	  "Raises Error (EBUSY) while a slot is held, unless force: then "
	  "the runs in held slots are killed." },
	{ "pool_show", KW(pool_show), METH_VARARGS | METH_KEYWORDS,
	  "pool_show($module, /, dir=None)\n--\n\n"
	  "The pool's state, without changing it (Error with ENOENT when "
	  "there is no pool)." },
	{ "pool_prewarm", pool_prewarm, METH_O,
	  "pool_prewarm($module, paths, /)\n--\n\n"
	  "Bring the files (directories: every regular file below them) "
	  "into the page cache, charged to the caller's cgroup." },
	{ "pool_slot_keeper", KW(pool_slot_keeper), METH_VARARGS | METH_KEYWORDS,
	  "pool_slot_keeper($module, /, index, dir=None)\n--\n\n"
	  "The pid of slot index's keeper, None when it has none, -1 when "
	  "it is alive but too busy to answer." },
	{ NULL, NULL, 0, NULL },
};

static int add_struct_type(PyObject *module, PyTypeObject **type,
			   PyStructSequence_Desc *desc)
{
	*type = PyStructSequence_NewType(desc);
	if (!*type)
		return -1;
	/* the name after the dot is what the module exports */
	return PyModule_AddObjectRef(module, strrchr(desc->name, '.') + 1,
				     (PyObject *)*type);
}

int rgpy_admin_init(PyObject *module)
{
	if (add_struct_type(module, &pool_info_type, &pool_info_desc) < 0 ||
	    add_struct_type(module, &slot_info_type, &slot_info_desc) < 0 ||
	    add_struct_type(module, &prewarm_type, &prewarm_desc) < 0)
		return -1;
	return 0;
}
