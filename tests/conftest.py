"""Shared pytest configuration.

Two tiers: the developer loop is ``pytest -m "not slow"`` (under two minutes serially); the README's
command and CI run everything. A test that takes more than about 1.5 s on the 2-core reference machine
carries ``@pytest.mark.slow`` where it is defined, or ``pytest.param(..., marks=pytest.mark.slow)`` for
one slow case of a parametrized test whose fast cases stay in the loop.

Test modules never import each other or this file: what several share lives in plain helper modules
(:mod:`tests.fleets`: small fleets and scenarios; :mod:`tests.stats`: statistical assertions;
:mod:`tests.report_files`: a run folder for the report's tests; :mod:`tests.tree`: the checkout's own
files), imported as ``tests.<name>`` (the checkout's root is on ``sys.path`` through ``pythonpath``).
"""
