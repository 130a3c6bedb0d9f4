# alive PID: the process runs. `kill -0` alone also answers for a zombie, which a
# host whose PID 1 reaps late (or never, in a container whose first process is a
# shell) keeps for a while after the canary died: a dead canary taken for a live
# one would make a leaky sandbox look blocked, and its teardown wait its full second.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  _alive_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)
  case ${_alive_st%% *} in Z|X) return 1;; esac
  return 0
}
