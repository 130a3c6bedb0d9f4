# host_own WORDS: the host's own stand-ins for the canary, one address a line: its
# default gateways (IPv4 and IPv6) where WORDS has "gateway", the servers its
# resolv.conf names where it has "resolvers" (the caller leaves out loopback,
# link-local and its own addresses).
host_own() {
  case " $1 " in *" gateway "*)
    ip -4 route show default 2>/dev/null | sed -n 's/.* via \([0-9.]*\).*/\1/p'
    ip -6 route show default 2>/dev/null | sed -n 's/.* via \([0-9a-fA-F:]*\).*/\1/p' ;;
  esac
  case " $1 " in *" resolvers "*)
    sed -n 's/^[[:space:]]*nameserver[[:space:]]\{1,\}\([0-9a-fA-F:.]*\).*/\1/p' \
      /etc/resolv.conf 2>/dev/null ;;
  esac
}
