/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runguard._runguard extension: a thin mapping of librunguard's public
 * API (include/runguard) to Python. The package runguard around it holds
 * Config, the enums and the exceptions (runguard/_types.py).
 */
#ifndef RUNGUARD_PY_BINDING_H
#define RUNGUARD_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <runguard/pool.h>
#include <runguard/runguard.h>

/* Objects of runguard._types, looked up once at import. */
struct rgpy_types {
	PyObject *outcome;	 /* Outcome */
	PyObject *limit;	 /* Limit */
	PyObject *slot_state;	 /* SlotState */
	PyObject *log_level;	 /* LogLevel */
	PyObject *error;	 /* Error */
	PyObject *config_error;	 /* ConfigError */
	PyObject *setup_error;	 /* SetupError */
	PyObject *cleanup_error; /* CleanupError */
	PyObject *cancelled;	 /* Cancelled */
	PyObject *main_thread;	 /* threading.main_thread */
	PyObject *config;	 /* runguard.config.Config, looked up late */
};

extern struct rgpy_types rgpy;
extern PyTypeObject rgpy_result_type;
extern PyTypeObject rgpy_pool_type;

/* Raise cls (an Error subclass) from err; returns NULL. */
PyObject *rgpy_raise(PyObject *cls, const struct rg_error *err,
		     PyObject *result);

/* config_convert.c: a new rg_config from a runguard.Config; NULL with an exception */
struct rg_config *rgpy_config_build(PyObject *config);
PyObject *rgpy_check_config(PyObject *module, PyObject *config);

/* result_type.c */
PyObject *rgpy_result_new(const struct rg_result *res);
int rgpy_result_init_type(PyObject *module);

/* run_call.c: one run (pool NULL: rg_run), the GIL released while it waits */
struct rgpy_pool;
PyObject *rgpy_run(struct rg_pool *pool, const void *owner, PyObject *config);
void rgpy_cancel(const void *owner, bool all);
PyObject *rgpy_run_func(PyObject *module, PyObject *config);
PyObject *rgpy_cancel_all(PyObject *module, PyObject *unused);

/* log_sinks.c: librunguard's log sinks to Python callables */
void rgpy_log_to_callable(void *callable, enum rg_log_level level,
			  const char *message);
int rgpy_log_level(PyObject *value);
PyObject *rgpy_set_log(PyObject *module, PyObject *args, PyObject *kwargs);

/* pool_type.c */
int rgpy_pool_init_type(PyObject *module);

/*
 * Pool(...) and pool_create(...) take the same arguments: size, dir=None,
 * *, cgroup_parent=None, favordynmods=False, keepers=False. The strings in
 * opt live until rgpy_pool_args_release().
 */
struct rgpy_pool_args {
	struct rg_pool_options opt;
	PyObject *dir; /* as given (borrowed) */
	PyObject *dir_bytes;
	PyObject *parent_bytes;
};

int rgpy_pool_args_parse(PyObject *args, PyObject *kwargs, const char *fmt,
			 struct rgpy_pool_args *pa);
void rgpy_pool_args_release(struct rgpy_pool_args *pa);

/* admin.c: module functions for pool administration */
extern PyMethodDef rgpy_admin_methods[];
int rgpy_admin_init(PyObject *module);

/* a path argument (str, bytes, PathLike) or None, for "O&" */
int rgpy_optional_path(PyObject *obj, void *out);

#endif
