"""The running process: wiring.py opens the intake's port first, then the worker side
(worker_side.py: rules, GitHub sessions, handlers, worker) is built on a thread by
deferred_worker.py; credentials.py checks the App at start, heap.py tunes malloc,
endpoints.py lists the HTTP routes.
"""
