"""Find the first runsc build where a verdict changes, by bisecting gVisor releases.

search: the pure bisection; steps: what a bisection records (its target, each
step, the whole report); session: running one bisection's steps; report: text and
JSON; origin: what to bisect, from a results folder. The builds themselves (index,
cache, install) are `harness.releases`'s. Import the module you need: the package
imports nothing, so reading a bisection's report never loads the runner.
"""
