/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librunguard's log sinks to Python callables: a Config's log (one run's
 * messages) and set_log() (the pool administration calls, rg_set_log).
 * The library calls a sink from the thread that made the call, with the
 * GIL released: the sink takes it.
 */
#include "binding.h"

/* the callable set_log() installed; read and replaced under the GIL */
static PyObject *admin_log;

static void call_sink(PyObject *fn, enum rg_log_level level,
		      const char *message)
{
	PyObject *lvl, *text, *ret = NULL;

	lvl = PyObject_CallFunction(rgpy.log_level, "i", (int)level);
	/* a path in a message need not be UTF-8 */
	text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message),
				    "backslashreplace");
	if (lvl && text)
		ret = PyObject_CallFunctionObjArgs(fn, lvl, text, NULL);
	/* a sink that raises must not end the run: reported, then dropped */
	if (!ret)
		PyErr_WriteUnraisable(fn);
	Py_XDECREF(ret);
	Py_XDECREF(text);
	Py_XDECREF(lvl);
}

void rgpy_log_to_callable(void *callable, enum rg_log_level level,
			  const char *message)
{
	PyGILState_STATE gil = PyGILState_Ensure();

	call_sink(callable, level, message);
	PyGILState_Release(gil);
}

static void log_to_admin(void *unused, enum rg_log_level level,
			 const char *message)
{
	PyGILState_STATE gil = PyGILState_Ensure();
	PyObject *fn = admin_log;

	(void)unused;
	/* our own reference: set_log() may replace it while fn runs */
	if (fn) {
		Py_INCREF(fn);
		call_sink(fn, level, message);
		Py_DECREF(fn);
	}
	PyGILState_Release(gil);
}

/* An int level (LogLevel) in range, else -1 with an exception. */
int rgpy_log_level(PyObject *value)
{
	long level = PyLong_AsLong(value);

	if (level == -1 && PyErr_Occurred())
		return -1;
	if (level < RG_LOG_ERROR || level > RG_LOG_DEBUG) {
		PyErr_Format(PyExc_ValueError,
			     "log level %ld is not a LogLevel", level);
		return -1;
	}
	return (int)level;
}

PyObject *rgpy_set_log(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "callback", "level", NULL };
	PyObject *fn, *level_obj = NULL, *old;
	int level = RG_LOG_NOTICE;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:set_log", kwlist,
					 &fn, &level_obj))
		return NULL;
	if (fn != Py_None && !PyCallable_Check(fn)) {
		PyErr_Format(PyExc_TypeError,
			     "callback: expected a callable "
			     "or None, not %.100s",
			     Py_TYPE(fn)->tp_name);
		return NULL;
	}
	if (level_obj && (level = rgpy_log_level(level_obj)) < 0)
		return NULL;
	old = admin_log;
	admin_log = fn == Py_None ? NULL : Py_NewRef(fn);
	rg_set_log(admin_log ? log_to_admin : NULL, NULL,
		   (enum rg_log_level)level);
	Py_XDECREF(old);
	Py_RETURN_NONE;
}
