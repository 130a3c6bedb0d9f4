"""runsc builds from gVisor's release index, for `harness run` and `harness bisect`.

versions: names and ordering; index: listing (bucket XML API or a folder);
artifacts: download, sha512, cache; install: upload to the host by sha256;
builds: the builds a matrix names by release, for a run. Import the module you
need: the package imports nothing, so a run that names no release never loads httpx.
"""
