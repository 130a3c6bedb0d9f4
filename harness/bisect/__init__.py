"""Find the first runsc build where a verdict changes, by bisecting gVisor releases.

versions: names and ordering; index: listing (bucket XML API or a folder);
artifacts: download, sha512, cache; install: upload to the host by sha256;
search: the pure bisection; session: one bisection's steps; report: text and JSON;
origin: what to bisect, from a results folder. Import the module you need: the
package imports nothing, so reading a bisection's report never loads the runner.
"""
