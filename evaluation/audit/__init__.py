"""Black-box ε auditing (Arcolezi & Gambs, PETS 2024): Clopper–Pearson bounds, plans, the auditor."""

from ldpsim.evaluation.audit.auditor import (AuditResult, audit_client, audit_mechanism, audit_plan, audit_reports,
                                             default_support, load_callable)
from ldpsim.evaluation.audit.bounds import clopper_pearson, epsilon_lower_bound, trials_to_detect
from ldpsim.evaluation.audit.plans import AuditPlan, plan_for, plan_targets

__all__ = ["AuditPlan", "AuditResult", "audit_client", "audit_mechanism", "audit_plan", "audit_reports",
           "clopper_pearson", "default_support", "epsilon_lower_bound", "load_callable", "plan_for", "plan_targets",
           "trials_to_detect"]
