"""Measurement of a deployment run: estimates, budgets, the words use case, designs side by side."""
