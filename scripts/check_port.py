"""Say whether a TCP port on this machine is free for `make lab` (stdlib only).

Usage: python3 scripts/check_port.py PORT

Exits 0 when nothing listens on PORT, 1 (with a message naming a free port to
use instead) when something does, 2 on a bad argument.
"""

from __future__ import annotations

import errno
import socket
import sys


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing accepts connections on host:port and it can be bound."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex((host, port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit() or not 0 < int(argv[0]) < 65536:
        print(f"check_port.py: expected one port number 1-65535, got {argv!r}", file=sys.stderr)
        return 2
    port = int(argv[0])
    if port_is_free(port):
        return 0
    suggestion = next((p for p in range(port + 1, min(port + 50, 65536)) if port_is_free(p)), None)
    print(f"\nERROR: port {port} is already in use (another JupyterLab or server is running on it).", file=sys.stderr)
    print("  Stop that program, or start the lab on another port:", file=sys.stderr)
    print(f"    make lab PORT={suggestion or port + 1}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
