"""Stage 4, compare: the engines (paired, window) and what drives them: the gate, the history's
steps and windows, bisection, the counting passes, the plan. Imports stages 0-3."""
