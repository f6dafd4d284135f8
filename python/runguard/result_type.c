/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runguard.Result: a copy of struct rg_result, read-only. */
#include "binding.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <structmember.h>

#include <runguard/meta.h>

typedef struct {
	PyObject_HEAD
	struct rg_result res;
} ResultObject;

#define RES(self) (&((ResultObject *)(self))->res)

PyObject *rgpy_result_new(const struct rg_result *res)
{
	ResultObject *self = PyObject_New(ResultObject, &rgpy_result_type);

	if (!self)
		return NULL;
	self->res = *res;
	return (PyObject *)self;
}

static void result_dealloc(PyObject *self)
{
	PyObject_Free(self);
}

static PyObject *enum_value(PyObject *cls, long value)
{
	return PyObject_CallFunction(cls, "l", value);
}

static PyObject *get_outcome(PyObject *self, void *closure)
{
	(void)closure;
	return enum_value(rgpy.outcome, RES(self)->outcome);
}

static PyObject *get_wall_limit(PyObject *self, void *closure)
{
	(void)closure;
	return enum_value(rgpy.limit, RES(self)->wall_limit);
}

static PyObject *get_cpu_limit(PyObject *self, void *closure)
{
	(void)closure;
	return enum_value(rgpy.limit, RES(self)->cpu_limit);
}

static PyObject *get_cpu_time(PyObject *self, void *closure)
{
	(void)closure;
	if (RES(self)->cpu_time < 0)
		Py_RETURN_NONE;
	return PyFloat_FromDouble(RES(self)->cpu_time);
}

static PyObject *get_memory_method(PyObject *self, void *closure)
{
	const char *m = RES(self)->memory_method;

	(void)closure;
	return PyUnicode_DecodeASCII(m,
				     strnlen(m,
					     sizeof(RES(self)->memory_method)),
				     "replace");
}

static PyObject *get_pool_slot(PyObject *self, void *closure)
{
	(void)closure;
	if (!RES(self)->pooled)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLong(RES(self)->pool_slot);
}

static PyObject *get_stream_bytes(PyObject *self, void *closure)
{
	return PyLong_FromUnsignedLongLong(
		RES(self)->stream_bytes[(intptr_t)closure]);
}

static PyObject *get_stream_truncated(PyObject *self, void *closure)
{
	return PyBool_FromLong(RES(self)->stream_truncated[(intptr_t)closure]);
}

/* A wait of enum rg_wait (closure) in seconds, None when not known. */
static PyObject *get_wait(PyObject *self, void *closure)
{
	intptr_t k = (intptr_t)closure;

	if (!(RES(self)->waits_known & (1u << k)))
		Py_RETURN_NONE;
	return PyFloat_FromDouble(RES(self)->wait_time[k]);
}

