"""Black-box ε auditing (Arcolezi & Gambs, PETS 2024): Clopper–Pearson bounds, plans, the auditor.

The names below are imported on first use (PEP 562), so that a module of this package holding names only
(:mod:`.run_names`) can be read without numpy — a command's ``--help`` lists the audit's designs from it.
"""

#: public name → module of this package, imported on first access
_LAZY = {
    "AuditPlan": "plans", "plan_for": "plans", "plan_targets": "plans",
    "AuditResult": "auditor", "audit_client": "auditor", "audit_mechanism": "auditor", "audit_plan": "auditor",
    "audit_reports": "auditor", "default_support": "auditor", "load_callable": "auditor",
    "clopper_pearson": "bounds", "epsilon_lower_bound": "bounds", "trials_to_detect": "bounds",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