/* {"cpu": percent, "io": ..., "memory": ...}, the known ones. */
static PyObject *get_host_pressure(PyObject *self, void *closure)
{
	static const char *const names[] = { "cpu", "io", "memory" };
	PyObject *d = PyDict_New(), *v;

	(void)closure;
	for (int k = 0; d && k < 3; k++) {
		if (!(RES(self)->host_known & (1u << k)))
			continue;
		v = PyFloat_FromDouble(RES(self)->host_pressure[k]);
		if (!v || PyDict_SetItemString(d, names[k], v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

/* A NUL-padded text field, None when empty. */
static PyObject *text_or_none(const char *text, size_t size)
{
	if (!text[0])
		Py_RETURN_NONE;
	return PyUnicode_DecodeASCII(text, strnlen(text, size), "replace");
}

static PyObject *get_wall_time_cause(PyObject *self, void *closure)
{
	(void)closure;
	return text_or_none(RES(self)->wall_time_cause,
			    sizeof(RES(self)->wall_time_cause));
}

static PyObject *get_wait_method(PyObject *self, void *closure)
{
	(void)closure;
	return text_or_none(RES(self)->wait_method,
			    sizeof(RES(self)->wait_method));
}

static PyGetSetDef result_getset[] = {
	{ "outcome", get_outcome, NULL, "How the run ended (Outcome).", NULL },
	{ "wall_limit", get_wall_limit, NULL,
	  "The wall-clock limits the run hit (Limit: SOFT, HARD).", NULL },
	{ "cpu_limit", get_cpu_limit, NULL,
	  "The CPU-time limits the run hit (Limit: SOFT, HARD).", NULL },
	{ "cpu_time", get_cpu_time, NULL,
	  "cgroup CPU time of every process of the run in seconds, None if "
	  "unavailable.",
	  NULL },
	{ "memory_method", get_memory_method, NULL,
	  "How memory_bytes was measured, e.g. "
	  "\"memsw.max_usage_in_bytes\" (\"\" if not read).",
	  NULL },
	{ "pool_slot", get_pool_slot, NULL,
	  "The pool slot the run used, None if not pooled.", NULL },
	{ "stdout_bytes", get_stream_bytes, NULL,
	  "Bytes the command wrote to stdout (dropped ones included).",
	  (void *)RG_STDOUT },
	{ "stderr_bytes", get_stream_bytes, NULL,
	  "Bytes the command wrote to stderr (dropped ones included).",
	  (void *)RG_STDERR },
	{ "stdout_truncated", get_stream_truncated, NULL,
	  "stdout bytes were dropped (stream_limit).", (void *)RG_STDOUT },
	{ "stderr_truncated", get_stream_truncated, NULL,
	  "stderr bytes were dropped (stream_limit).", (void *)RG_STDERR },
	{ "wait_cpu_time", get_wait, NULL,
	  "Seconds some task of the run waited for a CPU; None if unknown.",
	  (void *)RG_WAIT_CPU },
	{ "wait_io_time", get_wait, NULL,
	  "Seconds some task of the run waited for I/O; None if unknown.",
	  (void *)RG_WAIT_IO },
	{ "wait_memory_time", get_wait, NULL,
	  "Seconds some task of the run stalled on memory; None if unknown.",
	  (void *)RG_WAIT_MEMORY },
	{ "host_pressure", get_host_pressure, NULL,
	  "The host's pressure over the run, percent of its window: "
	  "{\"cpu\": ..., \"io\": ..., \"memory\": ...} (known ones).",
	  NULL },
	{ "wall_time_cause", get_wall_time_cause, NULL,
	  "One word for the gap between wall and CPU time (docs/meta-file.md), "
	  "None if the waits are unknown.",
	  NULL },
	{ "wait_method", get_wait_method, NULL,
	  "How the waits were measured, e.g. \"cgroup-psi\"; None.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* clang-format off */
#define M(name, type, doc) \
	{ #name, type, offsetof(ResultObject, res.name), READONLY, doc }
/* clang-format on */

static PyMemberDef result_members[] = {
	M(status, T_INT, "The wait status of the command (wait4())."),
	M(exit_code, T_INT,
	  "Exit status, 128 + signal if killed, 255 if it never ran."),
	M(term_signal, T_INT,
	  "The signal that terminated the command, 0 if it exited."),
	M(received_signal, T_INT,
	  "The signal the supervisor acted on: SIGALRM for the hard wall "
	  "limit, SIGTERM for a cancelled run; 0."),
	M(exec_errno, T_INT, "Why execve() failed (EXEC_FAILED), else 0."),
	M(wall_time, T_DOUBLE, "Wall-clock time in seconds."),
	M(user_time, T_DOUBLE, "User CPU time in seconds."),
	M(sys_time, T_DOUBLE, "System CPU time in seconds."),
	M(memory_bytes, T_ULONGLONG,
	  "Peak memory of the whole run (RAM + swap where accounted)."),
	M(oom_killed, T_BOOL,
	  "The kernel's OOM killer killed a process of the run."),
	M(major_faults, T_ULONGLONG, "Page faults that had to wait for I/O."),
	M(pooled, T_BOOL, "The run used a pool slot."),
	{ NULL, 0, 0, 0, NULL },
};

static int time_type(const char *which, enum rg_time_type *type)
{
	if (strcmp(which, "cpu") == 0)
		*type = RG_TIME_CPU;
	else if (strcmp(which, "wall") == 0)
		*type = RG_TIME_WALL;
	else {
		PyErr_Format(PyExc_ValueError,
			     "time_used must be \"cpu\" or \"wall\", not "
			     "\"%s\"",
			     which);
		return -1;
	}
	return 0;
}

static PyObject *result_time_result(PyObject *self, PyObject *args,
				    PyObject *kwargs)
{
	static char *kwlist[] = { "time_used", NULL };
	const char *which = "cpu";
	enum rg_time_type type;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|s:time_result",
					 kwlist, &which) ||
	    time_type(which, &type) < 0)
		return NULL;
	return PyUnicode_FromString(rg_time_result(RES(self), type));
}

/* The meta keys into a string (open_memstream). */
static PyObject *meta_string(const struct rg_result *res,
			     const struct rg_meta_options *opt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	PyObject *s;
	int rc;

	if (!f)
		return PyErr_SetFromErrno(PyExc_OSError);
	rc = rg_meta_write_result(f, res, opt);
	if (fclose(f) != 0 && rc == 0)
		rc = -1;
	if (rc < 0) {
		free(buf);
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
	free(buf);
	return s;
}

static PyObject *result_meta(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "time_used", "stream_limit_given",
				  "extra_keys", NULL };
	struct rg_meta_options opt = RG_META_OPTIONS_INIT;
	const char *which = "cpu";
	int limit = 0, extra = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$spp:meta", kwlist,
					 &which, &limit, &extra) ||
	    time_type(which, &opt.time_used) < 0)
		return NULL;
	opt.stream_limit_given = limit;
	opt.extra_keys = extra;
	return meta_string(RES(self), &opt);
}

/* meta() written to file: a path (created) or an object with write(). */
static PyObject *result_write_meta(PyObject *self, PyObject *args,
				   PyObject *kwargs)
{
	PyObject *file, *rest, *text, *io, *ret;

	if (PyTuple_GET_SIZE(args) != 1) {
		PyErr_SetString(PyExc_TypeError,
				"write_meta() takes one positional argument, "
				"the file");
		return NULL;
	}
	file = PyTuple_GET_ITEM(args, 0);
	rest = PyTuple_New(0);
	if (!rest)
		return NULL;
	text = result_meta(self, rest, kwargs);
	Py_DECREF(rest);
	if (!text)
		return NULL;
	if (PyObject_HasAttrString(file, "write")) {
		ret = PyObject_CallMethod(file, "write", "O", text);
	} else {
		io = PyImport_ImportModule("io");
		ret = io ? PyObject_CallMethod(io, "open", "Os", file, "w") :
			   NULL;
		Py_XDECREF(io);
		if (ret) {
			PyObject *f = ret, *w;

			w = PyObject_CallMethod(f, "write", "O", text);
			ret = PyObject_CallMethod(f, "close", NULL);
			Py_DECREF(f);
			if (!w)
				Py_CLEAR(ret);
			Py_XDECREF(w);
		}
	}
	Py_DECREF(text);
	if (!ret)
		return NULL;
	Py_DECREF(ret);
	Py_RETURN_NONE;
}

static PyObject *result_repr(PyObject *self)
{
	const struct rg_result *r = RES(self);
	PyObject *outcome = get_outcome(self, NULL), *name, *s;
	char cpu[32], wall[32];

	if (!outcome)
		return NULL;
	name = PyObject_GetAttrString(outcome, "name");
	Py_DECREF(outcome);
	if (!name)
		return NULL;
	if (r->cpu_time < 0)
		snprintf(cpu, sizeof(cpu), "None");
	else
		snprintf(cpu, sizeof(cpu), "%.3f", r->cpu_time);
	snprintf(wall, sizeof(wall), "%.3f", r->wall_time);
	s = PyUnicode_FromFormat("<runguard.Result %U exit_code=%d "
				 "term_signal=%d wall_time=%s cpu_time=%s "
				 "memory_bytes=%llu%s%s%s>",
				 name, r->exit_code, r->term_signal, wall, cpu,
				 (unsigned long long)r->memory_bytes,
				 r->oom_killed ? " oom_killed" : "",
				 r->wall_limit ? " wall_limit" : "",
				 r->cpu_limit ? " cpu_limit" : "");
	Py_DECREF(name);
	return s;
}

static PyMethodDef result_methods[] = {
	{ "time_result", (PyCFunction)(void (*)(void))result_time_result,
	  METH_VARARGS | METH_KEYWORDS,
	  "time_result($self, /, time_used='cpu')\n--\n\n"
	  "DOMjudge's time-result: '', 'soft-timelimit' or 'hard-timelimit', "
	  "judged on the CPU ('cpu') or wall-clock ('wall') limit." },
	{ "meta", (PyCFunction)(void (*)(void))result_meta,
	  METH_VARARGS | METH_KEYWORDS,
	  "meta($self, /, *, time_used='cpu', stream_limit_given=False, "
	  "extra_keys=False)\n--\n\n"
	  "The DOMjudge meta-file keys of this run (rg_meta_write_result)." },
	{ "write_meta", (PyCFunction)(void (*)(void))result_write_meta,
	  METH_VARARGS | METH_KEYWORDS,
	  "write_meta($self, file, /, *, time_used='cpu', "
	  "stream_limit_given=False, extra_keys=False)\n--\n\n"
	  "Write meta() to file: a path (created or truncated) or an object "
	  "with write()." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject rgpy_result_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "runguard.Result",
	.tp_basicsize = sizeof(ResultObject),
	.tp_dealloc = result_dealloc,
	.tp_repr = result_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "What a run used and how it ended (struct rg_result). "
		  "Made by run() and Pool.run(), not by the caller.",
	.tp_methods = result_methods,
	.tp_members = result_members,
	.tp_getset = result_getset,
};

int rgpy_result_init_type(PyObject *module)
{
	if (PyType_Ready(&rgpy_result_type) < 0)
		return -1;
	Py_INCREF(&rgpy_result_type);
	if (PyModule_AddObject(module, "Result",
			       (PyObject *)&rgpy_result_type) < 0) {
		Py_DECREF(&rgpy_result_type);
		return -1;
	}
	return 0;
}
